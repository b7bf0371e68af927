import { describe, expect, it } from 'vitest';
import { ENGINE_ERROR_CODE, engineCallApiError } from '../../backend/validation/engine-errors.js';
import { EngineCallError } from '../../backend/engine/client.js';
import { CALL_NAMES, ENGINE_ERROR_CODES, type CallName } from '../../backend/engine/calls.js';

describe('engine call failures as HTTP answers', () => {
  it('follow the code, never the wording of the message', () => {
    const answer = (call: CallName, code: ConstructorParameters<typeof EngineCallError>[2], detail: string) => {
      const e = engineCallApiError(new EngineCallError(call, detail, code), call, 'could not restore session \'x\'');
      return [e.status, e.code];
    };
    expect(answer('loadSession', 'session_model_mismatch', 'whatever the engine says')).toEqual([409, 'session_model_mismatch']);
    expect(answer('loadSession', 'session_unreadable', 'saved with another model (this text does not decide)')).toEqual([422, 'session_unreadable']);
    expect(answer('saveSession', 'conversation_not_found', 'corrupt')).toEqual([404, 'conversation_not_found']);
    expect(answer('saveSession', 'no_space', 'x')).toEqual([507, 'insufficient_storage']);
    expect(answer('saveSession', 'engine_unavailable', 'x')).toEqual([503, 'engine_unavailable']);
    expect(answer('saveSession', 'engine_closed', 'engine is closed')).toEqual([503, 'engine_unavailable']);
    expect(answer('saveSession', 'failed', 'another model, corrupt, no space, closed')).toEqual([500, 'session_error']);
    expect(engineCallApiError(new Error('a plain error'), 'saveSession', 'w').status).toBe(500);
    expect(engineCallApiError(null, 'saveSession', 'w').status).toBe(503);
  });

  it('a plain failure means what its call says: a refused grammar is the client\'s, a failed tokenize the engine\'s', () => {
    const grammar = engineCallApiError(new EngineCallError('buildGrammar', 'Unrecognized schema: engine is closed', 'failed'), 'buildGrammar', 'response_format', 'response_format');
    expect([grammar.status, grammar.code, grammar.param, grammar.message]).toEqual([400, 'unsupported_schema', 'response_format', 'response_format: Unrecognized schema: engine is closed']);
    const gone = engineCallApiError(new EngineCallError('buildGrammar', 'engine (replica 0) is restarting', 'engine_unavailable'), 'buildGrammar', 'w');
    expect([gone.status, gone.code]).toEqual([503, 'engine_unavailable']);
    const tokenize = engineCallApiError(new EngineCallError('tokenizeParts', 'invalid UTF-8', 'failed'), 'tokenizeParts', 'the engine could not tokenize the prompt');
    expect([tokenize.status, tokenize.message]).toEqual([503, 'the engine could not tokenize the prompt: invalid UTF-8']);
    // The call an EngineCallError names wins over the route's guess.
    expect(engineCallApiError(new EngineCallError('buildGrammar', 'no', 'failed'), 'tokenize', 'w').status).toBe(400);
    expect(engineCallApiError(new EngineCallError('devices', 'no', 'failed'), 'devices', 'w').code).toBe('engine_error');
  });

  it('has a row for every code the engine can send, and a failed row for every call', () => {
    for (const code of [...ENGINE_ERROR_CODES, 'engine_unavailable' as const]) expect(ENGINE_ERROR_CODE[code]).toBeDefined();
    expect(Object.keys(ENGINE_ERROR_CODE.failed).sort()).toEqual([...CALL_NAMES].sort());
    const e = new EngineCallError('saveSession', 'disk full', 'no_space');
    expect([e.message, e.detail, e.call]).toEqual(['saveSession: disk full', 'disk full', 'saveSession']);
  });
});
