// The engine host protocol's validators: well-formed messages pass unchanged, malformed ones
// are refused with an error that names the problem.
import { describe, expect, it } from 'vitest';
import { CALL_NAMES } from '../../backend/engine/calls.js';
import { ProtocolError, parseCommand, parseHostMessage } from '../../backend/engine/protocol.js';

describe('parseHostMessage', () => {
  it('accepts every host message kind and returns it unchanged', () => {
    const msgs = [
      { kind: 'ready', epoch: 1, pid: 42, info: { description: 'tiny' } },
      { kind: 'loadError', epoch: 1, error: 'model file not found: /x.gguf' },
      { kind: 'events', epoch: 2, events: [
        { type: 'admitted', id: 7, slot: 0, promptTokens: 5, reused: 0, restored: false },
        { type: 'tokens', id: 7, ids: [1, 2], text: 'ab' },
        { type: 'done', id: 8, finish: 'stop', promptTokens: 3, reused: 0, promptMs: 1, decodeMs: 2, generated: 1, text: '' },
      ] },
      // The engine thread's hand-over stamp (monotonic ms) rides on the batch.
      { kind: 'events', epoch: 2, events: [{ type: 'tokens', id: 7, ids: [3], text: 'c' }], handedAtMs: 123456.789 },
      { kind: 'submitError', epoch: 3, id: 9, error: 'prompt must be non-empty' },
      { kind: 'result', epoch: 3, call: 1, value: [1, 2, 3] },
      { kind: 'callError', epoch: 3, call: 2, error: 'bad session file', code: 'session_unreadable' },
      { kind: 'fatal', epoch: 3, error: 'boom' },
    ];
    for (const m of msgs) expect(parseHostMessage(m)).toBe(m);
  });

  it.each([
    [null, /must be an object/],
    [{ kind: 'hello', epoch: 1 }, /unknown kind "hello"/],
    [{ kind: 'events', events: [] }, /'epoch' must be a positive integer, got undefined/],
    [{ kind: 'events', epoch: 0, events: [] }, /'epoch' must be a positive integer, got 0/],
    [{ kind: 'events', epoch: 1.5, events: [] }, /'epoch'/],
    [{ kind: 'events', epoch: 1, events: {} }, /'events' must be an array/],
    [{ kind: 'events', epoch: 1, events: [{ type: 'tokens', id: -1 }] }, /event id must be a positive integer, got -1/],
    [{ kind: 'events', epoch: 1, events: [{ type: 'nope', id: 1 }] }, /bad event type "nope"/],
    [{ kind: 'events', epoch: 1, events: [], handedAtMs: '12' }, /'handedAtMs' must be a non-negative number of ms, got "12"/],
    [{ kind: 'events', epoch: 1, events: [], handedAtMs: -1 }, /'handedAtMs' must be a non-negative number of ms, got -1/],
    [{ kind: 'events', epoch: 1, events: [], handedAtMs: Number.NaN }, /'handedAtMs' must be a non-negative number of ms/],
    [{ kind: 'submitError', epoch: 1, error: 'x' }, /submitError message: 'id'/],
    [{ kind: 'result', epoch: 1, value: 1 }, /result message: 'call'/],
    [{ kind: 'callError', epoch: 1, call: 1 }, /callError message: 'error' must be a string/],
    [{ kind: 'callError', epoch: 1, call: 1, error: 'x', code: 'another model' }, /callError message: 'code' must be one of failed, io_error/],
    [{ kind: 'ready', epoch: 1, pid: 3 }, /'info' must be an object/],
  ])('refuses %j', (raw, message) => {
    expect(() => parseHostMessage(raw)).toThrow(ProtocolError);
    expect(() => parseHostMessage(raw)).toThrow(message);
  });
});

describe('parseCommand', () => {
  it('accepts every command kind', () => {
    const cmds: unknown[] = [
      { kind: 'init', epoch: 1, config: { model: '/m.gguf', slots: 2 } },
      { kind: 'submit', epoch: 1, id: 1, request: { prompt: [1, 2], maxTokens: 4 } },
      { kind: 'submit', epoch: 1, id: 2, request: { prompt: new Int32Array([1, 2]), maxTokens: 4 } },
      { kind: 'cancel', epoch: 1, id: 1 },
      { kind: 'close', epoch: 1 },
      ...CALL_NAMES.map((kind, i) => ({ kind, epoch: 1, call: i + 1, args: [] })),
      { kind: 'tokenize', epoch: 1, call: 99, args: ['hello', false, true] },
    ];
    for (const c of cmds) expect(parseCommand(c)).toBe(c);
  });

  it.each([
    [{ kind: 'init', epoch: 1, config: {} }, /'config.model' must be a string/],
    [{ kind: 'submit', epoch: 1, request: {} }, /submit message: 'id'/],
    [{ kind: 'submit', epoch: 1, id: 1 }, /'request' must be an object/],
    [{ kind: 'cancel', epoch: 2, id: '3' }, /cancel message: 'id' must be a positive integer, got "3"/],
    [{ kind: 'tokenize', epoch: 1, text: 'x' }, /tokenize message: 'call'/],
    [{ kind: 'tokenize', epoch: 1, call: 1, text: 'x' }, /tokenize message: 'args' must be an array/],
    [{ kind: 'shutdown', epoch: 1 }, /unknown kind "shutdown"/],
    [{ kind: 'close' }, /'epoch'/],
  ])('refuses %j', (raw, message) => {
    expect(() => parseCommand(raw)).toThrow(message);
  });
});
