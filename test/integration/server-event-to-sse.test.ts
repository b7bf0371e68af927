// The server's own overhead per streamed token event, measured for real: the engine process
// stamps each step (CLOCK_MONOTONIC), the server observes the delay when the SSE bytes of a
// token event are written, and /metrics shows one observation per token event written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, metrics, raw, startServer, stream, type Running } from './server-helpers.js';

let srv: Running;

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { ctx: 512 });
});
afterAll(async () => { await srv?.close(); });

interface Figures {
  count: number; sum_ms: number; rejected: number; p50_ms: number | null; p95_ms: number | null;
  buckets: { le_ms: number; count: number }[];
}
const figures = async (): Promise<Figures> => (await metrics(srv.port)).event_to_sse as Figures;

/** Text pieces of a finished stream: one per SSE event that carried text. */
function pieces(events: any[]): number {
  return events.filter((e) => (e.choices?.[0]?.delta?.content ?? e.choices?.[0]?.text ?? '') !== '').length;
}

describe('event_to_sse', () => {
  it('counts each streamed token event written, with delays from the engine thread that are >= 0 and under 1 s', async () => {
    const before = await figures();
    expect(before.rejected).toBe(0);

    const done = await stream(srv.port, '/v1/completions', { prompt: 'Once upon a time', ...greedy(24), ignore_eos: true }).end;
    expect(done.how).toBe('done');
    const completionPieces = pieces(done.events);
    expect(completionPieces).toBeGreaterThan(0);
    // /v1/completions writes one SSE event per token event that carries text.
    const mid = await figures();
    expect(mid.count - before.count).toBe(completionPieces);
    // Chat too, though its tool-call parser may split one event's text into several SSE events.
    const chat = await stream(srv.port, '/v1/chat/completions', { messages: [{ role: 'user', content: 'Say hi.' }], ...greedy(12), ignore_eos: true }).end;
    expect(chat.how).toBe('done');
    const after = await figures();
    expect(after.count - mid.count).toBeGreaterThan(0);
    expect(after.count - mid.count).toBeLessThanOrEqual(pieces(chat.events));

    const n = after.count - before.count;
    // Stamps from the engine process compare with this process's clock: none rejected, none negative.
    expect(after.rejected).toBe(0);
    const sum = after.sum_ms - before.sum_ms;
    expect(sum).toBeGreaterThanOrEqual(0);
    expect(sum / n).toBeLessThan(1000);
    const under1s = after.buckets.find((b) => b.le_ms === 1000)!.count - before.buckets.find((b) => b.le_ms === 1000)!.count;
    expect(under1s).toBe(n);
    expect(after.p50_ms).toBeGreaterThanOrEqual(0);
    expect(after.p95_ms).toBeLessThanOrEqual(1000);

    const prom = await raw(srv.port, 'GET', '/metrics/prometheus');
    expect(prom.body).toMatch(/^# TYPE strata:event_to_sse_seconds histogram$/m);
    expect(Number(/^strata:event_to_sse_seconds_count (\d+)$/m.exec(prom.body)?.[1])).toBe(after.count);
    expect(Number(/^strata:event_to_sse_seconds_bucket\{le="\+Inf"\} (\d+)$/m.exec(prom.body)?.[1])).toBe(after.count);
  });

  it('does not observe answers that are not streamed', async () => {
    const before = await figures();
    const r = await json(srv.port, 'POST', '/v1/completions', { prompt: 'The quick brown fox', ...greedy(8), ignore_eos: true });
    expect(r.status).toBe(200);
    expect(r.body.usage.completion_tokens).toBe(8);
    expect((await figures()).count).toBe(before.count);
  });
});
