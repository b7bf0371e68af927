// Slow readers cannot hold the slots: two real sockets stream long completions, one reading a
// byte a second and one never reading, while a normal request waits for a slot. Both fall
// behind by more than --slow-reader-ms, are disconnected and their slots freed, and the normal
// request is served; /metrics shows the bound and the clients cut. Asserted on request states
// and events, never on timings.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLedger } from '../../backend/scheduler/request-ledger.js';
import { ensureTestModel } from '../helpers/models.js';
import { json, metrics, raw, startServer, type Running } from './server-helpers.js';

let srv: Running;
const sockets: Socket[] = [];

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { slots: 2, ctx: 2048, batch: 64, slowReaderMs: 1000 });
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await srv?.close();
});

function whenTable(pred: (t: RequestLedger) => boolean): Promise<void> {
  const table = srv.server.ledger;
  return new Promise((resolve) => {
    if (pred(table)) { resolve(); return; }
    const off = table.onChange(() => { if (pred(table)) { off(); resolve(); } });
  });
}

/** A streamed completion on a raw socket that reads `bytesPerSecond` (0: never reads). */
async function slowClient(bytesPerSecond: number): Promise<{ got: () => number }> {
  const sock = connect(srv.port, '127.0.0.1');
  sockets.push(sock);
  await new Promise<void>((r) => sock.once('connect', () => r()));
  const body = JSON.stringify({ prompt: 'Count slowly:', stream: true, max_tokens: 1900, ignore_eos: true, temperature: 0 });
  sock.write(`POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  sock.pause();
  let got = 0;
  // (A paused socket never sees the server's FIN behind its unread bytes: the test watches the server.)
  const timer = bytesPerSecond > 0 ? setInterval(() => { const b = sock.read(bytesPerSecond) as Buffer | null; got += b?.length ?? 0; }, 1000) : null;
  sock.once('close', () => { if (timer) clearInterval(timer); });
  sock.on('error', () => {});
  return { got: () => got };
}

/** Resolves when `n` requests have ended as 'disconnected' from now on. */
function disconnects(n: number): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    const off = srv.server.ledger.onChange((r) => {
      if (r.state === 'ended' && r.end === 'disconnected' && ++seen === n) { off(); resolve(); }
    });
  });
}

describe('slow readers', () => {
  it('a client reading 1 byte/s and one never reading are cut; their slots go to a normal request', async () => {
    const before = await metrics(srv.port);
    expect(before.slow_readers).toMatchObject({ bound_ms: 1000, cut: 0 });
    const cut = disconnects(2);
    const trickle = await slowClient(1);
    await slowClient(0);
    await whenTable((t) => t.counts().running === 2);
    // Both slots are taken; a normal client waits in the queue.
    const normal = json(srv.port, 'POST', '/v1/completions', { prompt: 'Hello', max_tokens: 8, temperature: 0 });
    await whenTable((t) => t.counts().queued === 1);
    // The server cuts both slow clients (their requests end as disconnected), and the normal request is answered.
    await cut;
    const answer = await normal;
    expect(answer.status).toBe(200);
    expect(answer.body.choices[0].text.length).toBeGreaterThan(0);
    expect(trickle.got()).toBeGreaterThan(0); // it did read, a byte at a time

    const m = await metrics(srv.port);
    expect(m.slow_readers).toEqual({ bound_ms: 1000, cut: 2, unread_seen: 'kernel' });
    const rows = m.requests.filter((r: { finish: string }) => r.finish === 'disconnected');
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.output_tokens).toBeLessThan(1900);
    // The normal request can end before the second cut (the first cut frees the slot it needs).
    expect(m.requests.filter((r: { finish: string }) => r.finish !== 'disconnected')).toMatchObject([{ finish: 'length', output_tokens: 8 }]);
    expect(m.live).toMatchObject({ queued: 0, admitting: 0, running: 0, finishing: 0 });
    const prom = await raw(srv.port, 'GET', '/metrics/prometheus');
    expect(prom.body).toMatch(/^strata:slow_readers_cut_total 2$/m);
    expect(prom.body).toMatch(/^strata:slow_reader_bound_seconds 1$/m);
  });

  it('a client that keeps up is never cut, however long it streams', async () => {
    const cutBefore = (await metrics(srv.port)).slow_readers.cut as number;
    const res = await srv.openai.completions.create({ model: 'any', prompt: 'A long one:', max_tokens: 300, temperature: 0, stream: true, ignore_eos: true } as never);
    let pieces = 0;
    for await (const c of res as unknown as AsyncIterable<{ choices: Array<{ text: string }> }>) if (c.choices[0]?.text) pieces++;
    expect(pieces).toBeGreaterThan(50);
    expect((await metrics(srv.port)).slow_readers.cut).toBe(cutBefore);
  });
});
