// side: a coding agent's main request (a long prompt) beside its own side request (a title or a
// summary: a short prompt that decodes), the way opencode and Claude Code send them. The main
// request's TTFT alone, sent together with the side request, and sent while the side request
// decodes; the slowdowns are each TTFT over the TTFT alone of the same run.
import { seedOf } from '../prompts.js';
import type { Scenario } from '../types.js';
import { capToContext, complete, emptyRun, metric, nonceFor } from './common.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

const SIDE_TOKENS = 256;
// Enough output that the side request decodes through the main request's whole read.
const SIDE_GEN = 64;
const MAIN_GEN = 4;

export const side: Scenario = {
  name: 'side',
  summary: SCENARIO_MEASURES.side,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const mainTokens = capToContext(ctx, ctx.settings.sideMainTokens, MAIN_GEN);
    if (mainTokens < ctx.settings.sideMainTokens) out.notes.push(`main prompt capped to ${mainTokens} tokens by the context per slot (${ctx.info.ctxPerSlot})`);
    // A new nonce for every request: each main prompt is read whole, none reuses another's KV.
    const prompt = (what: string, tokens: number, i: number) => ctx.sizer.prose(tokens, seedOf(`side/${what}`), nonceFor(ctx, `side-${what}`, runIndex, i));
    const mains = await Promise.all([0, 1, 2].map((i) => prompt('main', mainTokens, i)));
    const sides = await Promise.all([0, 1].map((i) => prompt('side', SIDE_TOKENS, i)));

    ctx.progress(`side: a ${mains[0]!.tokens}-token main request alone`);
    const alone = await complete(ctx, mains[0]!.text, MAIN_GEN, out);

    ctx.progress('side: the main request sent together with its side request');
    const [together, sideTogether] = await Promise.all([
      complete(ctx, mains[1]!.text, MAIN_GEN, out),
      complete(ctx, sides[0]!.text, SIDE_GEN, out),
    ]);

    ctx.progress('side: the main request sent while its side request decodes');
    let sideFirst!: () => void;
    const sideDecoding = new Promise<void>((resolve) => { sideFirst = resolve; });
    const sideBeside = complete(ctx, sides[1]!.text, SIDE_GEN, out, undefined, () => sideFirst());
    await Promise.race([sideDecoding, sideBeside]);
    const beside = await complete(ctx, mains[2]!.text, MAIN_GEN, out);
    const sideB = await sideBeside;

    if (alone.failed || together.failed || beside.failed) return out;
    if (sideB.failed === null && sideB.sentAt + sideB.totalMs < beside.sentAt + beside.ttftMs) {
      out.notes.push('the side request ended before the main request\'s first token (not decoding beside it throughout)');
    }
    out.metrics.push(
      metric('side_main_alone_ttft_ms', 'main request TTFT alone', 'ms', 'lower', alone.ttftMs),
      metric('side_main_together_ttft_ms', 'main TTFT, sent with its side request', 'ms', 'lower', together.ttftMs),
      metric('side_main_beside_ttft_ms', 'main TTFT, sent while the side request decodes', 'ms', 'lower', beside.ttftMs),
      metric('side_together_slowdown', 'main TTFT with side / alone', 'ratio', 'lower', together.ttftMs / alone.ttftMs),
      metric('side_beside_slowdown', 'main TTFT beside decoding side / alone', 'ratio', 'lower', beside.ttftMs / alone.ttftMs),
    );
    if (!sideTogether.failed) out.metrics.push(metric('side_request_total_ms', 'side request (sent with main) whole answer', 'ms', 'info', sideTogether.totalMs));
    out.conditions = {
      mainTokens: alone.promptTokens ?? mains[0]!.tokens, sideTokens: SIDE_TOKENS, sideMaxTokens: SIDE_GEN, mainMaxTokens: MAIN_GEN,
    };
    return out;
  },
};
