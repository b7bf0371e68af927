// The one table from an engine call's failure to the HTTP answer, for every route (sessions,
// tokenizing, grammar builds, anything that calls the engine). The code decides (engine/client.ts
// CallErrorCode: the engine's EngineErrorCode, or engine_unavailable); a plain 'failed' means
// what that call's row says (a grammar the converter refuses is the client's schema, a tokenize
// that fails is an engine in trouble). A message's wording never decides a status. A new code
// is added to native/src/engine_error.h, native/lib/addon.d.ts, the code set in engine/calls.ts
// and here; a new call gets its 'failed' row here (the compiler asks for both).
import type { CallName } from '../engine/calls.js';
import { EngineCallError, type CallErrorCode } from '../engine/client.js';
import { apiError, ApiError, type ErrorCode } from './errors.js';

// Tokenizing the prompt is the engine's part of every generation: its failure is the engine's.
const TOKENIZE_ERROR: ErrorCode = 'engine_unavailable';

/** Each engine code as the API's error code (its status: contract/error-codes.ts). */
export const ENGINE_ERROR_CODE: Readonly<Record<Exclude<CallErrorCode, 'failed'>, ErrorCode>> & {
  readonly failed: Readonly<Record<CallName, ErrorCode>>;
} = {
  session_model_mismatch: 'session_model_mismatch',
  session_unreadable: 'session_unreadable',
  conversation_not_found: 'conversation_not_found',
  no_space: 'insufficient_storage',
  engine_unavailable: 'engine_unavailable',
  engine_closed: 'engine_unavailable',
  park_unavailable: 'session_error',
  io_error: 'session_error',
  failed: {
    tokenize: TOKENIZE_ERROR, tokenizeSegments: TOKENIZE_ERROR, tokenizeParts: TOKENIZE_ERROR, detokenize: TOKENIZE_ERROR,
    saveSession: 'session_error', loadSession: 'session_error',
    snapshot: 'engine_error', traces: 'engine_error', devices: 'engine_error',
    // The converter (or the GBNF parser) refused what the request asked for.
    buildGrammar: 'unsupported_schema',
    // The bytes are no image the projector reads, or too many pixels: the client's input.
    prepareImage: 'invalid_image',
  },
};

/**
 * The answer for an engine call's failure: `call` is the call the route made (an EngineCallError
 * says its own); no error at all (no engine was ready to call) is engine_unavailable.
 */
export function engineErrorCode(e: unknown, call: CallName): ErrorCode {
  const code: CallErrorCode = e instanceof EngineCallError ? e.code : e === null || e === undefined ? 'engine_unavailable' : 'failed';
  return code === 'failed' ? ENGINE_ERROR_CODE.failed[e instanceof EngineCallError ? e.call : call] : ENGINE_ERROR_CODE[code];
}

/**
 * An engine call's failure as the status a client can act on; `what` says which request failed
 * (`could not save session 'x'`), `param` the field at fault when the client's input was refused.
 */
export function engineCallApiError(e: unknown, call: CallName, what: string, param?: string): ApiError {
  if (e instanceof ApiError) return e;
  const code = engineErrorCode(e, call);
  // The engine's own words (`what` already says which call failed).
  const message = e instanceof EngineCallError ? e.detail : e instanceof Error ? e.message : String(e ?? 'no engine is ready');
  return apiError(code, `${what}: ${message}`, { param });
}
