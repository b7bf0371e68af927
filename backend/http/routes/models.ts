// GET /v1/models (every served model, its state and role), POST /v1/models/load and
// /v1/models/unload {model} for scripts: 404 for a model not served, 409 for an unload while
// requests are in flight.
import { basename } from 'node:path';
import type { ModelActionBody, ModelEntryBody, ModelsBody, ModelsMetricsBody } from '../../../contract/models.js';
import { apiError } from '../../validation/errors.js';
import type { AppContext, ServedModelRow } from '../app-context.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

function entryOf(app: AppContext, row: ServedModelRow): ModelEntryBody {
  const model = row.state === 'loaded' ? row.app?.model() ?? null : null;
  const file = basename(row.file);
  return {
    id: model?.id ?? row.name, object: 'model', created: model?.created ?? Math.floor(app.startedAt / 1000), owned_by: 'strata',
    state: row.state, role: row.role, default: row.default, file, error: row.error,
    meta: model ? {
      file: basename(model.path), demo: model.demo, architecture: model.info.architecture, params: model.info.params,
      size: model.info.sizeBytes, n_ctx: model.info.ctx, n_ctx_train: model.info.trainCtx,
      n_ctx_pool: model.info.ctxPool, kv_unified: model.info.kvUnified, n_vocab: model.info.vocabSize,
      slots: model.info.slots, kv_type: model.info.kvType, flash_attn: model.info.flashAttn,
      fim: model.info.fim !== null, chat_template: model.template.source, tool_format: model.template.toolFormat,
      embedding: model.info.embedding, speculative: model.info.speculative,
    } : { file, loading: row.state === 'loading' || (!app.models.several && row.state === 'unloaded') },
  };
}

export function modelsList(app: AppContext, { res }: RouteContext): void {
  const body: ModelsBody = { object: 'list', data: app.models.rows().map((r) => entryOf(app, r)) };
  sendJson(res, 200, body);
}

/** The served model a load/unload names: its served name, or the id answers carry. */
async function namedModel(app: AppContext, req: RouteContext['req']): Promise<string> {
  const body = await readJson(req, app.bodies);
  const asked = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).model : undefined;
  if (typeof asked !== 'string' || asked === '') {
    throw apiError('missing_required_parameter', 'model: give the name of a served model (GET /v1/models lists them)', { param: 'model' });
  }
  const rows = app.models.rows();
  const row = rows.find((r) => r.name === asked) ?? rows.find((r) => r.app?.model()?.id === asked);
  if (!row) throw apiError('model_not_found', `the model '${asked}' is not served; served models: ${rows.map((r) => r.name).join(', ')}`, { param: 'model' });
  return row.name;
}

export async function modelLoad(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body: ModelActionBody = await app.models.load(await namedModel(app, req));
  sendJson(res, 200, body);
}

export async function modelUnload(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body: ModelActionBody = await app.models.unload(await namedModel(app, req));
  sendJson(res, 200, body);
}

/** The /metrics `models` section. */
export function modelsMetrics(app: AppContext): ModelsMetricsBody {
  const b = app.models.budget();
  return {
    max_loaded: b.maxLoaded, ram_budget: b.ramBudget, idle_unload_ms: b.idleUnloadMs, device_margin: b.deviceMargin,
    data: app.models.rows().map(({ app: _app, default: _default, ...row }) => ({ ...row, file: basename(row.file) })),
  };
}
