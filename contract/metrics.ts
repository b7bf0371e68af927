// GET /metrics: the server's JSON (MetricsBody, built by backend/metrics/metrics-json.ts), its
// runtime check (metricsBodySchema, at the extension's edge), and the shape the panel, the status
// bar and @strata show (Metrics, made by metricsView). A field added to the server's answer is
// declared here first; the builder, the check and the view follow or do not compile.
import { modelMetricsSchema, type ModelRole, type ModelState, type ModelsMetricsBody } from './models.js';
import * as z from 'zod/mini';
import type { ModelInfo } from '../native/lib/addon.js';
import { checkBody } from './check.js';
import { engineDeathSchema, type EngineDeathBody } from './health.js';

// --- the server's JSON ---------------------------------------------------------------------

/** Where an accepted request is (backend/scheduler/request-ledger.ts moves it). */
export type RequestState = 'queued' | 'admitting' | 'running' | 'finishing' | 'ended';

export type RequestKind = 'chat' | 'completion' | 'infill' | 'embedding' | 'next_edit';

/** How a request ended, as history shows it. */
export type EndReason =
  | 'stop' | 'length' | 'tool_calls' | 'cancel' | 'disconnected' | 'shutdown' | 'error' | 'rejected'
  /** A newer request with the same supersede key replaced it (infill). */
  | 'superseded';

export interface HistoryEntry {
  id: number;
  kind: RequestKind;
  time: string;
  duration_s: number;
  queue_ms: number | null;
  finish: EndReason;
  error: string | null;
  replica: number | null;
  epoch: number | null;
  prompt_tokens: number | null;
  reused: number | null;
  restored: boolean | null;
  output_tokens: number;
  prompt_ms: number | null;
  decode_ms: number | null;
  decode_tok_s: number | null;
  /** Speculative draft tokens verified / accepted. */
  drafted: number;
  accepted: number;
}

export interface Totals {
  accepted: number;
  ended: number;
  by_finish: Record<string, number>;
  prompt_tokens: number;
  reused_tokens: number;
  output_tokens: number;
  /** Sums over requests whose engine reported the figure (with how many did). */
  prompt_ms: number;
  prompt_ms_requests: number;
  decode_ms: number;
  decode_ms_requests: number;
  /** Speculative tokens verified / accepted, over all requests. */
  drafted_tokens: number;
  accepted_tokens: number;
  /** Moves the ledger refused (a bug if ever above 0). */
  invariant_violations: number;
}

export interface SlotView {
  replica: number;
  slot: number;
  state: 'idle' | 'reading' | 'decoding';
  held_tokens: number;
  request_id: number | null;
  prompt_tokens: number | null;
  prompt_read: number | null;
  generated: number | null;
  tok_s: number | null;
}

export type LiveState = 'loading' | 'unavailable' | 'stopping' | 'idle' | 'reading' | 'generating';

export interface HistogramBucket {
  /** Upper bound, ms. */
  le_ms: number;
  /** Observations at or below le_ms (cumulative, as in Prometheus). */
  count: number;
}

export interface HistogramSnapshot {
  count: number;
  sum_ms: number;
  /** null while nothing was observed. */
  mean_ms: number | null;
  /** Interpolated within their bucket; the last finite bound when they fall above it. */
  p50_ms: number | null;
  p95_ms: number | null;
  /** Stamps from the future or over an hour old (not the same clock): not in count. */
  rejected: number;
  /** Finite bounds only; `count` is the +Inf bucket. */
  buckets: HistogramBucket[];
}

/** An engine replica's process state (backend/engine/client.ts). failed: it died too often in a row. */
export type EngineState = 'starting' | 'ready' | 'dead' | 'failed' | 'closed';

export interface DerivedTotals extends Totals {
  prompt_tokens_processed: number;
  prompt_tok_s: number | null;
  decode_tok_s: number | null;
  /** Prompt tokens the engines decoded since they started (cancelled requests' too); null when none answered. */
  prompt_tokens_computed: number | null;
  /** Of the speculative draft tokens verified, the share the model agreed with (null: none drafted). */
  draft_acceptance: number | null;
  /** Acceptance per draft position, from the first: the engines' counts since they started ([] when none drafted). */
  draft_positions: DraftPositionBody[];
}

/**
 * One draft position (1: a draft's first token): drafts that reached it, drafts whose tokens the
 * model accepted up to and including it, and the share (null: none reached it).
 */
export interface DraftPositionBody {
  position: number;
  drafted: number;
  accepted: number;
  acceptance: number | null;
}

export interface LiveRequest {
  id: number;
  kind: RequestKind;
  state: RequestState;
  replica: number | null;
  slot: number | null;
  waited_ms: number;
  prompt_tokens: number | null;
  prompt_read: number;
  reused: number | null;
  generated: number;
}

export interface ConversationCacheBody {
  parked: number;
  bytes: number;
  budget: number;
  hits: number;
  misses: number;
  evictions: number;
  refused_low_ram: number;
  entries: Array<{ tokens: number; bytes: number; last_used_ms: number }>;
}

export interface EngineBody {
  replica: number;
  state: EngineState;
  alive: boolean;
  epoch: number;
  pid: number | null;
  restarts: number;
  last_error: string | null;
  /** Its engine process's last death (contract/health.ts); null while none died. */
  last_death: EngineDeathBody | null;
  stale_frames: number;
  slots: number | null;
  in_flight: number;
  indexed_blocks: number;
  devices: Array<{ device: string; layers: number; memory_free: number; memory_total: number }>;
}

export interface MetricsBody {
  model: {
    id: string; demo: boolean; ctx: number; slots: number;
    embedding: ModelInfo['embedding']; speculative: ModelInfo['speculative'];
  } | null;
  uptime_s: number;
  live: {
    state: LiveState;
    reason: string | null;
    queued: number;
    admitting: number;
    running: number;
    finishing: number;
    tok_s: number;
    slots: SlotView[];
    requests: LiveRequest[];
  };
  requests: HistoryEntry[];
  totals: DerivedTotals;
  conversation_cache: ConversationCacheBody | null;
  engines: EngineBody[];
  stale_frames: number;
  missed_dispatches: number;
  /** Engine step hand-over -> SSE bytes written, per streamed token event (ms, monotonic clock). */
  event_to_sse: HistogramSnapshot | null;
  log_lines_dropped: number;
  /**
   * Streaming clients cut for falling more than bound_ms behind (--slow-reader-ms); unread_seen:
   * 'kernel' when socket queues are visible (/proc/net/tcp), 'process' when only our own buffers are.
   */
  slow_readers: { bound_ms: number; cut: number; unread_seen: 'kernel' | 'process' | null } | null;
  /** Every served model: state, memory estimate, last use, requests (the figures above are the default model's). */
  models?: ModelsMetricsBody;
  /** POST /v1/edits/next since the start (absent from servers without the route). */
  next_edit?: NextEditMetrics;
}

/** Next-edit requests by how they ended, and the answers' tokens: all of them, and the region's (the prediction's) accepted and rejected. */
export interface NextEditMetrics {
  requests: { edited: number; unchanged: number; unparsed: number; failed: number };
  completion_tokens: number;
  accepted_prediction_tokens: number;
  rejected_prediction_tokens: number;
}

// --- its runtime check ---------------------------------------------------------------------

const num = z.number();
const nnum = z.nullable(z.number());
const nstr = z.nullable(z.string());
const requestKind = z.enum(['chat', 'completion', 'infill', 'embedding', 'next_edit']);
const requestState = z.enum(['queued', 'admitting', 'running', 'finishing', 'ended']);
const endReason = z.enum(['stop', 'length', 'tool_calls', 'cancel', 'disconnected', 'shutdown', 'error', 'rejected', 'superseded']);

export const histogramSchema: z.ZodMiniType<HistogramSnapshot> = z.object({
  count: num, sum_ms: num, mean_ms: nnum, p50_ms: nnum, p95_ms: nnum, rejected: num,
  buckets: z.array(z.object({ le_ms: num, count: num })),
});

const historySchema: z.ZodMiniType<HistoryEntry> = z.object({
  id: num, kind: requestKind, time: z.string(), duration_s: num, queue_ms: nnum, finish: endReason, error: nstr,
  replica: nnum, epoch: nnum, prompt_tokens: nnum, reused: nnum, restored: z.nullable(z.boolean()), output_tokens: num,
  prompt_ms: nnum, decode_ms: nnum, decode_tok_s: nnum, drafted: num, accepted: num,
});

export const metricsBodySchema: z.ZodMiniType<MetricsBody> = z.object({
  model: z.nullable(z.object({
    id: z.string(), demo: z.boolean(), ctx: num, slots: num,
    embedding: z.nullable(z.object({ pooling: z.enum(['mean', 'cls', 'last', 'rank']), dimensions: num })),
    speculative: z.object({ ngram: z.boolean(), ngramKind: z.nullable(z.enum(['lookup', 'simple', 'map-k', 'map-k4v', 'mod', 'cache'])), mtp: z.boolean(), draftModel: z.nullable(z.string()), draftKind: z.nullable(z.enum(['model', 'eagle3', 'dflash', 'dspark'])), draftMax: num }),
  })),
  uptime_s: num,
  live: z.object({
    state: z.enum(['loading', 'unavailable', 'stopping', 'idle', 'reading', 'generating']),
    reason: nstr, queued: num, admitting: num, running: num, finishing: num, tok_s: num,
    slots: z.array(z.object({
      replica: num, slot: num, state: z.enum(['idle', 'reading', 'decoding']), held_tokens: num, request_id: nnum,
      prompt_tokens: nnum, prompt_read: nnum, generated: nnum, tok_s: nnum,
    })),
    requests: z.array(z.object({
      id: num, kind: requestKind, state: requestState, replica: nnum, slot: nnum, waited_ms: num,
      prompt_tokens: nnum, prompt_read: num, reused: nnum, generated: num,
    })),
  }),
  requests: z.array(historySchema),
  totals: z.object({
    accepted: num, ended: num, by_finish: z.record(z.string(), num), prompt_tokens: num, reused_tokens: num,
    output_tokens: num, prompt_ms: num, prompt_ms_requests: num, decode_ms: num, decode_ms_requests: num,
    invariant_violations: num, prompt_tokens_processed: num, prompt_tok_s: nnum, decode_tok_s: nnum,
    prompt_tokens_computed: nnum, drafted_tokens: num, accepted_tokens: num, draft_acceptance: nnum,
    draft_positions: z.array(z.object({ position: num, drafted: num, accepted: num, acceptance: nnum })),
  }),
  conversation_cache: z.nullable(z.object({
    parked: num, bytes: num, budget: num, hits: num, misses: num, evictions: num, refused_low_ram: num,
    entries: z.array(z.object({ tokens: num, bytes: num, last_used_ms: num })),
  })),
  engines: z.array(z.object({
    replica: num, state: z.enum(['starting', 'ready', 'dead', 'failed', 'closed']), alive: z.boolean(), epoch: num,
    pid: nnum, restarts: num, last_error: nstr, last_death: z.nullable(engineDeathSchema), stale_frames: num, slots: nnum, in_flight: num, indexed_blocks: num,
    devices: z.array(z.object({ device: z.string(), layers: num, memory_free: num, memory_total: num })),
  })),
  stale_frames: num,
  missed_dispatches: num,
  event_to_sse: z.nullable(histogramSchema),
  log_lines_dropped: num,
  slow_readers: z.nullable(z.object({ bound_ms: num, cut: num, unread_seen: z.nullable(z.enum(['kernel', 'process'])) })),
  models: z.optional(modelMetricsSchema),
  next_edit: z.optional(z.object({
    requests: z.object({ edited: num, unchanged: num, unparsed: num, failed: num }),
    completion_tokens: num, accepted_prediction_tokens: num, rejected_prediction_tokens: num,
  })),
});

// --- what the panel shows ------------------------------------------------------------------

export interface SlotMetric {
  slot: number;
  replica: number | null;
  state: string;
  heldTokens: number;
  requestId: string | null;
  tokS: number | null;
}

/** One row of the recent requests. */
export interface RecentRequest {
  id: string | null;
  time: number | null;
  durationMs: number | null;
  finish: string | null;
  promptTokens: number | null;
  reusedTokens: number | null;
  outputTokens: number | null;
  promptMs: number | null;
  decodeMs: number | null;
  decodeTokS: number | null;
}

export type ConversationCacheMetric = Omit<ConversationCacheBody, 'refused_low_ram' | 'entries'>;

export interface EngineMetric {
  replica: number;
  epoch: number;
  pid: number | null;
  alive: boolean;
  restarts: number;
  devices: string[];
}

/** One served model as the panel lists it. */
export interface ModelMetric {
  name: string;
  state: ModelState;
  role: ModelRole | null;
  pinned: boolean;
  memoryBytes: number;
  /** Bytes held per offload device while loaded. */
  deviceMemory: Record<string, number>;
  /** ms since epoch; null: never used. */
  lastUsed: number | null;
  inFlight: number;
  requests: number;
  error: string | null;
}

export interface Metrics {
  state: string;
  queued: number;
  admitting: number;
  running: number;
  finishing: number;
  slots: SlotMetric[];
  requests: RecentRequest[];
  totals: Record<string, number>;
  cache: ConversationCacheMetric;
  engines: EngineMetric[];
  staleFrames: number;
  /** Every served model (empty from servers without a models section; absent in views made by hand). */
  models?: ModelMetric[];
  /** Draft acceptance by position (empty when nothing was drafted; absent in views made by hand). */
  draftPositions?: DraftPositionBody[];
}

/** The figures the panel, the status bar and @strata show, from the server's JSON. */
export function metricsView(m: MetricsBody): Metrics {
  const cache = m.conversation_cache;
  const totals: Record<string, number> = {};
  for (const [k, v] of Object.entries(m.totals)) if (typeof v === 'number') totals[k] = v;
  return {
    state: m.live.state,
    queued: m.live.queued,
    admitting: m.live.admitting,
    running: m.live.running,
    finishing: m.live.finishing,
    slots: m.live.slots.map((s) => ({
      slot: s.slot, replica: s.replica, state: s.state, heldTokens: s.held_tokens,
      requestId: s.request_id === null ? null : String(s.request_id), tokS: s.tok_s,
    })),
    requests: m.requests.map((r) => ({
      id: String(r.id), time: Date.parse(r.time), durationMs: r.duration_s * 1000, finish: r.finish,
      promptTokens: r.prompt_tokens, reusedTokens: r.reused, outputTokens: r.output_tokens,
      promptMs: r.prompt_ms, decodeMs: r.decode_ms, decodeTokS: r.decode_tok_s,
    })),
    totals,
    cache: {
      parked: cache?.parked ?? 0, bytes: cache?.bytes ?? 0, budget: cache?.budget ?? 0,
      hits: cache?.hits ?? 0, misses: cache?.misses ?? 0, evictions: cache?.evictions ?? 0,
    },
    engines: m.engines.map((e) => ({
      replica: e.replica, epoch: e.epoch, pid: e.pid, alive: e.alive, restarts: e.restarts, devices: e.devices.map((d) => d.device),
    })),
    staleFrames: m.stale_frames,
    draftPositions: m.totals.draft_positions ?? [],
    models: (m.models?.data ?? []).map((x) => ({
      name: x.name, state: x.state, role: x.role, pinned: x.pinned, memoryBytes: x.memory_estimate, deviceMemory: x.device_memory,
      lastUsed: x.last_used === null ? null : Date.parse(x.last_used), inFlight: x.requests_in_flight, requests: x.requests_total, error: x.error,
    })),
  };
}

/** GET /metrics's body, checked against the contract, as the panel shows it. */
export function parseMetrics(raw: unknown): Metrics {
  return metricsView(checkBody(metricsBodySchema, raw, 'GET /metrics'));
}
