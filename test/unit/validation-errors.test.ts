import { describe, expect, it } from 'vitest';
import { ApiError, toApiError } from '../../backend/validation/errors.js';
import { ChatTemplateError } from '../../backend/chat/template.js';

describe('ApiError', () => {
  it("serialises as OpenAI's error object, type from the status", () => {
    expect(new ApiError(400, 'temperature: must be a number', { param: 'temperature', code: 'invalid_value' }).toJSON()).toEqual({
      error: { message: 'temperature: must be a number', type: 'invalid_request_error', code: 'invalid_value', param: 'temperature' },
    });
    expect(JSON.parse(JSON.stringify(new ApiError(503, 'engine restarting')))).toEqual({
      error: { message: 'engine restarting', type: 'server_error', code: null, param: null },
    });
    const custom = new ApiError(401, 'bad key', { type: 'authentication_error', code: 'invalid_api_key' });
    expect([custom.status, custom.type, custom.code, custom.message]).toEqual([401, 'authentication_error', 'invalid_api_key', 'bad key']);
    expect(custom).toBeInstanceOf(Error);
  });

  it('refuses a status that is not an HTTP error', () => {
    expect(() => new ApiError(200, 'ok')).toThrow(RangeError);
    expect(() => new ApiError(600, 'x')).toThrow(RangeError);
  });

  it('maps thrown values: template refusals to 400, template failures and the rest to 500', () => {
    const same = new ApiError(413, 'too big');
    expect(toApiError(same)).toBe(same);
    const raised = toApiError(new ChatTemplateError('chat template rejected the messages: roles must alternate', 'raised'));
    expect([raised.status, raised.type, raised.param, raised.message]).toEqual([400, 'invalid_request_error', 'messages', 'chat template rejected the messages: roles must alternate']);
    expect(toApiError(new ChatTemplateError('chat template failed to render: x', 'render')).status).toBe(500);
    const other = toApiError(new TypeError('boom'));
    expect([other.status, other.message]).toEqual([500, 'internal error: boom']);
  });
});
