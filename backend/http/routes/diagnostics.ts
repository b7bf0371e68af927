// GET /metrics (JSON), /metrics/prometheus, /v1/traces and /v1/traces/{id}.
import type { TraceBody, TracesBody } from '../../../contract/traces.js';
import { apiError } from '../../validation/errors.js';
import { buildMetrics } from '../../metrics/metrics-json.js';
import { prometheusText } from '../../metrics/prometheus.js';
import type { AppContext } from '../app-context.js';
import { modelsMetrics } from './models.js';
import { nextEditCounters } from '../../next-edit/next-edit-stats.js';
import { sendJson, sendText } from '../respond.js';
import type { RouteContext } from '../router.js';

function intParam(url: URL, name: string, def: number, max: number): number {
  const v = url.searchParams.get(name);
  if (v === null) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > max) throw apiError('invalid_value', `query parameter ${name} must be an integer in [0, ${max}], got '${v}'`, { param: name });
  return n;
}

function sources(app: AppContext) {
  const m = app.model();
  return {
    ledger: app.ledger, scheduler: app.scheduler, engines: app.engines,
    model: m ? { id: m.id, info: m.info, demo: m.demo } : null,
    stopping: app.stopping(), startedAt: app.startedAt, logDropped: app.log.dropped,
    eventToSse: app.traces.eventToSse.snapshot(),
    slowReaders: { boundMs: app.readers.boundMs, cut: app.readers.cut, kernelVisible: app.readers.kernelVisible },
    models: modelsMetrics(app),
    nextEdit: nextEditCounters(app.ledger).snapshot(),
  };
}

export async function metricsJson(app: AppContext, { res, url }: RouteContext): Promise<void> {
  const n = intParam(url, 'requests', 50, 100_000);
  sendJson(res, 200, await buildMetrics(sources(app), { requests: n }));
}

export async function metricsPrometheus(app: AppContext, { res }: RouteContext): Promise<void> {
  sendText(res, 200, prometheusText(await buildMetrics(sources(app), { requests: 0 })), 'text/plain; version=0.0.4; charset=utf-8');
}

export async function tracesList(app: AppContext, { res, url }: RouteContext): Promise<void> {
  const limit = intParam(url, 'limit', 100, 10_000);
  await app.traces.drain();
  const body: TracesBody = { object: 'list', requests: app.traces.list(limit), steps: app.traces.recentSteps(intParam(url, 'steps', 256, 100_000)) };
  sendJson(res, 200, body);
}

export async function traceOne(app: AppContext, { res, params }: RouteContext): Promise<void> {
  const m = /^(?:chatcmpl-|cmpl-)?(\d+)$/.exec(params.id ?? '');
  if (!m) throw apiError('invalid_value', `'${params.id}' is not a request id (a number, or chatcmpl-N / cmpl-N)`, { param: 'id' });
  const id = Number(m[1]);
  const live = app.ledger.get(id);
  if (live) {
    const body: TraceBody = {
      request: {
        id: live.id, kind: live.kind, state: live.state, replica: live.replica, epoch: live.epoch, engine_id: live.engineId,
        slot: live.slot, prompt_tokens: live.promptTokens, reused: live.reused, generated: live.generated,
        accepted: new Date(live.acceptedAt).toISOString(),
      },
      steps: [],
    };
    sendJson(res, 200, body);
    return;
  }
  await app.traces.drain();
  const t = app.traces.get(id);
  if (!t) throw apiError('trace_not_found', `no trace for request ${id} (only recent requests are kept)`, { param: 'id' });
  sendJson(res, 200, t satisfies TraceBody);
}
