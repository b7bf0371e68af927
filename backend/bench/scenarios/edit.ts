// edit: a code file in the prompt and an answer as long as the file (EOS ignored), the shape of a
// code edit, where the answer copies most of its input: speculative decoding's best case. The
// prompt ends with the file's first line, so a model that copies its context continues with the
// rest of the file. Reports decode speed and, when the server speculates, the draft tokens it
// verified and accepted (timings.draft_n / draft_n_accepted, the same fields on llama-server and
// strata). A random-weight model copies nothing: see docs/benchmarks.md, "Speculative decoding", for the workloads that make this
// meaningful (the model as its own draft: the acceptance ceiling).
import { SCENARIO_MEASURES } from '../../../contract/bench.js';
import { codeLines, seedOf } from '../prompts.js';
import type { Scenario } from '../types.js';
import { checkLength, complete, CTX_MARGIN, emptyRun, metric, nonceFor, rate } from './common.js';

/** Prompt tokens beyond the file: the nonce, the two path comments, the first line again. */
const PROMPT_EXTRA = 64;

export const edit: Scenario = {
  name: 'edit',
  summary: SCENARIO_MEASURES.edit,
  async run(ctx, runIndex) {
    const out = emptyRun();
    const s = ctx.settings;
    const lines = codeLines(seedOf('edit/file'), s.editLines);
    const file = lines.join('\n');
    const prompt = `${nonceFor(ctx, 'edit', runIndex)}\n// src/compute.ts\n${file}\n\n// src/compute.ts, reformatted, nothing renamed:\n${lines[0]}\n`;
    const fileTokens = Math.round(s.editLines * ctx.sizer.tokensPerLine);
    // The answer is as long as the file, if the slot has room for the file twice.
    const room = ctx.info.ctxPerSlot === null ? fileTokens : ctx.info.ctxPerSlot - fileTokens - PROMPT_EXTRA - CTX_MARGIN;
    const gen = Math.max(16, Math.min(fileTokens, room));
    if (gen < fileTokens) out.notes.push(`answer capped to ${gen} tokens by the context per slot (${ctx.info.ctxPerSlot})`);
    const r = await complete(ctx, prompt, gen, out);
    if (r.failed) return out;
    const note = checkLength(r, gen, 'edit');
    if (note) out.notes.push(note);
    out.metrics.push(
      metric('edit_decode_tok_s', 'decode', 'tok/s', 'higher', rate(r.completionTokens - 1, r.totalMs - r.ttftMs)),
      metric('edit_ttft_ms', 'TTFT', 'ms', 'lower', r.ttftMs),
      metric('edit_total_ms', 'whole answer', 'ms', 'lower', r.totalMs),
    );
    const drafted = r.timings?.draft_n ?? 0;
    const accepted = r.timings?.draft_n_accepted ?? 0;
    if (drafted > 0) {
      out.metrics.push(
        metric('edit_draft_tokens', 'draft tokens verified', 'tokens', 'info', drafted),
        metric('edit_draft_acceptance', 'drafts accepted', 'ratio', 'info', accepted / drafted),
      );
    } else {
      out.notes.push('the server reported no draft tokens (no speculation configured, or none proposed)');
    }
    out.conditions = {
      fileLines: s.editLines, fileTokensEstimate: fileTokens, maxTokens: gen, promptTokens: r.promptTokens,
      outputTokens: r.completionTokens, draftTokens: drafted, acceptedTokens: accepted,
    };
    return out;
  },
};
