// Runs one generation for a route: books the request, tokenizes its prompt, checks the
// context, queues it, follows the client (a disconnect or a stalled reader cancels the
// request, which frees its slot at once), keeps a waiting stream alive, and hands text to
// the route. The route reads its record (run.rec) and states what it knows through its
// handle (run.request: outcome, reject, clientGone); the scheduler writes the record. The
// handle is closed in a finally, so a record can never leave the bookkeeping while its client
// waits.
//
// Errors, streamed or not, leave in one place (withRequest): before a stream's first byte
// (validation, tokenizing, the context check, a full queue, an engine that is down or dies
// before the first token) as an HTTP status with the JSON error; after it as an SSE `error`
// event that ends the stream without [DONE].
import type { ServerResponse } from 'node:http';
import { ApiError, apiError, toApiError } from '../validation/errors.js';
import { engineCallApiError } from '../validation/engine-errors.js';
import {
  ImageDroppedError, tokenizeChatInput, tokenizeChatPrompt, tokenizeRawPrompt, type ChatInput, type RenderedPrompt,
} from '../chat/chat-prompt.js';
import { MAX_IMAGE_PIXELS } from '../validation/limits.js';
import type { CallName, TokenizedParts } from '../engine/calls.js';
import type { DoneEvent, EngineClient, RequestEvent } from '../engine/client.js';
import type { LatencyHistogram } from '../metrics/latency-histogram.js';
import type { RequestRecord } from '../scheduler/request-ledger.js';
import type { RequestKind } from '../../contract/metrics.js';
import { SchedulerRefusal, type GenerationSpec, type Job, type RequestHandle } from '../scheduler/scheduler.js';
import type { AppContext } from './app-context.js';
import type { ModelView } from '../served-model/model-view.js';
import { ClientConnection } from './client-connection.js';
import { adviseContext, contextFacts } from './context-advice.js';
import type { Figures } from './openai-shapes.js';
import { SseStream } from './sse.js';

export interface GenerationRun {
  app: AppContext;
  /** The request's record, read-only (the scheduler writes it). */
  rec: RequestRecord;
  /** What the route may say about its request. */
  request: RequestHandle;
  model: ModelView;
  conn: ClientConnection;
  /** Present for streamed requests. */
  sse: SseStream | null;
}

export function requireModel(app: AppContext): ModelView {
  const m = app.model();
  if (!m) throw apiError('model_loading', app.scheduler.unavailableReason());
  return m;
}

/** Any ready engine of the model, for the calls that need no slot (tokenize, detokenize, grammar builds); a 503 when none is. */
export function readyEngine(app: AppContext): EngineClient {
  const c = app.scheduler.anyReadyClient();
  if (!c) throw apiError('engine_unavailable', app.scheduler.unavailableReason());
  return c;
}

/**
 * Runs engine calls on a ready engine; a failure is answered by the engine-error table
 * (validation/engine-errors.ts) for `call`, the call the route makes, with `what` saying what failed.
 */
export async function onEngine<T>(app: AppContext, call: CallName, what: string, use: (client: EngineClient) => Promise<T>): Promise<T> {
  const client = readyEngine(app);
  try {
    return await use(client);
  } catch (e) {
    throw engineCallApiError(e, call, what);
  }
}

/** Tokenizes on a ready engine (onEngine). */
function onTokenizer<T>(app: AppContext, tokenize: (client: EngineClient) => Promise<T>): Promise<T> {
  return onEngine(app, 'tokenize', 'the engine could not tokenize the prompt', tokenize);
}

/** Plain texts' tokens in one engine call, and the prefix window of texts[window.index] (infill). */
export function tokenizeParts(app: AppContext, texts: string[], window?: { index: number; budget: number }): Promise<TokenizedParts> {
  return onTokenizer(app, (c) => c.tokenizeParts(texts, window ? { window } : {}));
}

/** A raw prompt's tokens (completions): special tokens parsed, BOS never doubled (chat/chat-prompt.ts). */
export function tokenizeRaw(app: AppContext, model: ModelView, text: string): Promise<number[]> {
  return onTokenizer(app, (c) => tokenizeRawPrompt(c, model, text));
}

/** Client texts with no template (embedding inputs), in one engine call: the vocabulary's BOS/CLS/SEP added, never parsed as control tokens. */
export async function tokenizeInputs(app: AppContext, texts: string[]): Promise<number[][]> {
  return (await onTokenizer(app, (c) => c.tokenizeParts(texts, { addSpecial: true }))).tokens;
}

/** A rendered chat prompt's tokens (special tokens parsed in the template's text only). */
export function tokenizeChat(app: AppContext, prompt: RenderedPrompt): Promise<number[]> {
  return onTokenizer(app, (c) => tokenizeChatPrompt(c, prompt));
}

/**
 * A rendered chat prompt's tokens with its images (chat/chat-prompt.ts tokenizeChatInput): an image
 * the projector cannot read, one over MAX_IMAGE_PIXELS, or a model without a projector is a 400
 * naming the model; the tokenizing itself fails as tokenizeChat does.
 */
export async function tokenizeChatImages(app: AppContext, model: ModelView, prompt: RenderedPrompt): Promise<ChatInput> {
  if (prompt.images.length === 0) return { prompt: await tokenizeChat(app, prompt), images: [] };
  if (!model.info.mmproj) {
    throw apiError('images_not_supported', `the model '${model.id}' reads text only: it was loaded without a projector (--mmproj), so it cannot read images`);
  }
  try {
    return await onEngine(app, 'prepareImage', 'an image could not be read', (c) => tokenizeChatInput(c, prompt, MAX_IMAGE_PIXELS));
  } catch (e) {
    if (e instanceof ImageDroppedError) throw apiError('invalid_image', e.message);
    throw e;
  }
}

/**
 * Books a request, runs `body` and ends the record whatever happens. The route says what it
 * knows through run.request (outcome 'tool_calls'); an ApiError is a refusal: 'rejected' (4xx)
 * or 'error' (scheduler/request-ledger.ts decideEnd weighs it against what else happened).
 * What `body` throws is answered here when the stream has started (an SSE error event), else
 * rethrown for the server's error handler (a status code).
 */
export async function withRequest(
  app: AppContext, kind: RequestKind, stream: boolean, res: ServerResponse,
  body: (run: GenerationRun) => Promise<void>,
): Promise<void> {
  const model = requireModel(app);
  if (app.stopping()) throw apiError('shutting_down');
  const request = app.scheduler.accept(kind, stream);
  const rec = request.record;
  const conn = new ClientConnection(res, app.config.writeStallMs, stream ? app.readers : null);
  const sse = stream
    ? new SseStream(conn, { keepAliveMs: app.config.keepAliveMs, headers: { 'X-Request-Id': String(rec.id) } })
    : null;
  if (!res.headersSent) res.setHeader('X-Request-Id', String(rec.id));
  let threw = false;
  try {
    await body({ app, rec, request, model, conn, sse });
  } catch (e) {
    if (e instanceof ApiError) request.reject(e.status, e.message);
    if (!sse?.isStarted || e instanceof ClientGone) { threw = true; throw e; }
    // The 200 is out: the error becomes the stream's last event.
    const err = toApiError(e);
    if (!(e instanceof ApiError)) app.log.error('request failed mid-stream', { request: rec.id, error: (e as Error)?.stack ?? String(e) });
    request.reject(500, err.message);
    sse.fail(err.toJSON());
  } finally {
    if (conn.gone) request.clientGone();
    const state = rec.state;
    // Still admitting/running here means the route stopped following a live job: a bug.
    if (!request.close()) app.log.error('request left while its engine work was live', { request: rec.id, state });
    sse?.close();
    // Returned without an answer (the client left): nothing to send, drop the connection.
    if (!threw && !res.writableEnded) res.destroy();
  }
}

/**
 * Checks that a prompt fits what one request may hold (a slot's context, or the context the slots
 * share) with room to generate; the 400 says which --ctx (and --slots) would hold it (context-advice.ts).
 */
export function checkContext(tokens: number[], model: ModelView, field: string): void {
  const ctx = model.info.ctx;
  if (tokens.length === 0) throw apiError('empty_prompt', `${field} is empty after tokenization`, { param: field });
  if (tokens.length >= ctx) {
    const which = model.info.kvUnified ? 'the slots share' : 'per slot (--ctx)';
    const advice = adviseContext(contextFacts(model.info, tokens.length)).text;
    throw apiError('context_length_exceeded', `${field} is ${tokens.length} tokens, which does not fit the context of ${ctx} tokens ${which}; ${advice}`, { param: field, n_prompt_tokens: tokens.length, n_ctx: ctx });
  }
}

/**
 * max_tokens: the request's own, else the server's --max-output-tokens (`serverLimit`), else all
 * the room; never more than the room left in the context.
 */
export function maxTokensFor(requested: number | null, promptTokens: number, model: ModelView, serverLimit: number | null = null): number {
  const room = model.info.ctx - promptTokens;
  const asked = requested ?? serverLimit;
  return asked === null ? room : Math.min(asked, room);
}

/** Token ids a request names (logit_bias) must be in the vocabulary: a 400 here, not the engine's refusal later. */
export function checkSamplingTokens(spec: GenerationSpec, model: ModelView): void {
  const vocab = model.info.vocabSize;
  for (const [id] of spec.sampling?.logitBias ?? []) {
    if (id >= vocab) {
      throw apiError('invalid_value', `logit_bias: token id ${id} is outside the vocabulary of ${vocab} tokens (ids 0-${vocab - 1})`, { param: 'logit_bias' });
    }
  }
}

export type TokensEvent = Extract<RequestEvent, { type: 'tokens' }>;

export interface FollowHandlers {
  /** Text as the engine releases it (UTF-8 complete, stop strings withheld). */
  onText(text: string, job: Job): void;
  /**
   * Every tokens event instead of onText, for routes that need more than choice 0's text (the
   * choice index of n > 1, log-probabilities); the 'done' event's withheld text still goes to onText.
   */
  onTokens?(ev: TokensEvent, job: Job): void;
  /** Embedding models: input `index`'s vector. */
  onEmbedding?(index: number, vector: Float32Array): void;
  /** The engine read more of the prompt: llama-server's prompt_progress (return_progress). */
  onProgress?(progress: PromptProgress): void;
}

/** llama-server's prompt_progress: where the prompt read is (cache: tokens reused, as admitted). */
export interface PromptProgress { total: number; cache: number; processed: number; time_ms: number }

/**
 * Queues the job and follows it to its one 'done' (returned). Throws ApiError 503 when it
 * cannot be queued. The route decides what an error 'done' means for its answer.
 */
export async function follow(run: GenerationRun, spec: GenerationSpec, h: FollowHandlers): Promise<DoneEvent> {
  const { app, rec, conn, sse } = run;
  checkSamplingTokens(spec, run.model);
  if (conn.gone) { run.request.clientGone(); throw new ClientGone(); }
  let job: Job;
  try {
    job = run.request.submit(spec);
  } catch (e) {
    if (e instanceof SchedulerRefusal) {
      throw apiError(e.code, e.message);
    }
    throw e;
  }
  conn.onGone((why) => {
    const what = why === 'stalled' ? 'client stopped reading' : why === 'slow' ? `client fell ${conn.lagMs} ms behind the stream (--slow-reader-ms)` : 'client disconnected';
    app.log.info(`${what}; cancelling`, { request: rec.id, state: rec.state });
    job.cancel('disconnected');
  });
  sse?.setWaiting(true);
  let done: DoneEvent | null = null;
  let failure: unknown = null;
  // As the events say it, not as the record is by the time the route reads an event.
  let reused = 0;
  for await (const ev of job.events) {
    if (failure !== null) continue; // draining a cancelled job to its 'done'
    try {
      if (ev.type === 'admitted') reused = ev.reused;
      else if (ev.type === 'progress') {
        sse?.progress();
        h.onProgress?.({ total: ev.total, cache: reused, processed: ev.read, time_ms: rec.admittedAt !== null ? Date.now() - rec.admittedAt : 0 });
      }
      else if (ev.type === 'embedding') {
        h.onEmbedding?.(ev.index, ev.vector);
      } else if (ev.type === 'tokens') {
        sse?.setWaiting(false);
        if (ev.text || h.onTokens) {
          const before = sse?.written ?? 0;
          if (h.onTokens) h.onTokens(ev, job);
          else h.onText(ev.text, job);
          // The server's own overhead, for events whose text went out as SSE bytes. Node's http
          // corks the response and writes it on the next tick, after the step's other events
          // (uncorking at once measured slower with 4 streams): a tick queued now runs just after.
          if (sse && ev.handedAtMs !== undefined && sse.written > before) process.nextTick(observeSince, app.traces.eventToSse, ev.handedAtMs);
        }
      } else if (ev.type === 'done') {
        done = ev;
        if (ev.text && ev.finish !== 'error') h.onText(ev.text, job);
      }
    } catch (e) {
      // The route failed on this text: stop the engine work, wait for its end, then report.
      failure = e;
      job.cancel('cancel');
    }
  }
  sse?.setWaiting(false);
  if (failure !== null) throw failure;
  if (!done) throw new Error('internal: a request ended without its done event');
  return done;
}

function observeSince(h: LatencyHistogram, stampMs: number): void { h.observeSince(stampMs); }

/** Thrown when the client left before the request was queued; nothing to answer. */
export class ClientGone extends Error {
  constructor() { super('the client disconnected'); }
}

/** The error a failed 'done' becomes: 503 when the engine died or the shared context filled, 500 for other engine errors. */
export function doneError(done: DoneEvent): ApiError {
  if (done.engineDied) {
    return apiError('engine_unavailable', done.error ?? 'the engine stopped');
  }
  if (done.errorCode === 'context_full') return apiError('context_full', done.error ?? 'the context the slots share is full');
  return apiError('engine_error', `the engine failed: ${done.error ?? 'unknown error'}`);
}

/** The answer's figures; `predicted`: the request had a prediction (its counts go into the usage). */
export function figuresOf(rec: RequestRecord, done: DoneEvent, predicted = false): Figures {
  return {
    ...(predicted ? { prediction: { accepted: done.predictionAccepted ?? 0, rejected: done.predictionRejected ?? 0 } } : {}),
    promptTokens: done.promptTokens || (rec.promptTokens ?? 0),
    reused: rec.admittedAt !== null || done.finish !== 'error' ? done.reused : null,
    generated: done.generated,
    promptMs: done.promptMs ?? null,
    decodeMs: done.decodeMs ?? null,
    drafted: done.drafted ?? 0,
    accepted: done.accepted ?? 0,
  };
}

/**
 * Deals with a 'done' that is not a normal end (engine error or death, a cancel we did not
 * ask for, shutdown, a client that left). Returns true when the route should answer normally.
 */
export function settle(run: GenerationRun, done: DoneEvent): boolean {
  if (done.finish === 'error') { failRun(run, doneError(done)); return false; }
  if (run.conn.gone) return false;
  const cancelled = run.rec.cancelIntent;
  if (done.finish === 'cancel' && cancelled === 'superseded') {
    failRun(run, apiError('superseded', 'a newer request with the same supersede_key replaced this one', { param: 'supersede_key' }));
    return false;
  }
  if (done.finish === 'cancel' && cancelled !== 'stop' && cancelled !== 'length') {
    const why = cancelled === 'shutdown' ? 'the server is shutting down' : `the engine cancelled the request${done.error ? `: ${done.error}` : ''}`;
    failRun(run, apiError(cancelled === 'shutdown' ? 'shutting_down' : 'engine_unavailable', why));
    return false;
  }
  return true;
}

/** Says why the request failed and throws for withRequest to answer (status code or SSE error event). */
export function failRun(run: GenerationRun, err: ApiError): never {
  run.request.reject(err.status, err.message);
  throw err;
}
