// HTTP client for an OpenAI-compatible server (ours, llama-server, others): streamed
// completions timed on arrival of each SSE event, FIM through /infill, token counting.
// Uses Node's fetch (undici); every time is performance.now() in milliseconds.
import { SseDecoder } from '../../common/net/sse-decoder.js';

export interface Target {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:8080 */
  url: string;
  apiKey?: string;
  /** Sent as "model"; servers with one model ignore it. */
  model: string;
}

export class BenchHttpError extends Error {
  constructor(readonly status: number, readonly path: string, readonly body: string) {
    super(`${path}: HTTP ${status}${body ? `: ${body.slice(0, 300)}` : ''}`);
  }
}

/** Server-reported figures (llama-server's `timings`; ours reports the same names). */
export interface ServerTimings {
  cache_n?: number;
  prompt_n?: number;
  prompt_ms?: number;
  prompt_per_second?: number;
  predicted_n?: number;
  predicted_ms?: number;
  predicted_per_second?: number;
  /** Speculative decoding: draft tokens verified and accepted (llama-server and strata). */
  draft_n?: number;
  draft_n_accepted?: number;
}

export interface CompletionResult {
  /** performance.now() when the request was handed to fetch. */
  sentAt: number;
  /** Send to the first event carrying text (time to first token). */
  ttftMs: number;
  /** Send to the final event (finish_reason or [DONE]). */
  totalMs: number;
  /** Send to the last event carrying text. */
  lastTextMs: number;
  /** Events that carried text (a server may hold back a token, e.g. a partial UTF-8 sequence). */
  textEvents: number;
  /** Tokens produced: usage.completion_tokens, else timings.predicted_n, else textEvents. */
  completionTokens: number;
  completionTokensSource: 'usage' | 'timings' | 'events';
  promptTokens: number | null;
  /** Prompt tokens the server took from its cache (timings.cache_n or usage details), if reported. */
  cachedTokens: number | null;
  timings: ServerTimings | null;
  finishReason: string | null;
  text: string;
  /** SSE comment lines (keep-alives) received. */
  keepAlives: number;
  /**
   * An error event that ended the stream after text had arrived (llama-server does this when
   * random-weight output is not valid UTF-8): the timings up to it stand, tokens are counted
   * from the events. An error before any text throws instead.
   */
  streamError: string | null;
}

export interface CompletionRequest {
  prompt: string;
  maxTokens: number;
  /** Send llama.cpp's "ignore_eos" (only to servers that accept it). */
  ignoreEos: boolean;
  signal?: AbortSignal;
  /** Token ids never to generate (sent as logit_bias [[id, false], ...]). */
  banned?: readonly number[] | null;
  /** More body fields (e.g. llama-server's id_slot). */
  extra?: Record<string, unknown>;
  /** Called at the first text (a scenario that sends the next request once this one decodes). */
  onFirstText?: () => void;
}

/** The logit_bias that bans `ids`, in the [[id, false]] form llama-server and Strata both read. */
export function banBias(ids: readonly number[] | null | undefined): Record<string, unknown> {
  return ids && ids.length > 0 ? { logit_bias: ids.map((id) => [id, false]) } : {};
}

function headers(t: Target): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (t.apiKey) h.authorization = `Bearer ${t.apiKey}`;
  return h;
}

async function failure(res: Response, path: string): Promise<BenchHttpError> {
  let body = '';
  try { body = await res.text(); } catch { /* the status says enough */ }
  return new BenchHttpError(res.status, path, body);
}

/** GET returning parsed JSON, or null when the server lacks the route (any non-2xx) or is unreachable. */
export async function getJson(t: Target, path: string, timeoutMs = 10_000): Promise<unknown> {
  try {
    const res = await fetch(t.url + path, { headers: headers(t), signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) { await res.body?.cancel(); return null; }
    return await res.json();
  } catch {
    return null;
  }
}

/** GET returning text, or null (see getJson). */
export async function getText(t: Target, path: string, timeoutMs = 10_000): Promise<string | null> {
  try {
    const res = await fetch(t.url + path, { headers: headers(t), signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) { await res.body?.cancel(); return null; }
    return await res.text();
  } catch {
    return null;
  }
}

/** POST JSON; throws BenchHttpError on a non-2xx answer. */
export async function postJson(t: Target, path: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
  const res = await fetch(t.url + path, { method: 'POST', headers: headers(t), body: JSON.stringify(body), signal: signal ?? null });
  if (!res.ok) throw await failure(res, path);
  return res.json();
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** One streamed /v1/completions request, timed per SSE event. */
export async function streamCompletion(t: Target, req: CompletionRequest): Promise<CompletionResult> {
  const path = '/v1/completions';
  const body: Record<string, unknown> = {
    model: t.model, prompt: req.prompt, max_tokens: req.maxTokens, temperature: 0,
    stream: true, stream_options: { include_usage: true }, ...banBias(req.banned), ...req.extra,
  };
  if (req.ignoreEos) body.ignore_eos = true;
  const sentAt = performance.now();
  const res = await fetch(t.url + path, { method: 'POST', headers: headers(t), body: JSON.stringify(body), signal: req.signal ?? null });
  if (!res.ok || !res.body) throw await failure(res, path);

  const parser = new SseDecoder();
  const r: CompletionResult = {
    sentAt, ttftMs: Number.NaN, totalMs: Number.NaN, lastTextMs: Number.NaN, textEvents: 0,
    completionTokens: 0, completionTokensSource: 'events', promptTokens: null, cachedTokens: null,
    timings: null, finishReason: null, text: '', keepAlives: 0, streamError: null,
  };
  let usageTokens: number | null = null;
  let done = false;
  const onData = (data: string, now: number): void => {
    if (data === '[DONE]') { done = true; if (Number.isNaN(r.totalMs)) r.totalMs = now - sentAt; return; }
    let j: Record<string, unknown>;
    try { j = JSON.parse(data) as Record<string, unknown>; } catch { throw new Error(`${path}: bad SSE data: ${data.slice(0, 200)}`); }
    if (j.error) {
      const message = `${path}: server error in stream: ${JSON.stringify(j.error).slice(0, 300)}`;
      // Before any text only llama-server's "model produced output that does not match" error
      // says a token exists (its response parser refused it); any other error fails the request.
      const produced = /produced output/i.test(message);
      if (r.textEvents === 0 && !produced) throw new Error(message);
      if (r.textEvents === 0) { r.ttftMs = now - sentAt; r.lastTextMs = r.ttftMs; }
      r.streamError = message;
      r.totalMs = now - sentAt;
      done = true;
      return;
    }
    const choice = (Array.isArray(j.choices) ? j.choices[0] : undefined) as Record<string, unknown> | undefined;
    const delta = choice?.delta as Record<string, unknown> | undefined;
    const text = typeof choice?.text === 'string' ? choice.text : typeof delta?.content === 'string' ? delta.content : '';
    if (text.length > 0) {
      if (r.textEvents === 0) { r.ttftMs = now - sentAt; req.onFirstText?.(); }
      r.textEvents++;
      r.lastTextMs = now - sentAt;
      r.text += text;
    }
    if (typeof choice?.finish_reason === 'string') { r.finishReason = choice.finish_reason; r.totalMs = now - sentAt; }
    const usage = j.usage as Record<string, unknown> | undefined | null;
    if (usage) {
      usageTokens = num(usage.completion_tokens) ?? usageTokens;
      r.promptTokens = num(usage.prompt_tokens) ?? r.promptTokens;
      const details = usage.prompt_tokens_details as Record<string, unknown> | undefined;
      r.cachedTokens = num(details?.cached_tokens) ?? r.cachedTokens;
    }
    if (j.timings && typeof j.timings === 'object') {
      r.timings = j.timings as ServerTimings;
      r.cachedTokens = num(r.timings.cache_n) ?? r.cachedTokens;
    }
  };

  const reader = res.body.getReader();
  let eof = false;
  try {
    while (!done && !eof) {
      const chunk = await reader.read();
      const now = performance.now();
      eof = chunk.done;
      const events = eof ? parser.end() : parser.feed(chunk.value!);
      for (const e of events) { onData(e.data, now); if (done) break; }
    }
  } finally {
    // After [DONE] or an error the rest of the body is not needed: close the connection's stream.
    if (!eof) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  r.keepAlives = parser.commentCount;
  if (Number.isNaN(r.totalMs)) r.totalMs = performance.now() - sentAt;
  if (usageTokens !== null) { r.completionTokens = usageTokens; r.completionTokensSource = 'usage'; }
  else if (num(r.timings?.predicted_n) !== null) { r.completionTokens = r.timings!.predicted_n!; r.completionTokensSource = 'timings'; }
  else r.completionTokens = Math.max(r.textEvents, r.streamError && r.textEvents === 0 ? 1 : 0);
  if (r.textEvents === 0 && r.completionTokens > 0) {
    // Tokens were produced but none carried text (held back or empty): the end is the best bound.
    r.ttftMs = r.totalMs;
    r.lastTextMs = r.totalMs;
  }
  return r;
}

export interface InfillRequest {
  prefix: string;
  suffix: string;
  maxTokens: number;
  ignoreEos: boolean;
  signal?: AbortSignal;
  banned?: readonly number[] | null;
  extra?: Record<string, unknown>;
}

export interface InfillResult {
  latencyMs: number;
  tokens: number | null;
  promptTokens: number | null;
  cachedTokens: number | null;
  timings: ServerTimings | null;
  content: string;
}

/** One non-streamed FIM request to `path` (/infill or /v1/infill), timed end to end. */
export async function infill(t: Target, path: string, req: InfillRequest): Promise<InfillResult> {
  const body: Record<string, unknown> = {
    model: t.model, input_prefix: req.prefix, input_suffix: req.suffix, input_extra: [],
    n_predict: req.maxTokens, max_tokens: req.maxTokens, temperature: 0, stream: false, cache_prompt: true,
    ...banBias(req.banned), ...req.extra,
  };
  if (req.ignoreEos) body.ignore_eos = true;
  const t0 = performance.now();
  const j = await postJson(t, path, body, req.signal) as Record<string, unknown>;
  const latencyMs = performance.now() - t0;
  const timings = (j.timings && typeof j.timings === 'object' ? j.timings : null) as ServerTimings | null;
  const usage = j.usage as Record<string, unknown> | undefined;
  return {
    latencyMs,
    tokens: num(j.tokens_predicted) ?? num(usage?.completion_tokens) ?? num(timings?.predicted_n),
    promptTokens: num(j.tokens_evaluated) ?? num(usage?.prompt_tokens),
    cachedTokens: num(timings?.cache_n),
    timings,
    content: typeof j.content === 'string' ? j.content : '',
  };
}

/**
 * Prompt tokens the server has put through its model so far, cancelled requests' included:
 * ours reports totals.prompt_tokens_computed in its JSON /metrics, llama-server (with
 * --metrics) llamacpp:prompt_tokens_total in Prometheus text. null when neither answers.
 */
export async function scrapePromptComputed(t: Target): Promise<number | null> {
  const text = await getText(t, '/metrics?requests=0');
  if (text === null) return null;
  try {
    const n = (JSON.parse(text) as { totals?: { prompt_tokens_computed?: unknown } }).totals?.prompt_tokens_computed;
    if (typeof n === 'number') return n;
  } catch { /* Prometheus text */ }
  const m = /^llamacpp:prompt_tokens_total(?:\{[^}]*\})?\s+(\S+)$/m.exec(text);
  return m ? Number(m[1]) : null;
}

/** Token count of a text through /tokenize (llama.cpp) or /v1/tokenize; null when neither exists. */
export async function tokenizePath(t: Target): Promise<string | null> {
  for (const path of ['/tokenize', '/v1/tokenize']) {
    try {
      const j = await postJson(t, path, { content: 'hello world', model: t.model }) as Record<string, unknown>;
      if (Array.isArray(j.tokens)) return path;
    } catch { /* try the next */ }
  }
  return null;
}

export async function countTokens(t: Target, path: string, text: string): Promise<number> {
  const j = await postJson(t, path, { content: text, add_special: false, model: t.model }) as Record<string, unknown>;
  if (!Array.isArray(j.tokens)) throw new Error(`${path}: answer has no "tokens" array`);
  return j.tokens.length;
}
