// prefill: uncached prompt reads of ~512, 2K and 8K tokens (a nonce at the start defeats every
// prefix cache); tok/s = prompt tokens / time to the first token. Sizes over a slot's context
// are skipped and said so.
import { seedOf } from '../prompts.js';
import type { Scenario } from '../types.js';
import { CTX_MARGIN, complete, emptyRun, metric, nonceFor, rate } from './common.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

export const prefill: Scenario = {
  name: 'prefill',
  summary: SCENARIO_MEASURES.prefill,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const sizes: Record<string, unknown>[] = [];
    for (const size of ctx.settings.prefillSizes) {
      const limit = ctx.info.ctxPerSlot;
      if (limit !== null && size + 1 + CTX_MARGIN > limit) {
        out.notes.push(`prefill ${size}: skipped, over the context per slot (${limit})`);
        continue;
      }
      const prompt = await ctx.sizer.prose(size, seedOf(`prefill/${size}`), nonceFor(ctx, 'prefill', runIndex, size));
      ctx.progress(`prefill ${size}`);
      const r = await complete(ctx, prompt.text, 1, out);
      if (r.failed) continue;
      const tokens = r.promptTokens ?? prompt.tokens;
      if (r.cachedTokens !== null && r.cachedTokens > 16) out.notes.push(`prefill ${size}: server reused ${r.cachedTokens} cached tokens`);
      out.metrics.push(
        metric(`prefill_${size}_tok_s`, `read ${size} tok`, 'tok/s', 'higher', rate(tokens, r.ttftMs)),
        metric(`prefill_${size}_ttft_ms`, `TTFT ${size} tok`, 'ms', 'lower', r.ttftMs),
      );
      if (r.timings?.prompt_per_second) {
        out.metrics.push(metric(`prefill_${size}_server_tok_s`, `read ${size} tok (server-reported)`, 'tok/s', 'info', r.timings.prompt_per_second));
      }
      sizes.push({ target: size, promptTokens: tokens, sizedTokens: prompt.tokens, cachedTokens: r.cachedTokens });
    }
    out.conditions = { sizes };
    return out;
  },
};
