// nextedit: a next edit's answer drafted from a prediction that differs from it in 1, 3 and 10
// lines: the latency to the whole answer with the prediction (OpenAI's `prediction`: what matches
// is drafted and verified a step at a time, and the draft rejoins after each changed line) against
// the same answer decoded without drafts. The prompt holds a 40-line region and ends with its first
// line again, so a model that copies its context (the hand-set copy test model) answers from the
// region; the answer is decoded once without drafts, and the predictions are that answer with k
// lines changed (a number changed, or a comment added), so the answer really differs from the
// prediction in k lines. The prompt is read before the timed requests (a next edit's prompt is
// mostly cached while the user types), so the figures are the answer's. A server without predicted
// outputs (llama-server) ignores the field, and per-request speculation settings too: there both
// runs are its own speculation (e.g. --spec-type ngram-simple).
import { SCENARIO_MEASURES } from '../../../contract/bench.js';
import { codeLines, seedOf } from '../prompts.js';
import type { Scenario } from '../types.js';
import { complete, emptyRun, metric, nonceFor } from './common.js';

const REGION_LINES = 40;
const CHANGES = [1, 3, 10] as const;

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
    const gen = Math.round(REGION_LINES * ctx.sizer.tokensPerLine);
    const prompt = `${nonceFor(ctx, 'nextedit', runIndex)}\n// src/compute.ts:\n${region.join('\n')}\n\n// src/compute.ts, edited:\n${region[0]}\n`;
    const warm = await complete(ctx, prompt, 1, out);
    if (warm.failed) return out;
    const plain = await complete(ctx, prompt, gen, out, { speculative: { n_max: 0 } });
    if (plain.failed) return out;
    out.metrics.push(metric('nextedit_plain_ms', 'whole answer, no drafts', 'ms', 'lower', plain.totalMs));
    const conditions: Record<string, unknown> = { regionLines: REGION_LINES, maxTokens: gen, outputTokens: plain.completionTokens, promptTokens: plain.promptTokens };
    for (const k of CHANGES) {
      const prediction = editedRegion(plain.text.split('\n'), k).join('\n');
      const r = await complete(ctx, prompt, gen, out, { prediction: { type: 'content', content: prediction } });
      if (r.failed) { out.notes.push(`${k} changed lines: the request failed`); continue; }
      out.metrics.push(
        metric(`nextedit_${k}_pred_ms`, `${k} lines changed: whole answer, drafted from the prediction`, 'ms', 'lower', r.totalMs),
        metric(`nextedit_${k}_speedup`, `${k} lines changed: speed-up over no drafts`, 'ratio', 'higher', plain.totalMs / r.totalMs),
      );
      const drafted = r.timings?.draft_n ?? 0;
      if (drafted > 0) out.metrics.push(metric(`nextedit_${k}_acceptance`, `${k} lines changed: drafts accepted`, 'ratio', 'info', (r.timings?.draft_n_accepted ?? 0) / drafted));
      if (r.text !== plain.text) out.notes.push(`${k} changed lines: the answer with the prediction differs from the one without`);
      conditions[`changed${k}`] = { drafted, accepted: r.timings?.draft_n_accepted ?? 0 };
    }
    out.conditions = conditions;
    return out;
  },
};
