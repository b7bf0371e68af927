// The one HTTP client for the Strata server (or any OpenAI-compatible one in remote mode).
// Every request takes an AbortSignal: aborting closes the connection, which makes the server
// cancel the request and free its slot.
import { ChatChunkAssembler } from './chat-stream.js';
import type { ErrorCode } from '../../contract/error-codes.js';
import { contextOverflowOf, type ContextOverflow } from '../../contract/errors.js';
import { parseDevices, parseDevicesAndFit, parseGpuSuggestion, type FitView, type GpuBackendsBody } from '../../contract/devices.js';
import { parseMetrics } from '../../contract/metrics.js';
import { parseRestored, parseSavedSession, parseSessions } from '../../contract/sessions.js';
import { parseRequestTrace, parseTraces } from '../../contract/traces.js';
import { arr, defaultModelSize, errorMessage, obj, parseHealth, parseInfill, parseInfillChunk, parseModels, propsSlotContext, slotContextOf, str } from './normalize.js';
import { parseNextEditBody, type NextEditRequest } from '../../contract/next-edit.js';
import { SseDecoder } from '../../common/net/sse-decoder.js';
import { keyRefusal } from './key-policy.js';
import type { ChatCall, ChatStreamEvent, Health, InfillRequest, InfillResult, InfillStreamEvent, ModelEntry, NextEditResult, ToolSpec } from './types.js';
import type { RestoredSession, SessionInfo } from '../../contract/sessions.js';
import type { RequestTraceView, Traces } from '../../contract/traces.js';
import type { DeviceMemory } from '../../contract/devices.js';
import type { Metrics } from '../../contract/metrics.js';
import type { ChatMessage } from '../../contract/chat.js';

/**
 * One step of a streamed chat answer, plus the model's thinking (reasoning models): the server
 * sends it as delta.reasoning_content, apart from the answer. Callers show it or drop it; it is
 * never part of the answer (and must not go back to the server as conversation).
 */
export type ChatEvent = ChatStreamEvent | { type: 'reasoning'; text: string };

/** The thinking in one chunk: delta.reasoning_content (llama-server, Strata) or delta.reasoning (Ollama, OpenRouter). */
export function reasoningOf(chunk: unknown): string {
  let text = '';
  for (const c of arr(obj(chunk).choices)) {
    const delta = obj(obj(c).delta);
    const r = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : delta.reasoning;
    if (typeof r === 'string') text += r;
  }
  return text;
}

export class StrataApiError extends Error {
  /** `param`: the request field the server named as wrong, when it did; `overflow`: a context overflow's numbers. */
  constructor(message: string, readonly status: number, readonly code: string | null = null, readonly param: string | null = null,
    readonly overflow: ContextOverflow | null = null) {
    super(message);
    this.name = 'StrataApiError';
  }

  /** Whether the server answered with this code of its table (contract/error-codes.ts); never read the message. */
  is(code: ErrorCode): boolean {
    return this.code === code;
  }
}

/** Told when a request that occupies the model starts and ends (status bar "busy"). */
export interface ActivitySink {
  begin(kind: 'chat' | 'infill'): void;
  end(kind: 'chat' | 'infill'): void;
}

export interface ClientOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  /** Send the key over plain http off this machine too (strata.allowInsecureRemote); else such a client refuses to send. */
  allowInsecureKey?: boolean;
  fetch?: typeof fetch;
  activity?: ActivitySink;
  /** Limit for requests that do not stream (ms). */
  timeoutMs?: number;
  /** The `model` chat and infill requests send (a server with several models routes by it). */
  models?: { completion?: string; chat?: string; embedding?: string; rerank?: string; nextEdit?: string };
  /** Where infill requests go: Strata's /v1/infill (the default) or llama-server's /infill. */
  infillPath?: '/v1/infill' | '/infill';
}

/** "http://h:p/v1/" and "http://h:p" both mean the server root. */
export function normalizeBaseUrl(url: string): string {
  let u = url.trim().replace(/\/+$/, '');
  if (u.endsWith('/v1')) u = u.slice(0, -3);
  return u;
}

export function toWireMessage(m: ChatMessage): Record<string, unknown> {
  // Images go as image_url parts after the text (data URLs: nothing for the server to fetch).
  const content = m.images?.length
    ? [...(m.content ? [{ type: 'text', text: m.content }] : []), ...m.images.map((i) => ({ type: 'image_url', image_url: { url: i.dataUrl } }))]
    : m.content;
  const w: Record<string, unknown> = { role: m.role, content };
  if (m.toolCalls?.length) {
    w.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  if (m.toolCallId) w.tool_call_id = m.toolCallId;
  if (m.name) w.name = m.name;
  return w;
}

export function toWireTool(t: ToolSpec): Record<string, unknown> {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters ?? { type: 'object', properties: {} } } };
}

export class StrataClient {
  readonly baseUrl: string;
  /** Sent as Bearer on every request (the managed server's key for this start, or the remote server's). */
  readonly apiKey: string | undefined;
  /** Why the key may not go to this server (plain http off loopback): every request fails with it, none is sent. */
  private readonly keyRefused: string | null;
  private readonly fetchImpl: typeof fetch;
  private readonly activity: ActivitySink | undefined;
  private readonly timeoutMs: number;
  private readonly useModels: NonNullable<ClientOptions['models']>;
  private readonly infillPath: string;

  constructor(opts: ClientOptions) {
    this.infillPath = opts.infillPath ?? '/v1/infill';
    this.useModels = opts.models ?? {};
    this.baseUrl = normalizeBaseUrl(opts.baseUrl);
    this.keyRefused = opts.apiKey ? keyRefusal(this.baseUrl, opts.allowInsecureKey ?? false) : null;
    this.apiKey = this.keyRefused === null ? opts.apiKey || undefined : undefined;
    this.fetchImpl = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.activity = opts.activity;
    this.timeoutMs = opts.timeoutMs ?? 15_000;
  }

  /** `challenge`: asks a server that holds a key to prove it holds it (Health.keyProof). */
  async health(signal?: AbortSignal, challenge?: string): Promise<Health> {
    const res = await this.send('GET', challenge === undefined ? '/health' : `/health?challenge=${encodeURIComponent(challenge)}`, undefined, signal);
    return parseHealth(res.status, await readJson(res));
  }

  async models(signal?: AbortSignal): Promise<ModelEntry[]> {
    return parseModels(await this.json('GET', '/v1/models', undefined, signal));
  }

  /**
   * The chat model's context per slot, as the server reports it: Strata's /v1/models meta.n_ctx
   * for the model chat requests name (else the one with the chat role, else the default), or
   * llama-server's /props default_generation_settings.n_ctx; null when the server says neither.
   */
  async chatSlotContext(signal?: AbortSignal): Promise<number | null> {
    const fromModels = await this.json('GET', '/v1/models', undefined, signal).then((b) => slotContextOf(b, this.useModels.chat), () => null);
    if (fromModels !== null) return fromModels;
    return this.json('GET', '/props', undefined, signal).then(propsSlotContext, () => null);
  }

  async *chatStream(req: ChatCall, signal: AbortSignal): AsyncGenerator<ChatEvent> {
    const body: Record<string, unknown> = {
      model: req.model ?? this.useModels.chat ?? 'strata',
      messages: req.messages.map(toWireMessage),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
    if (req.temperature !== undefined) body.temperature = req.temperature;
    if (req.reasoningEffort !== undefined) body.reasoning_effort = req.reasoningEffort;
    if (req.tools?.length) {
      body.tools = req.tools.map(toWireTool);
      if (req.toolChoice) body.tool_choice = typeof req.toolChoice === 'string' ? req.toolChoice : { type: 'function', function: { name: req.toolChoice.name } };
    }
    this.activity?.begin('chat');
    try {
      const res = await this.send('POST', '/v1/chat/completions', body, signal, true);
      if (!res.ok) throw await apiError(res);
      const chunks = new ChatChunkAssembler();
      for await (const parsed of sseJson(res)) {
        const events = chunks.push(parsed); // throws on an error event before any thinking is shown
        const thinking = reasoningOf(parsed);
        if (thinking) yield { type: 'reasoning', text: thinking };
        yield* events;
      }
      yield* chunks.end();
    } finally {
      this.activity?.end('chat');
    }
  }

  async infill(req: InfillRequest, signal: AbortSignal): Promise<InfillResult> {
    this.activity?.begin('infill');
    try {
      return parseInfill(await this.json('POST', this.infillPath, this.infillBody(req, false), signal, true));
    } finally {
      this.activity?.end('infill');
    }
  }

  /**
   * A streamed infill of `req.n` candidates (one request: the server decodes them side by side on
   * one prompt), as pieces per candidate and each one's end, so the first finished can show at once.
   */
  async *infillStream(req: InfillRequest, signal: AbortSignal): AsyncGenerator<InfillStreamEvent> {
    this.activity?.begin('infill');
    try {
      const res = await this.send('POST', this.infillPath, this.infillBody(req, true), signal, true);
      if (!res.ok) throw await apiError(res);
      for await (const parsed of sseJson(res)) {
        const err = errorMessage(parsed);
        if (err !== null) throw new StrataApiError(err, res.status, str(obj(obj(parsed).error), 'code'));
        yield* parseInfillChunk(parsed);
      }
    } finally {
      this.activity?.end('infill');
    }
  }

  /** POST /v1/edits/next: the editable region rewritten as the model expects the user's next edit. */
  async nextEdit(req: Omit<NextEditRequest, 'model'>, signal: AbortSignal): Promise<NextEditResult> {
    this.activity?.begin('infill');
    try {
      const body: NextEditRequest = { ...(this.useModels.nextEdit !== undefined ? { model: this.useModels.nextEdit } : {}), ...req };
      const r = parseNextEditBody(await this.json('POST', '/v1/edits/next', body, signal, true));
      const details = r.usage.completion_tokens_details;
      return {
        region: r.region, outcome: r.outcome, finishReason: r.finish_reason, completionTokens: r.usage.completion_tokens,
        acceptedPredictionTokens: details.accepted_prediction_tokens,
        rejectedPredictionTokens: details.rejected_prediction_tokens,
      };
    } finally {
      this.activity?.end('infill');
    }
  }

  private infillBody(req: InfillRequest, stream: boolean): Record<string, unknown> {
    return {
      ...(this.useModels.completion !== undefined ? { model: this.useModels.completion } : {}),
      input_prefix: req.prefix,
      input_suffix: req.suffix,
      input_extra: req.extra,
      max_tokens: req.maxTokens,
      t_max_predict_ms: req.maxPredictMs,
      ...(req.supersedeKey !== undefined ? { supersede_key: req.supersedeKey } : {}),
      ...(req.n !== undefined && req.n > 1 ? { n: req.n } : {}),
      stream,
    };
  }

  /** The model embedding and rerank requests name (strata.embeddingModel / strata.rerankModel); undefined: not set. */
  modelFor(use: 'embedding' | 'rerank'): string | undefined {
    return this.useModels[use];
  }

  /** Unit vectors for each text, in order (base64 floats on the wire: a quarter of JSON's size). */
  async embeddings(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const model = this.useModels.embedding;
    const o = obj(await this.json('POST', '/v1/embeddings', { input: texts, encoding_format: 'base64', ...(model ? { model } : {}) }, signal, true));
    const data = arr(o.data).map(obj);
    if (data.length !== texts.length) throw new StrataApiError(`the server answered ${data.length} embeddings for ${texts.length} inputs`, 200);
    const out: Float32Array[] = new Array(texts.length);
    for (const d of data) {
      const i = Number(d.index);
      const e = d.embedding;
      const v = typeof e === 'string' ? floatsFromBase64(e) : Array.isArray(e) ? Float32Array.from(e as number[]) : null;
      if (!v || !Number.isInteger(i) || i < 0 || i >= texts.length) throw new StrataApiError('the server answered /v1/embeddings with an entry that is not a vector', 200);
      out[i] = v;
    }
    return out;
  }

  /** The reranker's score of each document against the query, in the documents' order. */
  async rerank(query: string, documents: string[], signal?: AbortSignal): Promise<number[]> {
    const model = this.useModels.rerank;
    const o = obj(await this.json('POST', '/v1/rerank', { query, documents, top_n: documents.length, ...(model ? { model } : {}) }, signal, true));
    const scores: number[] = new Array(documents.length).fill(NaN);
    for (const r of arr(o.results).map(obj)) {
      const i = Number(r.index);
      if (Number.isInteger(i) && i >= 0 && i < documents.length) scores[i] = Number(r.relevance_score);
    }
    if (scores.some((x) => !Number.isFinite(x))) throw new StrataApiError('the server answered /v1/rerank without a score for every document', 200);
    return scores;
  }

  /**
   * Whether the server has a route: the status an empty POST gets (a route it has answers 400 or
   * 422 for the missing fields; one it lacks 404 or 405, or 501 where llama-server was started
   * without the feature). Nothing is generated: no route accepts an empty body.
   */
  async routeStatus(path: string, signal?: AbortSignal): Promise<number> {
    const res = await this.send('POST', path, {}, signal);
    await res.body?.cancel().catch(() => undefined);
    return res.status;
  }

  /** llama-server's GET /props (context, slots, the chat template's abilities); null where the server has none. */
  async props(signal?: AbortSignal): Promise<Record<string, unknown> | null> {
    const res = await this.send('GET', '/props', undefined, signal);
    if (!res.ok) { await res.body?.cancel().catch(() => undefined); return null; }
    return obj(await readJson(res).catch(() => null));
  }

  /**
   * The positions an image takes in the chat model's prompt: Strata's /v1/messages/count_tokens
   * with the image, less without it. null from a server without that route; a server that refuses
   * the image (no projector, an unreadable file) throws its error.
   */
  async imageTokens(dataUrl: string, signal?: AbortSignal): Promise<number | null> {
    const m = /^data:(image\/[^;,]+);base64,(.*)$/s.exec(dataUrl);
    if (!m) throw new StrataApiError('not a base64 image data URL', 400);
    const model = this.useModels.chat ?? 'strata';
    const count = async (content: unknown): Promise<number | null> => {
      const res = await this.send('POST', '/v1/messages/count_tokens', { model, messages: [{ role: 'user', content }] }, signal);
      if (res.status === 404 || res.status === 405) return null;
      if (!res.ok) throw await apiError(res);
      const n = (await readJson(res) as { input_tokens?: unknown }).input_tokens;
      return typeof n === 'number' ? n : null;
    };
    const [withImage, without] = await Promise.all([
      count([{ type: 'text', text: '.' }, { type: 'image', source: { type: 'base64', media_type: m[1], data: m[2] } }]),
      count('.'),
    ]);
    return withImage === null || without === null ? null : withImage - without;
  }

  async tokenize(text: string, signal?: AbortSignal): Promise<number[]> {
    const o = await this.json('POST', '/v1/tokenize', { content: text }, signal);
    const tokens = (o as { tokens?: unknown }).tokens;
    if (!Array.isArray(tokens)) throw new StrataApiError('the server answered /v1/tokenize without a tokens list', 200);
    return tokens as number[];
  }

  /**
   * The default model's decode speed as the server measured it (/metrics totals.decode_tok_s, over
   * the requests it served) with that model's name and size (/v1/models meta.size); null before it
   * has generated anything, or from a server that reports neither.
   */
  async decodeSpeed(signal?: AbortSignal): Promise<{ tokS: number; bytes: number; model: string } | null> {
    const tokS = (await this.metrics(signal).catch(() => null))?.totals.decode_tok_s;
    if (tokS === undefined || !(tokS > 0)) return null;
    const model = defaultModelSize(await this.json('GET', '/v1/models', undefined, signal).catch(() => null));
    return model ? { tokS, ...model } : null;
  }

  async metrics(signal?: AbortSignal): Promise<Metrics> {
    return parseMetrics(await this.json('GET', '/metrics', undefined, signal));
  }
  async devices(signal?: AbortSignal): Promise<DeviceMemory[]> {
    return parseDevices(await this.json('GET', '/v1/devices', undefined, signal));
  }
  /** The Devices tab's rows and what each replica's fit to memory decided, from one GET /v1/devices. */
  async devicesAndFit(signal?: AbortSignal): Promise<{ devices: DeviceMemory[]; fit: FitView[] }> {
    return parseDevicesAndFit(await this.json('GET', '/v1/devices', undefined, signal));
  }
  /** The GPU backend the server suggests installing for this machine, or null. */
  async gpuSuggestion(signal?: AbortSignal): Promise<GpuBackendsBody['suggestion']> {
    return parseGpuSuggestion(await this.json('GET', '/v1/devices', undefined, signal));
  }
  async traces(signal?: AbortSignal): Promise<Traces> {
    return parseTraces(await this.json('GET', '/v1/traces', undefined, signal));
  }
  async trace(id: string, signal?: AbortSignal): Promise<RequestTraceView> {
    return parseRequestTrace(await this.json('GET', `/v1/traces/${encodeURIComponent(id)}`, undefined, signal));
  }
  async sessions(signal?: AbortSignal): Promise<SessionInfo[]> {
    return parseSessions(await this.json('GET', '/v1/sessions', undefined, signal));
  }
  /** opts.tools: the tools the conversation ran with (the template renders them, so the saved KV matches the next request). */
  async saveSession(name: string, messages: ChatMessage[], signal?: AbortSignal, opts?: { tools?: ToolSpec[] }): Promise<SessionInfo> {
    const body: Record<string, unknown> = { name, messages: messages.map(toWireMessage) };
    if (opts?.tools?.length) body.tools = opts.tools.map(toWireTool);
    return parseSavedSession(await this.json('POST', '/v1/sessions', body, signal, true));
  }
  async restoreSession(name: string, signal?: AbortSignal): Promise<RestoredSession> {
    return parseRestored(await this.json('POST', `/v1/sessions/${encodeURIComponent(name)}/restore`, {}, signal, true));
  }
  async deleteSession(name: string, signal?: AbortSignal): Promise<void> {
    await this.json('DELETE', `/v1/sessions/${encodeURIComponent(name)}`, undefined, signal);
  }

  private async json(method: string, path: string, body: unknown, signal?: AbortSignal, long = false): Promise<unknown> {
    const res = await this.send(method, path, body, signal, long);
    if (!res.ok) throw await apiError(res);
    return readJson(res);
  }

  /** long: no client-side time limit (generation may take a while; the caller cancels). */
  private async send(method: string, path: string, body: unknown, signal?: AbortSignal, long = false): Promise<Response> {
    // Sending without the key would only earn a 401 that hides why.
    if (this.keyRefused !== null) throw new StrataApiError(this.keyRefused, 0);
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const signals = [signal, long ? undefined : AbortSignal.timeout(this.timeoutMs)].filter((s): s is AbortSignal => !!s);
    const combined = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    try {
      return await this.fetchImpl(this.baseUrl + path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: combined ?? null,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      const c = (err as { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } }).cause;
      const cause = c?.code ?? c?.errors?.[0]?.code;
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs / 1000} s` : cause ?? c?.message ?? (err as Error).message;
      throw new StrataApiError(`cannot reach the Strata server at ${this.baseUrl} (${why})`, 0, cause ?? null);
    }
  }
}

/** The JSON events of a server-sent-event response, up to `data: [DONE]`; closes the connection when the reader stops early. */
async function* sseJson(res: Response): AsyncGenerator<unknown> {
  if (!res.body) throw new StrataApiError('the server sent no response body', res.status);
  const sse = new SseDecoder();
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      for (const e of done ? sse.end() : sse.feed(value)) {
        if (e.data.trim() === '[DONE]') return;
        let parsed: unknown;
        try { parsed = JSON.parse(e.data); } catch { throw new StrataApiError(`the server sent a stream event that is not JSON: ${e.data.slice(0, 80)}`, res.status); }
        yield parsed;
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
    // Ends the connection when the consumer stops early (cancel) so the server frees the slot.
    void res.body.cancel().catch(() => undefined);
  }
}

function floatsFromBase64(b64: string): Float32Array {
  const buf = Buffer.from(b64, 'base64');
  const v = new Float32Array(buf.length >> 2);
  for (let i = 0; i < v.length; i++) v[i] = buf.readFloatLE(i * 4);
  return v;
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return {};
  try { return JSON.parse(text); } catch { throw new StrataApiError(`the server answered ${res.status} with a body that is not JSON: ${text.slice(0, 120)}`, res.status); }
}

async function apiError(res: Response): Promise<StrataApiError> {
  const text = await res.text().catch(() => '');
  let body: unknown = null;
  try { body = JSON.parse(text); } catch { /* plain text error */ }
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  const param = (body as { error?: { param?: unknown } } | null)?.error?.param;
  const msg = errorMessage(body) ?? (text.trim().slice(0, 200) || res.statusText);
  const hint = res.status === 401 || res.status === 403 ? ' (check the Strata API key: run "Strata: Set API Key" or the strata.apiKey setting)' : '';
  return new StrataApiError(`${msg}${hint}`, res.status, typeof code === 'string' || typeof code === 'number' ? String(code) : null, typeof param === 'string' ? param : null,
    contextOverflowOf((body as { error?: unknown } | null)?.error));
}
