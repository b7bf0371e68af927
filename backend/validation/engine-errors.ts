// The one table from an engine call's failure code to the HTTP answer (engine/client.ts
// CallErrorCode: the engine's EngineErrorCode, or engine_unavailable). A message's wording never
// decides a status: a new code is added to native/src/engine_error.h, native/lib/addon.d.ts,
// the code set in engine/calls.ts, and here (the compiler asks for both).
import { EngineCallError, type CallErrorCode } from '../engine/client.js';
import { ApiError } from './errors.js';

export const ENGINE_ERROR_STATUS: Readonly<Record<CallErrorCode, { status: number; code: string }>> = {
  session_model_mismatch: { status: 409, code: 'session_model_mismatch' },
  session_unreadable: { status: 422, code: 'session_unreadable' },
  conversation_not_found: { status: 404, code: 'conversation_not_found' },
  no_space: { status: 507, code: 'insufficient_storage' },
  engine_unavailable: { status: 503, code: 'engine_unavailable' },
  engine_closed: { status: 503, code: 'engine_unavailable' },
  park_unavailable: { status: 500, code: 'session_error' },
  io_error: { status: 500, code: 'session_error' },
  failed: { status: 500, code: 'session_error' },
};

/** An engine call's failure as the status a client can act on; `what` says which call (`could not save session 'x'`). */
export function engineCallApiError(e: unknown, what: string): ApiError {
  if (e instanceof ApiError) return e;
  const code: CallErrorCode = e instanceof EngineCallError ? e.code : e === null || e === undefined ? 'engine_unavailable' : 'failed';
  const message = e instanceof Error ? e.message : String(e ?? 'no engine is ready');
  const row = ENGINE_ERROR_STATUS[code];
  return new ApiError(row.status, `${what}: ${message}`, { code: row.code });
}
