// mixed: short requests arrive while a long prompt (~8K, capped to the context) is being read.
// A server that reads the long prompt in one go makes them wait for all of it; one that
// interleaves prompt chunks answers them at once. Reports short-request TTFT p50/p95 (only
// shorts sent before the long request's first token count), beside a short request alone.
import { percentile } from '../stats.js';
import { seedOf } from '../prompts.js';
import type { Scenario } from '../types.js';
import { at, capToContext, complete, completed, emptyRun, metric, nonceFor, type Attempt } from './common.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

const SHORT_TOKENS = 32;
const SHORT_GEN = 8;

export const mixed: Scenario = {
  name: 'mixed',
  summary: SCENARIO_MEASURES.mixed,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const s = ctx.settings;
    const longTokens = capToContext(ctx, s.mixedLongTokens, 1);
    if (longTokens < s.mixedLongTokens) out.notes.push(`long prompt capped to ${longTokens} tokens by the context per slot (${ctx.info.ctxPerSlot})`);
    const long = await ctx.sizer.prose(longTokens, seedOf('mixed/long'), nonceFor(ctx, 'mixed-long', runIndex));
    const shorts = await Promise.all(Array.from({ length: s.mixedShorts + 1 }, (_, i) =>
      ctx.sizer.prose(SHORT_TOKENS, seedOf(`mixed/short/${i}`), nonceFor(ctx, 'mixed-short', runIndex, i))));

    ctx.progress('mixed: short request alone');
    const alone = await complete(ctx, shorts[0]!.text, SHORT_GEN, out);

    ctx.progress(`mixed: ${s.mixedShorts} short requests during a ${long.tokens}-token read`);
    const longDone = complete(ctx, long.text, 1, out);
    const t0 = performance.now();
    const shortDone: Promise<Attempt>[] = [];
    for (let i = 1; i <= s.mixedShorts; i++) {
      await at(t0 + s.mixedFirstDelayMs + (i - 1) * s.mixedGapMs - performance.now());
      shortDone.push(complete(ctx, shorts[i]!.text, SHORT_GEN, out));
    }
    const [l, ...all] = await Promise.all([longDone, ...shortDone]);
    if (l!.failed) return out;
    const rs = completed(all);
    const longFirstToken = l!.sentAt + l!.ttftMs;
    const during = rs.filter((r) => r.sentAt < longFirstToken);
    if (during.length < rs.length) {
      out.notes.push(`${rs.length - during.length} of ${rs.length} short requests were sent after the long prompt was read (not counted)`);
    }
    const ttfts = during.map((r) => r.ttftMs);
    out.metrics.push(
      metric('mixed_short_ttft_p50_ms', 'short TTFT p50 during long read', 'ms', 'lower', percentile(ttfts, 50)),
      metric('mixed_short_ttft_p95_ms', 'short TTFT p95 during long read', 'ms', 'lower', percentile(ttfts, 95)),
      metric('mixed_short_alone_ttft_ms', 'short TTFT alone', 'ms', 'info', alone.ttftMs),
      metric('mixed_long_ttft_ms', 'long prompt TTFT', 'ms', 'info', l!.ttftMs),
      metric('mixed_shorts_counted', 'short requests counted', 'count', 'info', during.length),
    );
    out.samples.mixed_short_ttft_ms = ttfts;
    out.conditions = {
      longTokens: l!.promptTokens ?? long.tokens, shortTokens: SHORT_TOKENS, shortMaxTokens: SHORT_GEN,
      shorts: s.mixedShorts, firstDelayMs: s.mixedFirstDelayMs, gapMs: s.mixedGapMs,
    };
    return out;
  },
};
