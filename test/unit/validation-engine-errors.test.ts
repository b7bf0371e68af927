import { describe, expect, it } from 'vitest';
import { ENGINE_ERROR_STATUS, engineCallApiError } from '../../backend/validation/engine-errors.js';
import { EngineCallError } from '../../backend/engine/client.js';
import { ENGINE_ERROR_CODES } from '../../backend/engine/calls.js';

describe('engine call failures as HTTP answers', () => {
  it('follow the code, never the wording of the message', () => {
    const answer = (code: ConstructorParameters<typeof EngineCallError>[1], message: string) => {
      const e = engineCallApiError(new EngineCallError(message, code), 'could not restore session \'x\'');
      return [e.status, e.code];
    };
    expect(answer('session_model_mismatch', 'loadSession: whatever the engine says')).toEqual([409, 'session_model_mismatch']);
    expect(answer('session_unreadable', 'loadSession: saved with another model (this text does not decide)')).toEqual([422, 'session_unreadable']);
    expect(answer('conversation_not_found', 'saveSession: corrupt')).toEqual([404, 'conversation_not_found']);
    expect(answer('no_space', 'saveSession: x')).toEqual([507, 'insufficient_storage']);
    expect(answer('engine_unavailable', 'saveSession: x')).toEqual([503, 'engine_unavailable']);
    expect(answer('engine_closed', 'saveSession: engine is closed')).toEqual([503, 'engine_unavailable']);
    expect(answer('failed', 'saveSession: another model, corrupt, no space, closed')).toEqual([500, 'session_error']);
    expect(engineCallApiError(new Error('a plain error'), 'w').status).toBe(500);
    expect(engineCallApiError(null, 'w').status).toBe(503);
  });
  it('has a row for every code the engine can send', () => {
    for (const code of [...ENGINE_ERROR_CODES, 'engine_unavailable' as const]) expect(ENGINE_ERROR_STATUS[code]).toBeDefined();
    expect(new EngineCallError('m', 'io_error').message).toBe('m');
  });
});
