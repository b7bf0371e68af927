// concurrent: N clients send short prompts at the same moment; aggregate output tok/s (tokens
// of the completed requests over first send to last end of those) and TTFT p50/p95 across the
// completed requests of the run.
import { percentile } from '../stats.js';
import { seedOf } from '../prompts.js';
import type { Scenario } from '../types.js';
import { checkLength, complete, completed, emptyRun, metric, nonceFor, rate } from './common.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

export const concurrent: Scenario = {
  name: 'concurrent',
  summary: SCENARIO_MEASURES.concurrent,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const s = ctx.settings;
    const groups: Record<string, unknown>[] = [];
    for (const n of s.concurrentClients) {
      const prompts = await Promise.all(Array.from({ length: n }, (_, i) =>
        ctx.sizer.prose(s.concurrentPrompt, seedOf(`concurrent/${i}`), nonceFor(ctx, `concurrent${n}`, runIndex, i))));
      ctx.progress(`concurrent ${n} clients`);
      const results = completed(await Promise.all(prompts.map((p) => complete(ctx, p.text, s.concurrentGen, out))));
      if (results.length === 0) continue;
      const start = Math.min(...results.map((r) => r.sentAt));
      const end = Math.max(...results.map((r) => r.sentAt + r.totalMs));
      const tokens = results.reduce((sum, r) => sum + r.completionTokens, 0);
      const ttfts = results.map((r) => r.ttftMs);
      const short = results.map((r) => checkLength(r, s.concurrentGen, `concurrent ${n}`)).filter((x): x is string => x !== null);
      if (short.length > 0) out.notes.push(`${short.length} of ${n} clients: ${short[0]}`);
      out.metrics.push(
        metric(`c${n}_output_tok_s`, `${n} clients: output`, 'tok/s', 'higher', rate(tokens, end - start)),
        metric(`c${n}_ttft_p50_ms`, `${n} clients: TTFT p50`, 'ms', 'lower', percentile(ttfts, 50)),
        metric(`c${n}_ttft_p95_ms`, `${n} clients: TTFT p95`, 'ms', 'lower', percentile(ttfts, 95)),
      );
      out.samples[`c${n}_ttft_ms`] = ttfts;
      groups.push({ clients: n, promptTokens: results.map((r) => r.promptTokens), maxTokens: s.concurrentGen, outputTokens: tokens });
    }
    out.conditions = { groups, slots: ctx.info.slots };
    return out;
  },
};
