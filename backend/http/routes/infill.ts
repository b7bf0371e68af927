// POST /v1/infill (and /infill): llama-server's fill-in-the-middle request with the model's
// FIM tokens, at infill priority (before chat in the queue). Stops when the model starts to
// repeat the code after the cursor, and after t_max_predict_ms of decoding once a line is
// complete. A model without FIM tokens gets a clear 400. With n > 1, n candidates share the prompt (read once) and stream by index.
import { parseInfillRequest } from '../../validation/schemas.js';
import { apiError } from '../../validation/errors.js';
import type { AppContext } from '../app-context.js';
import { figuresOf, follow, requireModel, settle, tokenizeParts, withRequest, type TokensEvent } from '../generation.js';
import type { Job } from '../../scheduler/scheduler.js';
import { buildInfillPrompt, fimOrderFor, prefixBudget, SuffixRepeatStop } from '../../infill/infill-prompt.js';
import { checkChoices, requireTextModel } from '../model-checks.js';
import { timingsOf, usageOf } from '../openai-shapes.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

/** Default completion length when the request names none (inline completions are short). */
const DEFAULT_INFILL_TOKENS = 256;
const SNIPPET_SEPARATOR = '\n\n--- snippet ---\n\n';

/** One candidate's text and how it ended: eos (the model ended, or a stop string), limit (max_tokens), suffix (it repeated the code after the cursor), time (t_max_predict_ms). */
class InfillChoice {
  content = '';
  stop: 'eos' | 'limit' | 'suffix' | 'time' = 'eos';
  /** Its end was streamed already (n > 1). */
  told = false;
  readonly stopper: SuffixRepeatStop;
  constructor(suffix: string) { this.stopper = new SuffixRepeatStop(suffix); }
  finish(): 'stop' | 'length' { return this.stop === 'limit' || this.stop === 'time' ? 'length' : 'stop'; }
}

export async function infill(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseInfillRequest(await readJson(req, app.bodies));
  const model = requireModel(app);
  requireTextModel(model);
  checkChoices(body.n, model);
  const fim = model.info.fim;
  if (!fim || fim.prefix < 0 || fim.suffix < 0 || fim.middle < 0) {
    throw apiError('fim_not_supported', `the model '${model.id}' has no fill-in-the-middle tokens (FIM prefix/suffix/middle), so it cannot do infill; use a code model with FIM support`);
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
      throw apiError('context_length_exceeded', `the infill prompt is ${built.tokens.length} tokens and max_tokens ${maxTokens}; together they exceed the context of ${ctx} tokens (--ctx)`, { param: 'max_tokens', n_prompt_tokens: built.tokens.length + maxTokens, n_ctx: ctx });
    }
    const id = `cmpl-${run.rec.id}`;
    const created = Math.floor(Date.now() / 1000);
    // n candidates decode side by side on one prompt read; each has its own suffix stop and end.
    const choices = Array.from({ length: body.n }, () => new InfillChoice(body.inputSuffix));
    const sse = run.sse;
    const chunk = (i: number, text: string, finish: 'stop' | 'length' | null) => ({
      id, object: 'text_completion', created, model: model.id,
      // llama-server's `content` is the one completion's; candidates are told apart by choices[].index.
      ...(i === 0 ? { content: text } : {}), choices: [{ index: i, text, finish_reason: finish }],
    });
    const emit = (i: number, s: string) => {
      if (!s) return;
      choices[i]!.content += s;
      sse?.event(chunk(i, s, null));
    };
    // A candidate the route ends (suffix repeated, time up) says so at once when there are several:
    // the editor shows the first one that ends without waiting for the rest.
    const end = (i: number, type: 'suffix' | 'time', job: Job) => {
      const c = choices[i]!;
      c.stop = type;
      if (type === 'time') emit(i, c.stopper.end());
      if (sse && body.n > 1) { sse.event(chunk(i, '', c.finish())); c.told = true; }
      if (choices.every((x) => x.stop !== 'eos')) job.cancel(choices.some((x) => x.stop === 'time') ? 'length' : 'stop');
    };
    const push = (i: number, piece: string, job: Job) => {
      const c = choices[i]!;
      if (c.stop !== 'eos') return;
      emit(i, c.stopper.push(piece));
      if (c.stopper.stopped) { end(i, 'suffix', job); return; }
      const first = run.rec.firstTokenAt;
      if (body.tMaxPredictMs !== null && first !== null && Date.now() - first > body.tMaxPredictMs && (c.content + piece).includes('\n')) end(i, 'time', job);
    };
    const done = await follow(run, {
      prompt: built.tokens, maxTokens, sampling: body.sampling, stop: body.stop, ignoreEos: body.ignoreEos,
      ...(body.n > 1 ? { n: body.n } : {}),
      ...(body.supersedeKey !== null ? { supersede: { key: body.supersedeKey, holdMs: app.config.infillDelayMs } } : {}),
      ...(body.cachePrompt ? {} : { cachePrompt: false }),
      ...(body.draftMax !== null ? { draftMax: body.draftMax } : {}),
      // --spec auto: an infill answer mostly repeats the code around the cursor, so its own n-grams draft.
      ...(app.config.spec === 'auto' ? { ngram: true } : {}),
    }, {
      onText(piece, job) { push(0, piece, job); },
      ...(body.n > 1 ? { onTokens(ev: TokensEvent, job: Job) { push(ev.choice ?? 0, ev.text, job); } } : {}),
    });
    if (!settle(run, done)) return;
    choices.forEach((c, i) => {
      if (c.stop !== 'eos') return;
      const held = done.choices?.[i]?.text;
      if (held) emit(i, c.stopper.push(held));
      emit(i, c.stopper.end());
      if ((done.choices?.[i]?.finish ?? done.finish) === 'length') c.stop = 'limit';
    });
    const figures = figuresOf(run.rec, done);
    const first = choices[0]!;
    const result = {
      id, object: 'text_completion', created, model: model.id,
      content: first.content, stop: true, stop_type: first.stop, truncated: built.truncated,
      tokens_predicted: done.generated, tokens_evaluated: built.tokens.length, tokens_cached: figures.reused,
      choices: choices.map((c, i) => ({ index: i, text: c.content, logprobs: null, finish_reason: c.finish() })),
      usage: usageOf(figures), timings: timingsOf(figures),
    };
    if (sse) {
      const untold = choices.map((c, i) => ({ c, i })).filter(({ c }) => !c.told);
      sse.event({ ...result, content: '', choices: untold.map(({ c, i }) => ({ index: i, text: '', logprobs: null, finish_reason: c.finish() })) });
      sse.done();
      return;
    }
    sendJson(res, 200, result);
  });
}
