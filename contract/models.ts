// GET /v1/models (every served model with its state and role), POST /v1/models/load and
// /v1/models/unload, and the /metrics `models` section: the server's JSON (built by
// backend/http/routes/models.ts) and its runtime checks. The panel lists the models from the
// /metrics section (metrics.ts's view), which it polls already.
import * as z from 'zod/mini';

export type ModelRole = 'completion' | 'chat' | 'embedding' | 'rerank';
export type ModelState = 'loaded' | 'loading' | 'unloaded' | 'failed';

/** What a loaded model's engine reported (today's /v1/models meta); a model not loaded has only `file`. */
export interface LoadedModelMeta {
  file: string;
  demo: boolean;
  architecture: string;
  params: number;
  size: number;
  /** The most one request may hold, prompt and answer. */
  n_ctx: number;
  n_ctx_train: number;
  /** KV cells in all; with kv_unified the slots share them (no --ctx), else n_ctx x slots. */
  n_ctx_pool?: number;
  kv_unified?: boolean;
  n_vocab: number;
  slots: number;
  kv_type: string;
  flash_attn: boolean;
  fim: boolean;
  chat_template: string;
  tool_format: string;
  embedding: { pooling: 'mean' | 'cls' | 'last' | 'rank'; dimensions: number } | null;
  speculative: { ngram: boolean; ngramKind: 'lookup' | 'simple' | 'map-k' | 'map-k4v' | 'mod' | 'cache' | null; mtp: boolean; draftModel: string | null; draftKind: 'model' | 'eagle3' | 'dflash' | 'dspark' | null; draftMax: number };
}

export interface ModelEntryBody {
  id: string;
  object: 'model';
  created: number;
  owned_by: 'strata';
  state: ModelState;
  /** What the model is for (null: not set; the default model takes what no role claims). */
  role: ModelRole | null;
  /** The model requests without `model` go to (when no model has their role). */
  default: boolean;
  file: string;
  /** Why the last load failed (state 'failed'). */
  error: string | null;
  meta: LoadedModelMeta | { file: string; loading: boolean };
}

export interface ModelsBody {
  object: 'list';
  data: ModelEntryBody[];
}

/** POST /v1/models/load and /v1/models/unload: the model's state after the call. */
export interface ModelActionBody {
  model: string;
  state: ModelState;
}

/** One model in /metrics `models`. */
export interface ModelMetricsBody {
  name: string;
  state: ModelState;
  role: ModelRole | null;
  file: string;
  /** Never unloaded by LRU or idle time (--pin). */
  pinned: boolean;
  /** Host RAM the server budgets for it: file size plus KV for its ctx and slots, or, on a GPU, the host part the fit probe measured (bytes). */
  memory_estimate: number;
  /** What it holds on each offload device while loaded (bytes by device name, from llama.cpp's buffers); {} otherwise. */
  device_memory: Record<string, number>;
  /** When a request last used it (ISO time; null: never). */
  last_used: string | null;
  /** Requests holding it now (it is never unloaded while any do). */
  requests_in_flight: number;
  /** Requests it has served. */
  requests_total: number;
  loads: number;
  unloads: number;
  /** Milliseconds the current load has run (state 'loading'), else null. */
  loading_ms: number | null;
  error: string | null;
}

export interface ModelsMetricsBody {
  /** Models loaded at most at once (--models-max; null: no count limit). */
  max_loaded: number | null;
  /** Host RAM budget for loaded models (bytes). */
  ram_budget: number;
  /** Idle models unload after this long (ms; 0: never). */
  idle_unload_ms: number;
  /** Memory kept free on every device when models are fitted and made room for (bytes; --fit-margin-mib). */
  device_margin: number;
  data: ModelMetricsBody[];
}

// --- runtime checks ------------------------------------------------------------------------

const num = z.number();
const role = z.nullable(z.enum(['completion', 'chat', 'embedding', 'rerank']));
const state = z.enum(['loaded', 'loading', 'unloaded', 'failed']);

const meta = z.union([
  z.object({
    file: z.string(), demo: z.boolean(), architecture: z.string(), params: num, size: num, n_ctx: num, n_ctx_train: num,
    n_ctx_pool: z.optional(num), kv_unified: z.optional(z.boolean()), n_vocab: num, slots: num, kv_type: z.string(), flash_attn: z.boolean(), fim: z.boolean(), chat_template: z.string(),
    tool_format: z.string(),
    embedding: z.nullable(z.object({ pooling: z.enum(['mean', 'cls', 'last', 'rank']), dimensions: num })),
    speculative: z.object({ ngram: z.boolean(), ngramKind: z.nullable(z.enum(['lookup', 'simple', 'map-k', 'map-k4v', 'mod', 'cache'])), mtp: z.boolean(), draftModel: z.nullable(z.string()), draftKind: z.nullable(z.enum(['model', 'eagle3', 'dflash', 'dspark'])), draftMax: num }),
  }),
  z.object({ file: z.string(), loading: z.boolean() }),
]);

/** GET /v1/models's check (the extension reads model lists tolerantly, any server's; the server's tests check its answer with this). */
export const modelsBodySchema: z.ZodMiniType<ModelsBody> = z.object({
  object: z.literal('list'),
  data: z.array(z.object({
    id: z.string(), object: z.literal('model'), created: num, owned_by: z.literal('strata'), state, role,
    default: z.boolean(), file: z.string(), error: z.nullable(z.string()), meta,
  })),
});

export const modelMetricsSchema: z.ZodMiniType<ModelsMetricsBody> = z.object({
  max_loaded: z.nullable(num),
  ram_budget: num,
  idle_unload_ms: num,
  device_margin: num,
  data: z.array(z.object({
    name: z.string(), state, role, file: z.string(), pinned: z.boolean(), memory_estimate: num,
    device_memory: z.record(z.string(), num), last_used: z.nullable(z.string()),
    requests_in_flight: num, requests_total: num, loads: num, unloads: num, loading_ms: z.nullable(num), error: z.nullable(z.string()),
  })),
});

