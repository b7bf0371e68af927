// GET /metrics: the server's state as JSON. `live` comes from the request ledger (every
// accepted request is in exactly one state there) and the engines' slot snapshots;
// `requests` is the recent history; a figure an engine never reported is null, never 0.
import type { EngineSnapshot, ModelInfo } from '../../native/lib/addon.js';
import type { EngineClient, EngineDeath, EngineStatus } from '../engine/client.js';
import type { EngineDeathBody } from '../../contract/health.js';
import type { RequestRecord, RequestLedger } from '../scheduler/request-ledger.js';
import type { DerivedTotals, DraftPositionBody, EngineBody, HistoryEntry, LiveState, MetricsBody, SlotView, Totals } from '../../contract/metrics.js';
import { round2 } from '../scheduler/request-ledger.js';
import type { ReplicaView, Scheduler } from '../scheduler/scheduler.js';
import type { HistogramSnapshot, NextEditMetrics } from '../../contract/metrics.js';
import type { ModelsMetricsBody } from '../../contract/models.js';

export interface MetricsSources {
  ledger: RequestLedger;
  scheduler: Scheduler;
  engines: readonly EngineClient[];
  model: { id: string; info: ModelInfo; demo: boolean } | null;
  stopping: boolean;
  startedAt: number;
  logDropped: number;
  /** The server's overhead per streamed token event (TraceCollector.eventToSse); null when not kept. */
  eventToSse?: HistogramSnapshot | null;
  /** The slow-reader bound and the clients cut for it. */
  slowReaders?: { boundMs: number; cut: number; kernelVisible: boolean | null };
  /** Every served model (built by the models route). */
  models?: ModelsMetricsBody;
  /** Next-edit requests (backend/next-edit/next-edit-stats.ts). */
  nextEdit?: NextEditMetrics;
}

/** Each ready engine's snapshot, or null when it is not ready or does not answer in time. */
export async function engineSnapshots(engines: readonly EngineClient[], timeoutMs = 1000): Promise<Array<EngineSnapshot | null>> {
  return Promise.all(engines.map(async (e) => {
    if (e.status().state !== 'ready') return null;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        e.snapshot(),
        new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), timeoutMs); }),
      ]);
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  }));
}

function findRecord(live: RequestRecord[], replica: number, epoch: number, engineId: number | null): RequestRecord | undefined {
  if (engineId === null) return undefined;
  return live.find((r) => r.replica === replica && r.epoch === epoch && r.engineId === engineId);
}

export function slotViews(engines: readonly EngineClient[], snaps: Array<EngineSnapshot | null>, live: RequestRecord[]): SlotView[] {
  const out: SlotView[] = [];
  engines.forEach((e, i) => {
    const snap = snaps[i];
    if (!snap) return;
    const epoch = e.status().epoch;
    for (const s of snap.slots) {
      const rec = findRecord(live, e.replica, epoch, s.requestId);
      const busy = s.state !== 'idle';
      out.push({
        replica: e.replica, slot: s.slot,
        state: s.state === 'idle' ? 'idle' : s.state === 'prompt' ? 'reading' : 'decoding',
        held_tokens: s.heldTokens,
        request_id: rec?.id ?? null,
        prompt_tokens: busy ? s.promptTokens : null,
        prompt_read: busy && rec ? rec.promptRead : null,
        generated: busy ? s.generated : null,
        tok_s: busy && rec ? rec.rate.perSecond() : null,
      });
    }
  });
  return out;
}

function liveState(src: MetricsSources, live: RequestRecord[]): LiveState {
  if (src.stopping) return 'stopping';
  if (src.scheduler.isLoading()) return 'loading';
  if (src.scheduler.unavailableReason() !== null) return 'unavailable';
  const running = live.filter((r) => r.state === 'running');
  if (running.some((r) => r.firstTokenAt !== null)) return 'generating';
  if (running.length > 0 || live.some((r) => r.state === 'admitting')) return 'reading';
  return 'idle';
}

export function derivedTotals(t: Totals): Omit<DerivedTotals, 'prompt_tokens_computed' | 'draft_positions'> {
  return {
    ...t,
    prompt_tokens_processed: t.prompt_tokens - t.reused_tokens,
    prompt_tok_s: t.prompt_ms > 0 ? round2(((t.prompt_tokens - t.reused_tokens) * 1000) / t.prompt_ms) : null,
    decode_tok_s: t.decode_ms > 0 ? round2((t.output_tokens * 1000) / t.decode_ms) : null,
    /** Of the speculative draft tokens verified, the share the model agreed with (null: none drafted). */
    draft_acceptance: t.drafted_tokens > 0 ? round2(t.accepted_tokens / t.drafted_tokens) : null,
  };
}

/**
 * Prompt tokens the engines put through a decode since each started (also those of requests
 * cancelled afterwards, unlike prompt_tokens_processed, which counts ended requests' figures);
 * null when no engine answered.
 */
export function promptComputed(snaps: Array<EngineSnapshot | null>): number | null {
  const ready = snaps.filter((s): s is EngineSnapshot => s !== null);
  return ready.length === 0 ? null : ready.reduce((n, s) => n + s.totals.promptComputed, 0);
}

/** Acceptance per draft position, summed over the engines that answered (their counts since they started). */
export function draftPositions(snaps: Array<EngineSnapshot | null>): DraftPositionBody[] {
  const out: DraftPositionBody[] = [];
  for (const s of snaps) {
    (s?.totals.draftPositions ?? []).forEach((p, i) => {
      const row = out[i] ?? (out[i] = { position: i + 1, drafted: 0, accepted: 0, acceptance: null });
      row.drafted += p.drafted;
      row.accepted += p.accepted;
    });
  }
  for (const row of out) row.acceptance = row.drafted > 0 ? round2(row.accepted / row.drafted) : null;
  return out;
}

export function conversationCache(snaps: Array<EngineSnapshot | null>) {
  const parks = snaps.filter((s): s is EngineSnapshot => s !== null).map((s) => s.park);
  if (parks.length === 0) return null;
  const sum = (f: (p: EngineSnapshot['park']) => number) => parks.reduce((n, p) => n + f(p), 0);
  return {
    parked: sum((p) => p.entries.length), bytes: sum((p) => p.bytes), budget: sum((p) => p.budget),
    hits: sum((p) => p.hits), misses: sum((p) => p.misses), evictions: sum((p) => p.evictions),
    refused_low_ram: sum((p) => p.refusedLowRam),
    entries: parks.flatMap((p) => p.entries.map((e) => ({ tokens: e.tokens, bytes: e.bytes, last_used_ms: e.lastUsedMs }))),
  };
}

/** An engine's death as /health and /metrics send it. */
export function engineDeathBody(replica: number, d: EngineDeath): EngineDeathBody {
  return {
    replica, epoch: d.epoch, pid: d.pid, signal: d.signal, exit_code: d.exitCode, last_error: d.lastError,
    deaths_in_row: d.deathsInRow, gave_up: d.gaveUp, model: d.model, devices: d.devices, time: new Date(d.at).toISOString(),
  };
}

/** The most recent death among the engines (null: none died). */
export function latestDeath(engines: readonly EngineClient[]): EngineDeathBody | null {
  let latest: { replica: number; d: EngineDeath } | null = null;
  for (const e of engines) {
    const d = e.status().lastDeath;
    if (d && (!latest || d.at >= latest.d.at)) latest = { replica: e.replica, d };
  }
  return latest && engineDeathBody(latest.replica, latest.d);
}

export function engineViews(engines: readonly EngineClient[], views: ReplicaView[]): EngineBody[] {
  return engines.map((e) => {
    const s: EngineStatus = e.status();
    const v = views.find((x) => x.replica === e.replica);
    return {
      replica: e.replica, state: s.state, alive: s.pid !== null && (s.state === 'ready' || s.state === 'starting'),
      epoch: s.epoch, pid: s.pid, restarts: s.restarts, last_error: s.lastError, stale_frames: s.staleFrames,
      last_death: s.lastDeath && engineDeathBody(e.replica, s.lastDeath),
      slots: v?.slots ?? null, in_flight: v?.inFlight ?? 0, indexed_blocks: v?.indexedBlocks ?? 0,
      devices: e.info?.placement.map((p) => ({ device: p.device, layers: p.layers, memory_free: p.memoryFree, memory_total: p.memoryTotal })) ?? [],
    };
  });
}

export async function buildMetrics(src: MetricsSources, opts: { requests?: number } = {}): Promise<MetricsBody> {
  const snaps = await engineSnapshots(src.engines);
  const live = src.ledger.liveRecords();
  const counts = src.ledger.counts();
  const slots = slotViews(src.engines, snaps, live);
  const rates = live.filter((r) => r.state === 'running').map((r) => r.rate.perSecond() ?? 0);
  const history: HistoryEntry[] = src.ledger.recent(opts.requests ?? 50);
  return {
    model: src.model ? {
      id: src.model.id, demo: src.model.demo, ctx: src.model.info.ctx, slots: src.model.info.slots,
      embedding: src.model.info.embedding, speculative: src.model.info.speculative,
    } : null,
    uptime_s: round2((Date.now() - src.startedAt) / 1000),
    live: {
      state: liveState(src, live),
      reason: src.scheduler.unavailableReason(),
      ...counts,
      tok_s: rates.length ? round2(rates.reduce((a, b) => a + b, 0)) : 0,
      slots,
      requests: live.map((r) => ({
        id: r.id, kind: r.kind, state: r.state, replica: r.replica, slot: r.slot,
        waited_ms: (r.dispatchedAt ?? Date.now()) - r.acceptedAt,
        prompt_tokens: r.promptTokens, prompt_read: r.promptRead, reused: r.reused, generated: r.generated,
      })),
    },
    requests: history,
    totals: { ...derivedTotals(src.ledger.totals), prompt_tokens_computed: promptComputed(snaps), draft_positions: draftPositions(snaps) },
    conversation_cache: conversationCache(snaps),
    engines: engineViews(src.engines, src.scheduler.views()),
    stale_frames: src.engines.reduce((n, e) => n + e.status().staleFrames, 0),
    missed_dispatches: src.scheduler.missedDispatches,
    event_to_sse: src.eventToSse ?? null,
    log_lines_dropped: src.logDropped,
    slow_readers: src.slowReaders ? {
      bound_ms: src.slowReaders.boundMs, cut: src.slowReaders.cut,
      unread_seen: src.slowReaders.kernelVisible === null ? null : src.slowReaders.kernelVisible ? 'kernel' : 'process',
    } : null,
    ...(src.models ? { models: src.models } : {}),
    ...(src.nextEdit ? { next_edit: src.nextEdit } : {}),
  };
}

/** The body of GET /metrics (declared in the contract, with the extension's check of it). */
export type MetricsJson = MetricsBody;
