// Complete server bodies of the contract's types (contract/*.ts), for tests of the extension's
// edge: a test states only the fields it is about; the rest is a valid, empty server answer.
import type { DevicesBody, ReplicaDevicesBody } from '../../contract/devices.js';
import type { EngineBody, HistoryEntry, MetricsBody } from '../../contract/metrics.js';
import type { SessionMeta } from '../../contract/sessions.js';
import type { TraceEntry } from '../../contract/traces.js';

type Live = MetricsBody['live'];

export function metricsBody(over: Omit<Partial<MetricsBody>, 'live'> & { live?: Partial<Live> } = {}): MetricsBody {
  const { live, ...rest } = over;
  return {
    model: { id: 'tiny', demo: false, ctx: 256, slots: 2, embedding: null, speculative: { ngram: false, ngramKind: null, mtp: false, draftModel: null, draftKind: null, draftMax: 0 } },
    uptime_s: 1,
    requests: [],
    totals: {
      accepted: 0, ended: 0, by_finish: {}, prompt_tokens: 0, reused_tokens: 0, output_tokens: 0, prompt_ms: 0,
      prompt_ms_requests: 0, decode_ms: 0, decode_ms_requests: 0, invariant_violations: 0, prompt_tokens_processed: 0,
      prompt_tok_s: null, decode_tok_s: null, prompt_tokens_computed: null, drafted_tokens: 0, accepted_tokens: 0,
      draft_acceptance: null, draft_positions: [],
    },
    conversation_cache: null,
    engines: [],
    stale_frames: 0,
    missed_dispatches: 0,
    event_to_sse: null,
    log_lines_dropped: 0,
    slow_readers: null,
    ...rest,
    live: { state: 'idle', reason: null, queued: 0, admitting: 0, running: 0, finishing: 0, tok_s: 0, slots: [], requests: [], ...live },
  };
}

export function historyEntry(over: Partial<HistoryEntry> & Pick<HistoryEntry, 'id'>): HistoryEntry {
  return {
    kind: 'chat', time: '2025-01-01T00:00:00.000Z', duration_s: 0, queue_ms: null, finish: 'stop', error: null, replica: 0,
    epoch: 1, prompt_tokens: null, reused: null, restored: null, output_tokens: 0, prompt_ms: null, decode_ms: null,
    decode_tok_s: null, drafted: 0, accepted: 0, ...over,
  };
}

export function engineBody(over: Partial<EngineBody> = {}): EngineBody {
  return {
    replica: 0, state: 'ready', alive: true, epoch: 1, pid: 1, restarts: 0, last_error: null, last_death: null, stale_frames: 0, slots: 2,
    in_flight: 0, indexed_blocks: 0, devices: [], ...over,
  };
}

export function traceEntry(over: Partial<TraceEntry> & Pick<TraceEntry, 'id' | 'accepted' | 'marks'>): TraceEntry {
  return {
    kind: 'chat', replica: 0, epoch: 1, engine_id: null, slot: null, finish: 'stop', error: null, prompt_tokens: null,
    reused: null, restored: null, generated: 0, drafted: 0, draft_accepted: 0, engine: null, ...over,
  };
}

export function replicaDevices(over: Partial<ReplicaDevicesBody> & Pick<ReplicaDevicesBody, 'replica'>): ReplicaDevicesBody {
  return { state: 'ready', epoch: 1, pid: 1, devices: [], placement: [], cpu: null, op_offload: null, buffers: [], backends: null, fit: null, ...over };
}

export function devicesBody(data: ReplicaDevicesBody[]): DevicesBody {
  return { object: 'list', data, gpu_backends: { installed: [], suggestion: null }, cpu: null };
}

export function sessionMeta(over: Partial<SessionMeta> & Pick<SessionMeta, 'name'>): SessionMeta {
  return {
    model: { identity: 'x', name: 'tiny', file: 'tiny.gguf' }, created: '2025-01-01T00:00:00.000Z', messages: null,
    tokens: 0, bytes: 0, message_count: 0, format: 2, ...over,
  };
}
