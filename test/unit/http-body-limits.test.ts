// Request bodies: the budget of bytes all bodies being read may hold together (many concurrent
// large bodies get a 503 instead of growing the heap), and the read timeout (a client that sends
// headers and dribbles its body gets a 408). The reader on its own with scripted streams and
// timers, then the real HTTP server (scripted engines) with raw sockets.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { StrataServer } from '../../backend/app/app.js';
import { defaultConfig, type ServerConfig } from '../../backend/app/config.js';
import { BodyBudgetSpent, BodyReader, BodyTimedOut, BodyTooLarge, type BodyTimers } from '../../backend/http/body.js';
import { silentLogger } from '../../backend/log/logger.js';
import { BODY_BUDGET_BODIES } from '../../backend/validation/limits.js';
import { FakeEngineClient } from '../helpers/fake-engine-client.js';

/** A request stream with headers, written by the test. */
function fakeRequest(headers: Record<string, string> = {}): PassThrough & IncomingMessage {
  return Object.assign(new PassThrough(), { headers }) as unknown as PassThrough & IncomingMessage;
}

/** Timers the test fires by hand. */
function manualTimers(): BodyTimers & { fire(): void; pending(): number } {
  const due = new Map<number, () => void>();
  let next = 1;
  return {
    set: (fn) => { due.set(next, fn); return next++; },
    clear: (h) => { due.delete(h as number); },
    fire: () => { const fns = [...due.values()]; due.clear(); fns.forEach((f) => f()); },
    pending: () => due.size,
  };
}

describe('BodyReader', () => {
  it('charges a declared length up front and chunks as they come, gives it all back when the body ends', async () => {
    const reader = new BodyReader({ limitBytes: 100, budgetBytes: 250, timeoutMs: 0 });
    const declared = fakeRequest({ 'content-length': '100' });
    const chunked = fakeRequest();
    const a = reader.read(declared);
    const b = reader.read(chunked);
    expect(reader.budget.held()).toBe(100);
    chunked.write(Buffer.alloc(60));
    await new Promise<void>((r) => setImmediate(r));
    expect(reader.budget.held()).toBe(160);
    // 90 declared bytes no longer fit the 250: refused before a byte is read.
    await expect(reader.read(fakeRequest({ 'content-length': '91' }))).rejects.toBeInstanceOf(BodyBudgetSpent);
    // A chunked body is cut when its next chunk does not fit.
    const third = fakeRequest();
    const c = reader.read(third);
    third.write(Buffer.alloc(95));
    await expect(c).rejects.toBeInstanceOf(BodyBudgetSpent);
    expect(reader.budget.held()).toBe(160);
    declared.end(Buffer.alloc(100));
    chunked.end(Buffer.alloc(40));
    expect((await a).length).toBe(100);
    expect((await b).length).toBe(100);
    expect(reader.budget.held()).toBe(0);
    // Over the per-body limit, declared or not.
    await expect(reader.read(fakeRequest({ 'content-length': '101' }))).rejects.toBeInstanceOf(BodyTooLarge);
    const long = fakeRequest();
    const d = reader.read(long);
    long.write(Buffer.alloc(101));
    await expect(d).rejects.toBeInstanceOf(BodyTooLarge);
    expect(reader.budget.held()).toBe(0);
  });

  it('cuts a body that has not ended when its timer fires, and gives back its bytes', async () => {
    const timers = manualTimers();
    const reader = new BodyReader({ limitBytes: 100, budgetBytes: 400, timeoutMs: 30_000, timers });
    const dribbled = fakeRequest({ 'content-length': '100' });
    const read = reader.read(dribbled);
    dribbled.write('{"prompt": "x');
    expect(timers.pending()).toBe(1);
    timers.fire();
    await expect(read).rejects.toEqual(new BodyTimedOut(30_000));
    expect(reader.budget.held()).toBe(0);
    // A body that ends in time clears its timer.
    const quick = fakeRequest();
    const ok = reader.read(quick);
    quick.end('{}');
    expect((await ok).toString()).toBe('{}');
    expect(timers.pending()).toBe(0);
  });
});

const running: Array<{ server: StrataServer; dir: string }> = [];
const sockets: Socket[] = [];
afterEach(async () => {
  sockets.splice(0).forEach((s) => s.destroy());
  for (const r of running.splice(0)) {
    await r.server.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

async function start(over: Partial<ServerConfig>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-body-'));
  const modelPath = join(dir, 'fake.gguf');
  writeFileSync(modelPath, 'not a model: the scripted engines never read it');
  const server = new StrataServer({
    config: { ...defaultConfig(), port: 0, sessionsDir: dir, ...over }, modelPath, log: silentLogger,
    engineFactory: (replica) => new FakeEngineClient({ replica, slots: 2, ctx: 256, autoRun: { tokens: 2 } }),
  });
  running.push({ server, dir });
  const { port } = await server.listen();
  await server.startEngines();
  return port;
}

/** A raw HTTP request whose body the test sends (or not); `answer` resolves with the status line's code and the body. */
function open(port: number, contentLength: number): { socket: Socket; answer: Promise<{ status: number; body: string }> } {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.write(`POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`);
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      text += c;
      const head = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (head >= 0 && length !== undefined && text.length >= head + 4 + Number(length)) {
        resolve({ status: Number(text.slice(9, 12)), body: text.slice(head + 4) });
      }
    });
    socket.on('error', reject);
  });
  return { socket, answer };
}

describe('the server reading bodies', () => {
  it(`answers 503 to a body that does not fit the budget (${BODY_BUDGET_BODIES} bodies of the largest size at once), and reads it again once one finishes`, async () => {
    const port = await start({ bodyLimitMib: 1, bodyTimeoutMs: 0 });
    const size = 2 ** 20;
    // Padded with whitespace (valid JSON) so the prompt fits the scripted engine's context.
    const body = (n: number) => JSON.stringify({ prompt: 'hi', max_tokens: 2 }).padEnd(n, ' ');
    // Four clients each start a body of the largest size and stall halfway.
    const slow = Array.from({ length: BODY_BUDGET_BODIES }, () => open(port, size));
    slow.forEach((s) => s.socket.write(body(size).slice(0, size / 2)));
    const fifth = open(port, 1000);
    fifth.socket.write(body(1000));
    const refused = await fifth.answer;
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error).toMatchObject({ code: 'body_budget_spent' });
    expect(JSON.parse(refused.body).error.message).toContain(`at most ${BODY_BUDGET_BODIES * size} bytes`);
    // One of the four finishes: its answer is a completion, and the budget has room again.
    slow[0]!.socket.write(body(size).slice(size / 2));
    expect((await slow[0]!.answer).status).toBe(200);
    const sixth = open(port, 1000);
    sixth.socket.write(body(1000));
    expect((await sixth.answer).status).toBe(200);
  });

  it('answers 408 and closes the connection when a body stalls past the read timeout', async () => {
    const port = await start({ bodyTimeoutMs: 200 });
    const stalled = open(port, 5000);
    stalled.socket.write('{"prompt": "once upon a');
    const closed = new Promise<void>((resolve) => stalled.socket.on('close', () => resolve()));
    const answer = await stalled.answer;
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'body_timeout' });
    await closed;
    // A body sent whole meanwhile is unaffected.
    const whole = open(port, 30);
    whole.socket.write(JSON.stringify({ prompt: 'hi', max_tokens: 2 }).padEnd(30, ' '));
    expect((await whole.answer).status).toBe(200);
  });
});
