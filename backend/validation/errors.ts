// The one error type the HTTP layer answers with, serialised the way OpenAI clients parse it:
// {"error": {"message", "type", "code", "param"}} (contract/errors.ts), with the code's data fields.
// Every ApiError is made from a code of the table (contract/error-codes.ts): its status and type
// come from there, never from the thrower.
import { ERROR_CODES, errorStatus, errorType, type ErrorCode, type ErrorFields, type ErrorType } from '../../contract/error-codes.js';
import type { ApiErrorBody, ContextOverflow } from '../../contract/errors.js';
import { ChatTemplateError } from '../chat/template.js';

export type { ApiErrorBody } from '../../contract/errors.js';
export type { ErrorCode } from '../../contract/error-codes.js';

/** What a thrower adds to a code: the field at fault, and the code's data fields where it has some. */
export type ErrorOptions<C extends ErrorCode> = { param?: string | undefined } & (C extends keyof ErrorFields ? ErrorFields[C] : unknown);

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly type: ErrorType;
  readonly code: ErrorCode;
  /** The request field at fault (`messages[2].role`), when there is one. */
  readonly param: string | null;
  /** What a context_length_exceeded error needed and had, as numbers. */
  readonly overflow: ContextOverflow | null;

  /** Use apiError(): it types the fields each code carries. */
  constructor(code: ErrorCode, message: string, opts: { param?: string | undefined } & Partial<ContextOverflow> = {}) {
    if (!Object.hasOwn(ERROR_CODES, code)) throw new RangeError(`'${code}' is not an error code of contract/error-codes.ts`);
    super(message);
    this.code = code;
    this.status = errorStatus(code);
    this.type = errorType(code);
    this.param = opts.param ?? null;
    this.overflow = opts.n_prompt_tokens !== undefined && opts.n_ctx !== undefined ? { n_prompt_tokens: opts.n_prompt_tokens, n_ctx: opts.n_ctx } : null;
  }

  toJSON(): ApiErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param, ...this.overflow } };
  }
}

type ArgsOf<C extends ErrorCode> = C extends keyof ErrorFields ? [opts: ErrorOptions<C>] : [opts?: ErrorOptions<C>];

/**
 * The error for `code` (contract/error-codes.ts): `message` says what happened, naming the field
 * and the limit (the table's own message when omitted); a code with data fields requires them.
 */
export function apiError<C extends ErrorCode>(code: C, message?: string | null, ...[opts]: ArgsOf<C>): ApiError {
  const text = message ?? (ERROR_CODES[code] as { message?: string }).message ?? code;
  return new ApiError(code, text, opts as { param?: string } & Partial<ContextOverflow>);
}

/**
 * Maps anything a handler threw to an ApiError: ApiErrors as they are, a chat template's own
 * refusal (raise_exception) to 400, other template failures and unknown errors to 500.
 */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof ChatTemplateError) {
    return e.kind === 'raised' ? apiError('template_rejected', e.message, { param: 'messages' }) : apiError('template_error', e.message);
  }
  const message = e instanceof Error ? e.message : String(e);
  return apiError('internal_error', `internal error: ${message}`);
}
