// GET /metrics/prometheus: the JSON metrics as Prometheus text. llama-server's llamacpp:*
// names where one exists (so existing dashboards work), strata:* for the rest.
import type { HistogramSnapshot } from '../../contract/metrics.js';
import type { MetricsJson } from './metrics-json.js';

type Sample = { labels?: Record<string, string | number>; value: number | null };

class Writer {
  private readonly lines: string[] = [];

  metric(name: string, type: 'counter' | 'gauge', help: string, samples: Sample[] | number | null): void {
    const list = typeof samples === 'number' || samples === null ? [{ value: samples }] : samples;
    const present = list.filter((s) => s.value !== null && Number.isFinite(s.value));
    if (present.length === 0) return; // a figure never reported is left out, not written as 0
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const s of present) this.lines.push(`${name}${labelText(s.labels)} ${s.value}`);
  }

  /** A histogram in seconds from ms buckets; written even when empty, so scrapers find it. */
  histogram(name: string, help: string, h: HistogramSnapshot | null): void {
    if (!h) return;
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    for (const b of h.buckets) this.lines.push(`${name}_bucket{le="${b.le_ms / 1000}"} ${b.count}`);
    this.lines.push(`${name}_bucket{le="+Inf"} ${h.count}`, `${name}_sum ${h.sum_ms / 1000}`, `${name}_count ${h.count}`);
  }

  text(): string { return `${this.lines.join('\n')}\n`; }
}

function labelText(labels?: Record<string, string | number>): string {
  if (!labels || Object.keys(labels).length === 0) return '';
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return `{${parts.join(',')}}`;
}

export function prometheusText(m: MetricsJson): string {
  const w = new Writer();
  const t = m.totals;
  // As llama-server counts it: tokens through a decode, cancelled requests' included.
  w.metric('llamacpp:prompt_tokens_total', 'counter', 'Number of prompt tokens processed, excluding cached tokens.', t.prompt_tokens_computed ?? t.prompt_tokens_processed);
  w.metric('llamacpp:prompt_seconds_total', 'counter', 'Prompt process time.', t.prompt_ms / 1000);
  w.metric('llamacpp:tokens_predicted_total', 'counter', 'Number of generation tokens processed.', t.output_tokens);
  w.metric('llamacpp:tokens_predicted_seconds_total', 'counter', 'Predict process time.', t.decode_ms / 1000);
  w.metric('llamacpp:prompt_tokens_seconds', 'gauge', 'Average prompt throughput in tokens/s.', t.prompt_tok_s);
  w.metric('llamacpp:predicted_tokens_seconds', 'gauge', 'Average generation throughput in tokens/s.', t.decode_tok_s);
  w.metric('llamacpp:requests_processing', 'gauge', 'Number of requests processing.', m.live.admitting + m.live.running + m.live.finishing);
  w.metric('llamacpp:requests_deferred', 'gauge', 'Number of requests deferred.', m.live.queued);
  if (m.model) w.metric('llamacpp:n_ctx', 'gauge', 'Context one request may hold (a slot\'s, or the one the slots share).', m.model.ctx);

  w.metric('strata:requests', 'gauge', 'Accepted requests by state (each is in exactly one).',
    (['queued', 'admitting', 'running', 'finishing'] as const).map((s) => ({ labels: { state: s }, value: m.live[s] })));
  w.metric('strata:requests_total', 'counter', 'Ended requests by how they ended.',
    Object.entries(t.by_finish).map(([finish, n]) => ({ labels: { finish }, value: n })));
  w.metric('strata:prompt_tokens_total', 'counter', 'Prompt tokens of ended requests (read or reused).', t.prompt_tokens);
  w.metric('strata:reused_tokens_total', 'counter', 'Prompt tokens taken from the cache instead of read.', t.reused_tokens);
  w.metric('strata:live_tokens_per_second', 'gauge', 'Generation speed of running requests now.', m.live.tok_s);
  w.metric('strata:draft_tokens_total', 'counter', 'Speculative draft tokens verified.', t.drafted_tokens);
  w.metric('strata:draft_accepted_tokens_total', 'counter', 'Speculative draft tokens the model agreed with.', t.accepted_tokens);
  w.metric('strata:draft_position_drafted_total', 'counter', 'Speculative drafts that reached this position (1: the first draft token).',
    t.draft_positions.map((p) => ({ labels: { position: p.position }, value: p.drafted })));
  w.metric('strata:draft_position_accepted_total', 'counter', 'Speculative drafts the model accepted up to and including this position.',
    t.draft_positions.map((p) => ({ labels: { position: p.position }, value: p.accepted })));
  const ne = m.next_edit;
  if (ne) {
    w.metric('strata:next_edit_requests_total', 'counter', 'Next-edit requests by how they ended (the answer\'s outcome, or failed).',
      Object.entries(ne.requests).map(([outcome, n]) => ({ labels: { outcome }, value: n })));
    w.metric('strata:next_edit_completion_tokens_total', 'counter', 'Tokens of next-edit answers.', ne.completion_tokens);
    w.metric('strata:next_edit_prediction_tokens_total', 'counter', 'Next-edit region tokens drafted as the prediction: accepted or rejected.',
      [{ labels: { result: 'accepted' }, value: ne.accepted_prediction_tokens }, { labels: { result: 'rejected' }, value: ne.rejected_prediction_tokens }]);
  }
  w.metric('strata:slot_held_tokens', 'gauge', 'Tokens held by each slot.',
    m.live.slots.map((s) => ({ labels: { replica: s.replica, slot: s.slot }, value: s.held_tokens })));
  const cc = m.conversation_cache;
  if (cc) {
    w.metric('strata:conversation_cache_parked', 'gauge', 'Conversations parked in host RAM.', cc.parked);
    w.metric('strata:conversation_cache_bytes', 'gauge', 'Bytes of parked conversations.', cc.bytes);
    w.metric('strata:conversation_cache_budget_bytes', 'gauge', 'Budget for parked conversations.', cc.budget);
    w.metric('strata:conversation_cache_hits_total', 'counter', 'Requests restored from the park.', cc.hits);
    w.metric('strata:conversation_cache_misses_total', 'counter', 'Park lookups that found nothing.', cc.misses);
    w.metric('strata:conversation_cache_evictions_total', 'counter', 'Parked conversations evicted.', cc.evictions);
  }
  w.metric('strata:engine_up', 'gauge', 'Whether the engine replica is ready (1) or not (0).',
    m.engines.map((e) => ({ labels: { replica: e.replica }, value: e.state === 'ready' ? 1 : 0 })));
  w.metric('strata:engine_epoch', 'gauge', 'Engine process generation (grows on each restart).',
    m.engines.map((e) => ({ labels: { replica: e.replica }, value: e.epoch })));
  w.metric('strata:engine_restarts_total', 'counter', 'Engine restarts.',
    m.engines.map((e) => ({ labels: { replica: e.replica }, value: e.restarts })));
  w.metric('strata:stale_frames_total', 'counter', 'Engine messages dropped as belonging to no live request.', m.stale_frames);
  if (m.slow_readers) {
    w.metric('strata:slow_readers_cut_total', 'counter', 'Streaming clients disconnected for falling behind (--slow-reader-ms).', m.slow_readers.cut);
    w.metric('strata:slow_reader_bound_seconds', 'gauge', 'How far behind a streaming client may fall before it is cut (0 = never).', m.slow_readers.bound_ms / 1000);
  }
  w.metric('strata:log_lines_dropped_total', 'counter', 'Log lines dropped because the console could not keep up.', m.log_lines_dropped);
  w.histogram('strata:event_to_sse_seconds',
    'Server overhead per streamed token event: engine step hand-over to its SSE bytes written.', m.event_to_sse);
  const models = m.models?.data ?? [];
  const STATES = ['loaded', 'loading', 'unloaded', 'failed'] as const;
  w.metric('strata:model_state', 'gauge', 'Each served model\'s state (1 for the state it is in).',
    models.flatMap((x) => STATES.map((st) => ({ labels: { model: x.name, state: st }, value: x.state === st ? 1 : 0 }))));
  w.metric('strata:model_memory_estimate_bytes', 'gauge', 'Host RAM budgeted for each model (file size plus KV for ctx x slots).',
    models.map((x) => ({ labels: { model: x.name }, value: x.memory_estimate })));
  w.metric('strata:model_pinned', 'gauge', 'Models never unloaded by LRU or idle time (--pin): 1, else 0.',
    models.map((x) => ({ labels: { model: x.name }, value: x.pinned ? 1 : 0 })));
  w.metric('strata:model_device_memory_bytes', 'gauge', 'What each loaded model holds on each offload device (llama.cpp\'s buffers).',
    models.flatMap((x) => Object.entries(x.device_memory).map(([device, bytes]) => ({ labels: { model: x.name, device }, value: bytes }))));
  w.metric('strata:model_requests_in_flight', 'gauge', 'Requests holding each model (it is never unloaded while any do).',
    models.map((x) => ({ labels: { model: x.name }, value: x.requests_in_flight })));
  w.metric('strata:model_requests_total', 'counter', 'Requests each model served.', models.map((x) => ({ labels: { model: x.name }, value: x.requests_total })));
  w.metric('strata:model_loads_total', 'counter', 'Loads of each model.', models.map((x) => ({ labels: { model: x.name }, value: x.loads })));
  w.metric('strata:model_unloads_total', 'counter', 'Unloads of each model (asked, idle, or to make room).', models.map((x) => ({ labels: { model: x.name }, value: x.unloads })));
  w.metric('strata:invariant_violations_total', 'counter', 'Refused request state moves (should stay 0).', t.invariant_violations);
  return w.text();
}
