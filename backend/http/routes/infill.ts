// POST /v1/infill (and /infill): llama-server's fill-in-the-middle request with the model's
// FIM tokens, at infill priority (before chat in the queue). Stops when the model starts to
// repeat the code after the cursor, and after t_max_predict_ms of decoding once a line is
// complete. A model without FIM tokens gets a clear 400.
import { parseInfillRequest } from '../../validation/schemas.js';
import { ApiError } from '../../validation/errors.js';
import type { AppContext } from '../app-context.js';
import { figuresOf, follow, requireModel, settle, tokenizeParts, withRequest } from '../generation.js';
import { buildInfillPrompt, fimOrderFor, prefixBudget, SuffixRepeatStop } from '../../infill/infill-prompt.js';
import { requireTextModel } from '../model-checks.js';
import { timingsOf, usageOf } from '../openai-shapes.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

/** Default completion length when the request names none (inline completions are short). */
const DEFAULT_INFILL_TOKENS = 256;
const SNIPPET_SEPARATOR = '\n\n--- snippet ---\n\n';

export async function infill(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseInfillRequest(await readJson(req, app.config.bodyLimitMib * 1024 * 1024));
  const model = requireModel(app);
  requireTextModel(model);
  const fim = model.info.fim;
  if (!fim || fim.prefix < 0 || fim.suffix < 0 || fim.middle < 0) {
    throw new ApiError(400, `the model '${model.id}' has no fill-in-the-middle tokens (FIM prefix/suffix/middle), so it cannot do infill; use a code model with FIM support`, { code: 'fim_not_supported' });
  }

  await withRequest(app, 'infill', body.stream, res, async (run) => {
    const ctx = model.info.ctx;
    const batch = model.info.batch;
    // Every text of the request in one engine call (prefix, suffix, cursor line, repo header, each
    // extra file's header and text), with the prefix's window found next to the tokenizer.
    const texts = [body.inputPrefix, body.inputSuffix, body.prompt, 'myproject\n',
      ...body.inputExtra.flatMap((e) => [fim.sep >= 0 ? `${e.filename}\n` : SNIPPET_SEPARATOR, e.text])];
    const parts = await tokenizeParts(app, texts, { index: 0, budget: prefixBudget(batch) });
    const [prefix = [], suffix = [], prompt = [], repoHeader = []] = parts.tokens;
    const extra = body.inputExtra.map((_, i) => ({ header: parts.tokens[4 + 2 * i] ?? [], text: parts.tokens[5 + 2 * i] ?? [] }));
    const window = parts.window ?? prefix;
    const maxTokens = Math.max(1, Math.min(body.maxTokens ?? DEFAULT_INFILL_TOKENS, Math.floor(ctx / 2)));
    const built = buildInfillPrompt(fim, model.bosPrefix, {
      extra, repoHeader, prefix: window, prefixCut: window.length < prefix.length, suffix, prompt,
    }, { batch, ctx, maxTokens }, fimOrderFor(model.info.metadata, app.config.fimOrder));
    if (built.tokens.length + maxTokens > ctx) {
      throw new ApiError(400, `the infill prompt is ${built.tokens.length} tokens and max_tokens ${maxTokens}; together they exceed the context of ${ctx} tokens (--ctx)`, { param: 'max_tokens', code: 'context_length_exceeded' });
    }
    const id = `cmpl-${run.rec.id}`;
    const created = Math.floor(Date.now() / 1000);
    const stopper = new SuffixRepeatStop(body.inputSuffix);
    let content = '';
    // eos: the model ended (or a stop string); limit: max_tokens; suffix: it repeated the code after the cursor.
    const stop: { type: 'eos' | 'limit' | 'suffix' | 'time' } = { type: 'eos' };
    const sse = run.sse;
    const emit = (s: string) => {
      if (!s) return;
      content += s;
      sse?.event({ id, object: 'text_completion', created, model: model.id, content: s, choices: [{ index: 0, text: s, finish_reason: null }] });
    };
    const done = await follow(run, {
      prompt: built.tokens, maxTokens, sampling: body.sampling, stop: body.stop, ignoreEos: body.ignoreEos,
      ...(body.supersedeKey !== null ? { supersede: { key: body.supersedeKey, holdMs: app.config.infillDelayMs } } : {}),
      ...(body.cachePrompt ? {} : { cachePrompt: false }),
    }, {
      onText(piece, job) {
        if (stopper.stopped || stop.type === 'time') return;
        emit(stopper.push(piece));
        if (stopper.stopped) { stop.type = 'suffix'; job.cancel('stop'); return; }
        const first = run.rec.firstTokenAt;
        if (body.tMaxPredictMs !== null && first !== null && Date.now() - first > body.tMaxPredictMs && (content + piece).includes('\n')) {
          stop.type = 'time';
          emit(stopper.end());
          job.cancel('length');
        }
      },
    });
    if (!settle(run, done)) return;
    if (stop.type === 'eos') {
      emit(stopper.end());
      if (done.finish === 'length') stop.type = 'limit';
    }
    const finish: 'stop' | 'length' = stop.type === 'limit' || stop.type === 'time' ? 'length' : 'stop';
    const figures = figuresOf(run.rec, done);
    const result = {
      id, object: 'text_completion', created, model: model.id,
      content, stop: true, stop_type: stop.type, truncated: built.truncated,
      tokens_predicted: done.generated, tokens_evaluated: built.tokens.length, tokens_cached: figures.reused,
      choices: [{ index: 0, text: content, logprobs: null, finish_reason: finish }],
      usage: usageOf(figures), timings: timingsOf(figures),
    };
    if (sse) {
      sse.event({ ...result, content: '', choices: [{ index: 0, text: '', logprobs: null, finish_reason: finish }] });
      sse.done();
      return;
    }
    sendJson(res, 200, result);
  });
}
