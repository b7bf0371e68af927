// The one error type the HTTP layer answers with, serialised the way OpenAI clients parse it:
// {"error": {"message", "type", "code", "param"}} (contract/errors.ts), with the overflow fields.
import type { ApiErrorBody, ContextOverflow } from '../../contract/errors.js';
import { ChatTemplateError } from '../chat/template.js';

export type { ApiErrorBody } from '../../contract/errors.js';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  /** 'invalid_request_error' for 4xx, 'server_error' for 5xx unless given. */
  readonly type: string;
  readonly code: string | null;
  /** The request field at fault (`messages[2].role`), when there is one. */
  readonly param: string | null;
  /** What a context_length_exceeded error needed and had, as numbers. */
  readonly overflow: ContextOverflow | null;

  constructor(status: number, message: string, opts: { type?: string; code?: string; param?: string; overflow?: ContextOverflow } = {}) {
    super(message);
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`ApiError status must be an HTTP error status (400-599), got ${status}`);
    }
    this.status = status;
    this.type = opts.type ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
    this.code = opts.code ?? null;
    this.param = opts.param ?? null;
    this.overflow = opts.overflow ?? null;
  }

  toJSON(): ApiErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param, ...this.overflow } };
  }
}

/**
 * Maps anything a handler threw to an ApiError: ApiErrors as they are, a chat template's own
 * refusal (raise_exception) to 400, other template failures and unknown errors to 500.
 */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof ChatTemplateError) {
    return e.kind === 'raised'
      ? new ApiError(400, e.message, { code: 'template_rejected', param: 'messages' })
      : new ApiError(500, e.message, { code: 'template_error' });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new ApiError(500, `internal error: ${message}`);
}
