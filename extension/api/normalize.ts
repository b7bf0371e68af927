// Turns the server's JSON into the typed shapes of types.ts. Tolerant on purpose: a field the
// server omits becomes null (never 0), snake_case and camelCase both read, so a small server
// change shows up as a missing figure instead of a broken panel.
import type { Health, InfillResult, ModelEntry } from './types.js';
import type { RestoredSession, SessionInfo } from '../../contract/sessions.js';
import type { RequestTraceView, StepTraceView, Traces } from '../../contract/traces.js';
import type { DeviceMemory } from '../../contract/devices.js';
import type { EngineMetric, Metrics, RequestRecord, SlotMetric } from '../../contract/metrics.js';
import type { ChatMessage, Timings, Usage } from '../../contract/chat.js';

type Json = Record<string, unknown>;

export function obj(v: unknown): Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}
export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
/** First finite number among the keys (dotted paths allowed), else null. */
export function num(o: Json, ...keys: string[]): number | null {
  for (const k of keys) {
    const v = path(o, k);
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  }
  return null;
}
export function str(o: Json, ...keys: string[]): string | null {
  for (const k of keys) {
    const v = path(o, k);
    if (typeof v === 'string') return v;
    if (typeof v === 'number') return String(v);
  }
  return null;
}
function bool(o: Json, ...keys: string[]): boolean | null {
  for (const k of keys) {
    const v = path(o, k);
    if (typeof v === 'boolean') return v;
  }
  return null;
}
function path(o: Json, key: string): unknown {
  if (!key.includes('.')) return o[key];
  let cur: unknown = o;
  for (const part of key.split('.')) cur = obj(cur)[part];
  return cur;
}
/** Date as ms since epoch from a number (s or ms) or an ISO string. */
function time(o: Json, ...keys: string[]): number | null {
  for (const k of keys) {
    const v = path(o, k);
    if (typeof v === 'number' && Number.isFinite(v)) return v < 1e11 ? v * 1000 : v;
    if (typeof v === 'string') {
      const t = Date.parse(v);
      if (Number.isFinite(t)) return t;
    }
  }
  return null;
}

export function parseHealth(status: number, body: unknown): Health {
  const o = obj(body);
  const s = str(o, 'status');
  const state: Health['status'] = status === 200 && (s === null || s === 'ok') ? 'ok'
    : s === 'failed' ? 'failed' : status === 503 || s === 'loading' ? 'loading' : 'error';
  return { status: state, model: str(o, 'model', 'model_name'), slots: num(o, 'slots', 'n_slots'), reason: str(o, 'reason') };
}

export function parseModels(body: unknown): ModelEntry[] {
  return arr(obj(body).data).map((raw) => {
    const m = obj(raw);
    return {
      id: str(m, 'id') ?? 'unknown',
      contextLength: num(m, 'context_length', 'n_ctx', 'meta.n_ctx', 'max_context_length', 'meta.n_ctx_train'),
      maxOutputTokens: num(m, 'max_output_tokens', 'max_tokens'),
      toolCalling: bool(m, 'tool_calling', 'capabilities.tool_calling', 'capabilities.tools') ?? true,
    };
  });
}

export function parseUsage(raw: unknown): Usage | null {
  const u = obj(raw);
  const prompt = num(u, 'prompt_tokens');
  const completion = num(u, 'completion_tokens');
  if (prompt === null && completion === null) return null;
  return {
    promptTokens: prompt ?? 0,
    completionTokens: completion ?? 0,
    cachedTokens: num(u, 'prompt_tokens_details.cached_tokens'),
  };
}

export function parseTimings(raw: unknown): Timings | null {
  const t = obj(raw);
  if (Object.keys(t).length === 0) return null;
  return {
    promptMs: num(t, 'prompt_ms'),
    predictedMs: num(t, 'predicted_ms'),
    predictedPerSecond: num(t, 'predicted_per_second'),
    promptPerSecond: num(t, 'prompt_per_second'),
  };
}

export function parseInfill(body: unknown): InfillResult {
  const o = obj(body);
  return {
    content: str(o, 'content') ?? '',
    tokensPredicted: num(o, 'tokens_predicted', 'timings.predicted_n'),
    tokensCached: num(o, 'tokens_cached', 'timings.cache_n'),
  };
}

function parseSlot(raw: unknown, index: number): SlotMetric {
  const s = obj(raw);
  return {
    slot: num(s, 'slot', 'id') ?? index,
    replica: num(s, 'replica'),
    state: str(s, 'state') ?? 'unknown',
    heldTokens: num(s, 'held_tokens', 'heldTokens') ?? 0,
    requestId: str(s, 'request_id', 'requestId'),
    tokS: num(s, 'tok_s', 'tokS'),
  };
}

function parseRequestRecord(raw: unknown): RequestRecord {
  const r = obj(raw);
  return {
    id: str(r, 'id', 'request_id'),
    time: time(r, 'time', 'started', 'created'),
    durationMs: num(r, 'duration_ms') ?? (num(r, 'duration_s') === null ? null : num(r, 'duration_s')! * 1000),
    finish: str(r, 'finish', 'finish_reason'),
    promptTokens: num(r, 'prompt', 'prompt_tokens'),
    reusedTokens: num(r, 'reused', 'reused_tokens', 'cached_tokens'),
    outputTokens: num(r, 'output', 'output_tokens', 'completion_tokens'),
    promptMs: num(r, 'prompt_ms'),
    decodeMs: num(r, 'decode_ms'),
    decodeTokS: num(r, 'decode_tok_s', 'tok_s', 'decode_tps'),
  };
}

function parseEngine(raw: unknown, index: number): EngineMetric {
  const e = obj(raw);
  return {
    replica: num(e, 'replica') ?? index,
    epoch: num(e, 'epoch') ?? 0,
    pid: num(e, 'pid'),
    alive: bool(e, 'alive') ?? str(e, 'state') === 'ready',
    restarts: num(e, 'restarts') ?? 0,
    devices: arr(e.devices).map((d) => (typeof d === 'string' ? d : str(obj(d), 'name', 'device') ?? '?')),
  };
}

export function parseMetrics(body: unknown): Metrics {
  const o = obj(body);
  const live = obj(o.live);
  const cache = obj(o.conversation_cache);
  const totals: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj(o.totals))) if (typeof v === 'number') totals[k] = v;
  return {
    state: str(live, 'state') ?? 'unknown',
    queued: num(live, 'queued') ?? 0,
    admitting: num(live, 'admitting') ?? 0,
    running: num(live, 'running') ?? 0,
    finishing: num(live, 'finishing') ?? 0,
    slots: arr(live.slots).map(parseSlot),
    requests: arr(o.requests).map(parseRequestRecord),
    totals,
    cache: {
      parked: num(cache, 'parked') ?? 0,
      bytes: num(cache, 'bytes') ?? 0,
      budget: num(cache, 'budget') ?? 0,
      hits: num(cache, 'hits') ?? 0,
      misses: num(cache, 'misses') ?? 0,
      evictions: num(cache, 'evictions') ?? 0,
    },
    engines: arr(o.engines).map(parseEngine),
    staleFrames: num(o, 'stale_frames') ?? 0,
  };
}

/**
 * /v1/devices: {data: [{replica, devices: [...], placement: [{device, layers}]}]} (one entry per
 * replica), or a flat list / {devices: [...]}.
 */
export function parseDevices(body: unknown): DeviceMemory[] {
  const o = obj(body);
  const one = (raw: unknown, replica: number | null, layers: number | null): DeviceMemory => {
    const d = obj(raw);
    const name = str(d, 'name', 'device') ?? '?';
    const type = str(d, 'type') ?? '';
    const total = num(d, 'memory_total', 'memoryTotal', 'total');
    let free = num(d, 'memory_free', 'memoryFree', 'free');
    // ggml's CPU backend reports the machine's RAM as both free and total: its use is unknown, not 0.
    if (free !== null && free === total && (type === 'cpu' || /^CPU\b/.test(name))) free = null;
    return {
      name,
      description: str(d, 'description') ?? '',
      type,
      replica: num(d, 'replica') ?? replica,
      memoryFree: free,
      memoryTotal: total,
      layers: num(d, 'layers') ?? layers,
    };
  };
  if (Array.isArray(body)) return body.map((d) => one(d, null, null));
  const out: DeviceMemory[] = arr(o.devices).map((d) => one(d, null, null));
  for (const r of arr(o.data ?? o.replicas)) {
    const rep = obj(r);
    const replica = num(rep, 'replica');
    const placement = arr(rep.placement).map(obj);
    const layersOf = (name: string | null): number | null => {
      const p = placement.find((x) => str(x, 'device', 'name') === name);
      return p ? num(p, 'layers') : null;
    };
    const devs = arr(rep.devices);
    if (devs.length) for (const d of devs) out.push(one(d, replica, layersOf(str(obj(d), 'name', 'device'))));
    else for (const p of placement) out.push(one(p, replica, null)); // engine not ready: what it was placed on
  }
  return out;
}

function parseStep(raw: unknown): StepTraceView {
  const s = obj(raw);
  return {
    step: num(s, 'step') ?? 0,
    t: num(s, 't') ?? 0,
    buildMs: num(s, 'build_ms', 'buildMs') ?? 0,
    decodeMs: num(s, 'decode_ms', 'decodeMs') ?? 0,
    sampleMs: num(s, 'sample_ms', 'sampleMs') ?? 0,
    detokMs: num(s, 'detok_ms', 'detokMs') ?? 0,
    decodeTokens: num(s, 'decode_tokens', 'decodeTokens') ?? 0,
    promptTokens: num(s, 'prompt_tokens', 'promptTokens') ?? 0,
    sequences: num(s, 'sequences') ?? 0,
  };
}

/**
 * A request trace. The server's entry has marks in ms after acceptance plus the engine's own
 * trace (times in engine ms, whose `queued` is when the engine got it = the server's
 * `dispatched` mark); both are put on the server's clock here. A flat shape (all marks at the
 * top level, relative to `queued`) is read too.
 */
export function parseRequestTrace(raw: unknown): RequestTraceView {
  const top = obj(raw);
  const r = Object.keys(obj(top.request)).length ? obj(top.request) : top;
  const marks = obj(r.marks);
  const eng = obj(r.engine);
  const hasEngine = Object.keys(eng).length > 0;
  const flat = !Object.keys(marks).length;
  const base = flat ? num(r, 'queued') ?? 0 : 0;
  const rel = (v: number | null): number | null => (v === null ? null : v - base);
  const dispatched = flat ? rel(num(r, 'dispatched', 'queued')) : num(marks, 'dispatched');
  // Engine times -> server times: the engine's queue mark is our dispatch mark.
  const engQueued = num(eng, 'queued');
  const shift = hasEngine && engQueued !== null && dispatched !== null ? dispatched - engQueued : null;
  const fromEngine = (k: string): number | null => {
    const v = num(eng, k);
    return v === null || shift === null ? null : v + shift;
  };
  const legsRaw = hasEngine ? arr(eng.promptLegs ?? eng.prompt_legs) : arr(r.prompt_legs ?? r.promptLegs);
  return {
    id: str(r, 'id', 'request_id') ?? '?',
    kind: str(r, 'kind'),
    replica: num(r, 'replica'),
    slot: num(r, 'slot') ?? num(eng, 'slot'),
    finish: str(r, 'finish'),
    error: str(r, 'error'),
    accepted: time(r, 'accepted'),
    promptTokens: num(r, 'prompt_tokens'),
    reused: num(r, 'reused') ?? num(eng, 'reused') ?? 0,
    restored: bool(r, 'restored') ?? bool(eng, 'restored') ?? false,
    generated: num(r, 'generated'),
    dispatched,
    admitted: (flat ? rel(num(r, 'admitted')) : null) ?? fromEngine('admitted') ?? num(marks, 'admitted'),
    promptDone: (flat ? rel(num(r, 'prompt_done', 'promptDone')) : null) ?? fromEngine('promptDone'),
    firstToken: (flat ? rel(num(r, 'first_token', 'firstToken')) : null) ?? num(marks, 'first_token') ?? fromEngine('firstToken'),
    finished: (flat ? rel(num(r, 'finished')) : null) ?? num(marks, 'ended') ?? num(marks, 'engine_done') ?? fromEngine('finished'),
    promptLegs: legsRaw.map((l) => {
      const leg = obj(l);
      const t = num(leg, 't') ?? 0;
      return { t: hasEngine ? (shift === null ? t : t + shift) : t - base, tokens: num(leg, 'tokens') ?? 0, ms: num(leg, 'ms') ?? 0 };
    }),
  };
}

export function parseTraces(body: unknown): Traces {
  const o = obj(body);
  // Oldest first (the server lists newest first), so "last" means newest everywhere.
  const requests = arr(o.requests ?? o.data).map(parseRequestTrace).sort((a, b) => (a.accepted ?? 0) - (b.accepted ?? 0) || Number(a.id) - Number(b.id));
  const steps = arr(o.steps).map(parseStep).sort((a, b) => a.t - b.t);
  return { requests, steps };
}

function parseSession(raw: unknown): SessionInfo {
  const s = obj(raw);
  return {
    name: str(s, 'name') ?? '?',
    tokens: num(s, 'tokens', 'n_tokens'),
    bytes: num(s, 'bytes', 'size'),
    model: str(s, 'model.name', 'model.file', 'model'),
    savedAt: time(s, 'saved_at', 'created', 'mtime', 'date', 'time'),
    path: str(s, 'path', 'file'),
    messages: Array.isArray(s.messages) ? s.messages.length : num(s, 'messages', 'n_messages'),
  };
}

export function parseSessions(body: unknown): SessionInfo[] {
  return (Array.isArray(body) ? body : arr(obj(body).sessions ?? obj(body).data)).map(parseSession);
}

export function parseSavedSession(body: unknown): SessionInfo {
  const o = obj(body);
  return parseSession(Object.keys(obj(o.session)).length ? o.session : o);
}

export function parseMessages(raw: unknown): ChatMessage[] | null {
  if (!Array.isArray(raw)) return null;
  const out: ChatMessage[] = [];
  for (const m of raw) {
    const o = obj(m);
    const role = str(o, 'role');
    if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') continue;
    out.push({ role, content: str(o, 'content') ?? '' });
  }
  return out;
}

export function parseRestored(name: string, body: unknown): RestoredSession {
  const o = obj(body);
  const inner = Object.keys(obj(o.session)).length ? obj(o.session) : o;
  return { name: str(inner, 'name') ?? name, messages: parseMessages(inner.messages), tokens: num(inner, 'tokens') };
}

/** The message of an OpenAI-style error body, or null. */
export function errorMessage(body: unknown): string | null {
  const e = obj(obj(body).error);
  return str(e, 'message') ?? (typeof obj(body).error === 'string' ? (obj(body).error as string) : null);
}
