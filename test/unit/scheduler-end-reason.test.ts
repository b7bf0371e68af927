// The end-reason precedence table (scheduler/request-ledger.ts decideEnd): how a request ended,
// from everything that happened to it, whatever the order it happened in.
import { describe, expect, it } from 'vitest';
import { decideEnd, RequestLedger, type EndFacts } from '../../backend/scheduler/request-ledger.js';

const none: EndFacts = { engineFailed: false, cancel: null, outcome: null, engineFinish: null, refusal: null, clientGone: false };
const f = (over: Partial<EndFacts>): EndFacts => ({ ...none, ...over });

describe('decideEnd', () => {
  it('follows the precedence table', () => {
    const table: Array<[Partial<EndFacts>, string | null]> = [
      [{}, null],
      // 1. an engine failure beats everything
      [{ engineFailed: true, cancel: 'disconnected', outcome: 'tool_calls', engineFinish: 'stop', refusal: 'rejected', clientGone: true }, 'error'],
      // 2. the first cancel intent beats the outcome, the engine's finish, a refusal, a gone client
      [{ cancel: 'superseded', engineFinish: 'cancel', refusal: 'rejected' }, 'superseded'],
      [{ cancel: 'shutdown', engineFinish: 'cancel', refusal: 'error' }, 'shutdown'],
      [{ cancel: 'disconnected', clientGone: true, engineFinish: 'stop' }, 'disconnected'],
      [{ cancel: 'cancel', refusal: 'error' }, 'cancel'],
      [{ cancel: 'stop', engineFinish: 'cancel' }, 'stop'],
      [{ cancel: 'length', engineFinish: 'cancel' }, 'length'],
      [{ cancel: 'stop', outcome: 'tool_calls', engineFinish: 'stop' }, 'stop'],
      // 3. tool calls over the engine's own stop or length, not over its cancel
      [{ outcome: 'tool_calls', engineFinish: 'stop' }, 'tool_calls'],
      [{ outcome: 'tool_calls', engineFinish: 'length' }, 'tool_calls'],
      [{ outcome: 'tool_calls', engineFinish: 'cancel' }, 'cancel'],
      [{ outcome: 'tool_calls' }, null],
      // 4. the engine's finish beats a refusal and a gone client
      [{ engineFinish: 'length', refusal: 'rejected', clientGone: true }, 'length'],
      [{ engineFinish: 'cancel', refusal: 'error' }, 'cancel'],
      // 5. a refusal beats a gone client
      [{ refusal: 'rejected', clientGone: true }, 'rejected'],
      [{ refusal: 'error' }, 'error'],
      // 6. a client that left, with nothing else
      [{ clientGone: true }, 'disconnected'],
    ];
    for (const [facts, end] of table) expect(decideEnd(f(facts)), JSON.stringify(facts)).toBe(end);
  });

  it('keeps the first cancel intent and the first refusal, and the first error text', () => {
    const ledger = new RequestLedger();
    const rec = ledger.accept('infill', false);
    ledger.queued(rec, 3);
    ledger.dispatched(rec, 0, 1);
    ledger.cancelled(rec, 'superseded');
    ledger.cancelled(rec, 'disconnected');
    ledger.engineDone(rec, { finish: 'cancel', promptTokens: 3, reused: 0, promptMs: null, decodeMs: null, generated: 0 });
    ledger.refused(rec, 'rejected', 'replaced by a newer request');
    ledger.refused(rec, 'error', 'later text');
    expect(rec.end).toBe('superseded');
    expect(ledger.end(rec, 'error')).toBe(true);
    expect(ledger.recent().at(-1)).toMatchObject({ finish: 'superseded', error: 'replaced by a newer request' });
  });

  it('ends with the fallback only when nothing decided it, and counts an end while the engine works', () => {
    const violations: string[] = [];
    const ledger = new RequestLedger({ onInvariantViolation: (m) => violations.push(m) });
    const a = ledger.accept('chat', false);
    ledger.end(a, 'error');
    const b = ledger.accept('chat', false);
    ledger.queued(b, 1);
    ledger.dispatched(b, 0, 1);
    ledger.end(b, 'error', 'internal: request abandoned');
    expect(ledger.recent().map((h) => [h.finish, h.error])).toEqual([['error', null], ['error', 'internal: request abandoned']]);
    expect(violations).toEqual([`request ${b.id}: ended while admitting`]);
    expect(ledger.totals.invariant_violations).toBe(1);
  });
});
