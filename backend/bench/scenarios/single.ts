// single: one streamed request alone: time to first token and decode speed at a fixed output
// length (EOS ignored where the server allows it; the tokens produced are checked).
import { seedOf } from '../prompts.js';
import type { Scenario } from '../types.js';
import { checkLength, complete, emptyRun, metric, nonceFor, rate } from './common.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

export const single: Scenario = {
  name: 'single',
  summary: SCENARIO_MEASURES.single,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const s = ctx.settings;
    const prompt = await ctx.sizer.prose(s.singlePrompt, seedOf('single'), nonceFor(ctx, 'single', runIndex));
    const r = await complete(ctx, prompt.text, s.singleGen, out);
    if (r.failed) return out;
    const note = checkLength(r, s.singleGen, 'single');
    if (note) out.notes.push(note);
    // Decode: tokens after the first over the time from first token to the end of the stream.
    const decode = rate(r.completionTokens - 1, r.totalMs - r.ttftMs);
    out.metrics.push(
      metric('single_ttft_ms', 'TTFT', 'ms', 'lower', r.ttftMs),
      metric('single_decode_tok_s', 'decode', 'tok/s', 'higher', decode),
      metric('single_output_tokens', 'output tokens', 'tokens', 'info', r.completionTokens),
    );
    if (r.timings?.predicted_per_second) {
      out.metrics.push(metric('single_server_decode_tok_s', 'decode (server-reported)', 'tok/s', 'info', r.timings.predicted_per_second));
    }
    out.conditions = {
      promptTokensTarget: s.singlePrompt, promptTokens: r.promptTokens ?? prompt.tokens, maxTokens: s.singleGen,
      ignoreEos: ctx.info.ignoreEos, tokensCountedBy: r.completionTokensSource,
    };
    return out;
  },
};
