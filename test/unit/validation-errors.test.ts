import { describe, expect, it } from 'vitest';
import { ApiError, apiError, toApiError } from '../../backend/validation/errors.js';
import { ChatTemplateError } from '../../backend/chat/template.js';
import type { ErrorCode } from '../../contract/error-codes.js';

describe('ApiError', () => {
  it("serialises as OpenAI's error object, status and type from the code's row", () => {
    expect(apiError('invalid_value', 'temperature: must be a number', { param: 'temperature' }).toJSON()).toEqual({
      error: { message: 'temperature: must be a number', type: 'invalid_request_error', code: 'invalid_value', param: 'temperature' },
    });
    expect(JSON.parse(JSON.stringify(apiError('engine_unavailable', 'engine restarting')))).toEqual({
      error: { message: 'engine restarting', type: 'server_error', code: 'engine_unavailable', param: null },
    });
    const key = apiError('invalid_api_key', 'bad key');
    expect([key.status, key.type, key.code, key.message]).toEqual([401, 'authentication_error', 'invalid_api_key', 'bad key']);
    expect(key).toBeInstanceOf(Error);
    expect(apiError('host_not_allowed', 'no').type).toBe('permission_error');
  });

  it("takes the table's message when the thrower gives none (or a null reason)", () => {
    expect(apiError('shutting_down').message).toBe('the server is shutting down');
    expect(apiError('model_loading', null).message).toBe('the model is still loading');
    expect(apiError('engine_unavailable', 'restarting after a crash').message).toBe('restarting after a crash');
  });

  it('carries a context overflow as numbers beside the message', () => {
    const e = apiError('context_length_exceeded', 'prompt is 9 tokens', { param: 'prompt', n_prompt_tokens: 9, n_ctx: 8 });
    expect(e.toJSON().error).toEqual({
      message: 'prompt is 9 tokens', type: 'invalid_request_error', code: 'context_length_exceeded', param: 'prompt', n_prompt_tokens: 9, n_ctx: 8,
    });
    // @ts-expect-error: a context overflow without its numbers does not compile
    expect(apiError('context_length_exceeded', 'too long').overflow).toBeNull();
  });

  it('refuses a code that is not in the table', () => {
    expect(() => new ApiError('no_such_code' as ErrorCode, 'x')).toThrow(RangeError);
    // @ts-expect-error: only the table's codes compile
    expect(() => apiError('made_up', 'x')).toThrow(/not an error code/);
  });

  it('maps thrown values: template refusals to 400, template failures and the rest to 500', () => {
    const same = apiError('request_too_large', 'too big');
    expect(toApiError(same)).toBe(same);
    const raised = toApiError(new ChatTemplateError('chat template rejected the messages: roles must alternate', 'raised'));
    expect([raised.status, raised.type, raised.code, raised.param, raised.message])
      .toEqual([400, 'invalid_request_error', 'template_rejected', 'messages', 'chat template rejected the messages: roles must alternate']);
    const render = toApiError(new ChatTemplateError('chat template failed to render: x', 'render'));
    expect([render.status, render.code]).toEqual([500, 'template_error']);
    const other = toApiError(new TypeError('boom'));
    expect([other.status, other.code, other.message]).toEqual([500, 'internal_error', 'internal error: boom']);
  });
});
