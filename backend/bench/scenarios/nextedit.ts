// nextedit: a next-edit answer, the 40-line region rewritten with 1, 3 and 10 lines changed,
// timed to the whole answer with the region as its prediction (OpenAI's `prediction`: the
// unchanged lines are drafted and verified a step at a time) and without any drafting. The prompt
// holds the region and its edited version, and ends with the edited version's header again, so a
// model that copies its context (the hand-set copy test model) answers with the edited region:
// the answer really differs from the prediction in those lines. Each timed request first has its
// prompt read by a one-token request (a next edit's prompt is mostly cached while the user types),
// so the figures are the answer's. A server without predicted outputs (llama-server) ignores the
// field: there the "prediction" run is its own speculation (e.g. --spec-type ngram-simple) alone.
import { SCENARIO_MEASURES } from '../../../contract/bench.js';
import { codeLines, seedOf } from '../prompts.js';
import type { Scenario } from '../types.js';
import { complete, emptyRun, metric, nonceFor } from './common.js';

const REGION_LINES = 40;
const CHANGES = [1, 3, 10] as const;
const END = '\n\n// ';

/** The region with `k` lines changed, spread over it (a number changed, or a comment added). */
export function editedRegion(lines: readonly string[], k: number): string[] {
  const out = [...lines];
  for (let j = 0; j < k; j++) {
    const i = Math.floor(((j + 0.5) * lines.length) / k);
    const line = out[i]!;
    out[i] = /\d+/.test(line) ? line.replace(/\d+/, (d) => String(Number(d) * 3 + 1)) : `${line} // edited`;
  }
  return out;
}

export const nextedit: Scenario = {
  name: 'nextedit',
  summary: SCENARIO_MEASURES.nextedit,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const region = codeLines(seedOf('nextedit/region'), REGION_LINES);
    const gen = Math.round(REGION_LINES * ctx.sizer.tokensPerLine * 1.5) + 32;
    const conditions: Record<string, unknown> = { regionLines: REGION_LINES, maxTokens: gen };
    for (const k of CHANGES) {
      const edited = editedRegion(region, k).join('\n');
      const timed = async (mode: 'plain' | 'pred') => {
        const prompt = `${nonceFor(ctx, `nextedit-${k}-${mode}`, runIndex)}\n// src/compute.ts as it is:\n${region.join('\n')}\n\n// src/compute.ts after the edit:\n${edited}${END}src/compute.ts after the edit:\n`;
        const warm = await complete(ctx, prompt, 1, out, { stop: [END] });
        if (warm.failed) return null;
        const extra = mode === 'plain'
          ? { stop: [END], speculative: { n_max: 0 } }
          : { stop: [END], prediction: { type: 'content', content: `${region.join('\n')}${END}` } };
        const r = await complete(ctx, prompt, gen, out, extra);
        return r.failed ? null : r;
      };
      const plain = await timed('plain');
      const pred = await timed('pred');
      if (!plain || !pred) { out.notes.push(`${k} changed lines: a request failed`); continue; }
      out.metrics.push(
        metric(`nextedit_${k}_plain_ms`, `${k} changed: whole answer, no drafts`, 'ms', 'lower', plain.totalMs),
        metric(`nextedit_${k}_pred_ms`, `${k} changed: whole answer, region as prediction`, 'ms', 'lower', pred.totalMs),
        metric(`nextedit_${k}_speedup`, `${k} changed: speed-up of the prediction`, 'ratio', 'higher', plain.totalMs / pred.totalMs),
      );
      const drafted = pred.timings?.draft_n ?? 0;
      if (drafted > 0) out.metrics.push(metric(`nextedit_${k}_acceptance`, `${k} changed: drafts accepted`, 'ratio', 'info', (pred.timings?.draft_n_accepted ?? 0) / drafted));
      if (pred.text !== plain.text) out.notes.push(`${k} changed lines: the answers with and without the prediction differ`);
      if (plain.text.trimEnd() !== edited.trimEnd()) out.notes.push(`${k} changed lines: the answer is not the edited region (the model does not copy its context)`);
      conditions[`changed${k}`] = { outputTokens: pred.completionTokens, drafted, accepted: pred.timings?.draft_n_accepted ?? 0 };
    }
    out.conditions = conditions;
    return out;
  },
};
