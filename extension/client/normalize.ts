// Turns the OpenAI-compatible endpoints' JSON (health, models, infill, usage, timings, errors) into
// the typed shapes of types.ts. Tolerant on purpose: in remote mode the server may be llama-server,
// Ollama or another OpenAI-compatible one, so a field it omits becomes null (never 0) and their
// alternative keys are read. Strata's own endpoints (/metrics, /v1/traces, /v1/devices,
// /v1/sessions) are read strictly through contract/, never here.
import type { Timings, Usage } from '../../contract/chat.js';
import { parseEngineDeath } from '../../contract/health.js';
import type { Health, InfillResult, InfillStreamEvent, ModelEntry } from './types.js';

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
export function parseHealth(status: number, body: unknown): Health {
  const o = obj(body);
  const s = str(o, 'status');
  const state: Health['status'] = status === 200 && (s === null || s === 'ok') ? 'ok'
    : s === 'failed' ? 'failed' : status === 503 || s === 'loading' ? 'loading' : 'error';
  return {
    status: state, model: str(o, 'model', 'model_name'), slots: num(o, 'slots', 'n_slots'), reason: str(o, 'reason'),
    loadTimeoutMs: num(o, 'load_timeout_ms'),
    // Strata's own field: read strictly through the contract (another server never sends it).
    engineDeath: parseEngineDeath(o.engine_death),
    ...(typeof o.key_proof === 'string' ? { keyProof: o.key_proof } : {}),
  };
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

/** The default model's name and file size in /v1/models (Strata's default flag and meta.size; the only model if just one), else null. */
export function defaultModelSize(body: unknown): { model: string; bytes: number } | null {
  const rows = arr(obj(body).data).map(obj);
  const row = rows.find((m) => m.default === true) ?? (rows.length === 1 ? rows[0] : undefined);
  const bytes = row ? num(row, 'meta.size') : null;
  const model = row ? str(row, 'id') : null;
  return model !== null && bytes !== null && bytes > 0 ? { model, bytes } : null;
}

/**
 * The context per slot of the model chat requests go to, from /v1/models: Strata's meta.n_ctx (its
 * --ctx, per slot) of the entry named `chatModel`, else the one whose role is chat, else the
 * default, else the only one. Never n_ctx_train: that is what the model was trained with, not
 * what a slot holds.
 */
export function slotContextOf(body: unknown, chatModel: string | undefined): number | null {
  const rows = arr(obj(body).data).map(obj);
  const row = (chatModel !== undefined ? rows.find((m) => m.id === chatModel) : undefined)
    ?? rows.find((m) => m.role === 'chat') ?? rows.find((m) => m.default === true) ?? (rows.length === 1 ? rows[0] : undefined);
  const n = row ? num(row, 'meta.n_ctx') : null;
  return n !== null && n > 0 ? n : null;
}

/** llama-server's /props: the context of each slot (default_generation_settings.n_ctx). */
export function propsSlotContext(body: unknown): number | null {
  const n = num(obj(body), 'default_generation_settings.n_ctx');
  return n !== null && n > 0 ? n : null;
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
    ...(num(u, 'completion_tokens_details.reasoning_tokens') !== null ? { reasoningTokens: num(u, 'completion_tokens_details.reasoning_tokens')! } : {}),
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

/**
 * The candidates' pieces in one streamed infill event: OpenAI's `choices[]` (index, text,
 * finish_reason); a server that sends only llama-server's `content` has one candidate, index 0.
 */
export function parseInfillChunk(chunk: unknown): InfillStreamEvent[] {
  const o = obj(chunk);
  const choices = arr(o.choices);
  const out: InfillStreamEvent[] = [];
  if (!choices.length) {
    const text = str(o, 'content');
    if (text) out.push({ type: 'text', index: 0, text });
    if (o.stop === true) out.push({ type: 'end', index: 0, finishReason: str(o, 'stop_type') ?? 'stop' });
    return out;
  }
  for (const raw of choices) {
    const c = obj(raw);
    const index = num(c, 'index') ?? 0;
    const text = str(c, 'text');
    if (text) out.push({ type: 'text', index, text });
    const finish = str(c, 'finish_reason');
    if (finish) out.push({ type: 'end', index, finishReason: finish });
  }
  return out;
}

/** The message of an OpenAI-style error body, or null. */
export function errorMessage(body: unknown): string | null {
  const e = obj(obj(body).error);
  return str(e, 'message') ?? (typeof obj(body).error === 'string' ? (obj(body).error as string) : null);
}
