// repeat: a long conversation (~4K tokens), then as many other conversations as there are slots
// at once (so every slot is reused), then the first conversation continues: the TTFT of that
// continuation shows what the server kept of it (a restore from RAM, or a full re-read).
import { seedOf } from '../prompts.js';
import type { Scenario } from '../types.js';
import { capToContext, complete, emptyRun, metric, nonceFor } from './common.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

const ANSWER_TOKENS = 32;
const FOLLOW_UP_TOKENS = 64;
const FILLER_GEN = 8;

export const repeat: Scenario = {
  name: 'repeat',
  summary: SCENARIO_MEASURES.repeat,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const s = ctx.settings;
    const slots = ctx.info.slots ?? 4;
    if (ctx.info.slots === null) out.notes.push('slot count unknown (no /props total_slots, /metrics or --slots): assumed 4');
    const longTokens = capToContext(ctx, s.repeatTokens, ANSWER_TOKENS + FOLLOW_UP_TOKENS + 16);
    if (longTokens < s.repeatTokens) out.notes.push(`conversation capped to ${longTokens} tokens by the context per slot (${ctx.info.ctxPerSlot})`);
    const fillerTokens = capToContext(ctx, s.repeatFillerTokens, FILLER_GEN);

    const first = await ctx.sizer.prose(longTokens, seedOf('repeat/conversation'), nonceFor(ctx, 'repeat', runIndex));
    const fillers = await Promise.all(Array.from({ length: slots }, (_, i) =>
      ctx.sizer.prose(fillerTokens, seedOf(`repeat/other/${i}`), nonceFor(ctx, 'repeat-other', runIndex, i))));
    const followUp = await ctx.sizer.prose(FOLLOW_UP_TOKENS, seedOf('repeat/follow-up'));

    ctx.progress(`repeat: conversation of ${first.tokens} tokens`);
    const a = await complete(ctx, first.text, ANSWER_TOKENS, out);
    if (a.failed) return out;
    ctx.progress(`repeat: ${slots} other conversations`);
    await Promise.all(fillers.map((f) => complete(ctx, f.text, FILLER_GEN, out)));
    ctx.progress('repeat: continuation');
    const c = await complete(ctx, `${first.text}${a.text}\n\n${followUp.text}`, 1, out);
    if (c.failed) return out;

    out.metrics.push(
      metric('repeat_ttft_ms', 'continuation TTFT', 'ms', 'lower', c.ttftMs),
      metric('repeat_first_ttft_ms', 'first read TTFT', 'ms', 'info', a.ttftMs),
      metric('repeat_vs_first', 'continuation / first read', 'ratio', 'info', c.ttftMs / a.ttftMs),
    );
    if (c.cachedTokens !== null) out.metrics.push(metric('repeat_reused_tokens', 'tokens reused', 'tokens', 'info', c.cachedTokens));
    out.conditions = {
      conversationTokens: a.promptTokens ?? first.tokens, answerTokens: a.completionTokens,
      continuationTokens: c.promptTokens, reusedTokens: c.cachedTokens,
      otherConversations: slots, otherTokens: fillerTokens,
    };
    return out;
  },
};
