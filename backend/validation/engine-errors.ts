// The one table from an engine call's failure to the HTTP answer, for every route (sessions,
// tokenizing, grammar builds, anything that calls the engine). The code decides (engine/client.ts
// CallErrorCode: the engine's EngineErrorCode, or engine_unavailable); a plain 'failed' means
// what that call's row says (a grammar the converter refuses is the client's schema, a tokenize
// that fails is an engine in trouble). A message's wording never decides a status. A new code
// is added to native/src/engine_error.h, native/lib/addon.d.ts, the code set in engine/calls.ts
// and here; a new call gets its 'failed' row here (the compiler asks for both).
import type { CallName } from '../engine/calls.js';
import { EngineCallError, type CallErrorCode } from '../engine/client.js';
import { ApiError } from './errors.js';

export interface ErrorAnswer { status: number; code: string }

const SESSION_ERROR: ErrorAnswer = { status: 500, code: 'session_error' };
const ENGINE_ERROR: ErrorAnswer = { status: 500, code: 'engine_error' };
// Tokenizing the prompt is the engine's part of every generation: its failure is the engine's.
const TOKENIZE_ERROR: ErrorAnswer = { status: 503, code: 'engine_unavailable' };

export const ENGINE_ERROR_STATUS: Readonly<Record<Exclude<CallErrorCode, 'failed'>, ErrorAnswer>> & {
  readonly failed: Readonly<Record<CallName, ErrorAnswer>>;
} = {
  session_model_mismatch: { status: 409, code: 'session_model_mismatch' },
  session_unreadable: { status: 422, code: 'session_unreadable' },
  conversation_not_found: { status: 404, code: 'conversation_not_found' },
  no_space: { status: 507, code: 'insufficient_storage' },
  engine_unavailable: { status: 503, code: 'engine_unavailable' },
  engine_closed: { status: 503, code: 'engine_unavailable' },
  park_unavailable: SESSION_ERROR,
  io_error: SESSION_ERROR,
  failed: {
    tokenize: TOKENIZE_ERROR, tokenizeSegments: TOKENIZE_ERROR, tokenizeParts: TOKENIZE_ERROR, detokenize: TOKENIZE_ERROR,
    saveSession: SESSION_ERROR, loadSession: SESSION_ERROR,
    snapshot: ENGINE_ERROR, traces: ENGINE_ERROR, devices: ENGINE_ERROR,
    // The converter (or the GBNF parser) refused what the request asked for.
    buildGrammar: { status: 400, code: 'unsupported_schema' },
    // The bytes are no image the projector reads, or too many pixels: the client's input.
    prepareImage: { status: 400, code: 'invalid_image' },
  },
};

/**
 * The answer for an engine call's failure: `call` is the call the route made (an EngineCallError
 * says its own); no error at all (no engine was ready to call) is engine_unavailable.
 */
export function engineErrorAnswer(e: unknown, call: CallName): ErrorAnswer {
  const code: CallErrorCode = e instanceof EngineCallError ? e.code : e === null || e === undefined ? 'engine_unavailable' : 'failed';
  return code === 'failed' ? ENGINE_ERROR_STATUS.failed[e instanceof EngineCallError ? e.call : call] : ENGINE_ERROR_STATUS[code];
}

/**
 * An engine call's failure as the status a client can act on; `what` says which request failed
 * (`could not save session 'x'`), `param` the field at fault when the client's input was refused.
 */
export function engineCallApiError(e: unknown, call: CallName, what: string, param?: string): ApiError {
  if (e instanceof ApiError) return e;
  const row = engineErrorAnswer(e, call);
  // The engine's own words (`what` already says which call failed).
  const message = e instanceof EngineCallError ? e.detail : e instanceof Error ? e.message : String(e ?? 'no engine is ready');
  return new ApiError(row.status, `${what}: ${message}`, { code: row.code, ...(param !== undefined ? { param } : {}) });
}
