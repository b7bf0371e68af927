// Connections the server holds: a refused request's connection is closed once its answer is out
// (its body is not drained), headers and bodies must arrive within their deadlines, the number of
// connections is capped, and none of this touches a well-behaved client: keep-alive between
// requests works and a streamed answer may run long after its request arrived. Raw sockets
// against the real HTTP server with scripted engines.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StrataServer } from '../../backend/app/app.js';
import { defaultConfig, type ServerConfig } from '../../backend/app/config.js';
import { silentLogger } from '../../backend/log/logger.js';
import { FakeEngineClient, type FakeEngineOptions } from '../helpers/fake-engine-client.js';

const running: Array<{ server: StrataServer; dir: string }> = [];
const cleanups: Array<() => void> = [];
afterEach(async () => {
  cleanups.splice(0).forEach((f) => f());
  for (const r of running.splice(0)) {
    await r.server.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

async function start(over: Partial<ServerConfig>, fake: FakeEngineOptions = {}): Promise<{ port: number; fakes: FakeEngineClient[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-conn-'));
  const modelPath = join(dir, 'fake.gguf');
  writeFileSync(modelPath, 'not a model: the scripted engines never read it');
  const fakes: FakeEngineClient[] = [];
  const server = new StrataServer({
    config: { ...defaultConfig(), port: 0, sessionsDir: dir, ...over }, modelPath, log: silentLogger,
    engineFactory: (replica) => {
      const f = new FakeEngineClient({ replica, slots: 2, ctx: 256, autoRun: { tokens: 2 }, ...fake });
      fakes.push(f);
      return f;
    },
  });
  running.push({ server, dir });
  const { port } = await server.listen();
  await server.startEngines();
  return { port, fakes };
}

interface Client {
  socket: Socket;
  /** Everything the server sent so far. */
  text(): string;
  /** Resolves once the server has sent this much (a predicate on all text so far). */
  until(pred: (text: string) => boolean): Promise<string>;
  /** Resolves with all the server sent once the connection is closed. */
  closed: Promise<string>;
  isClosed(): boolean;
}

function client(port: number): Client {
  const socket = connect(port, '127.0.0.1');
  cleanups.push(() => socket.destroy());
  let text = '';
  let closed = false;
  const waiters: Array<() => void> = [];
  socket.setEncoding('utf8');
  socket.on('data', (c: string) => { text += c; waiters.forEach((w) => w()); });
  socket.on('error', () => { /* a reset is a close here */ });
  const closedP = new Promise<string>((resolve) => socket.on('close', () => { closed = true; resolve(text); waiters.forEach((w) => w()); }));
  return {
    socket,
    text: () => text,
    until: (pred) => new Promise((resolve, reject) => {
      const check = () => {
        if (pred(text)) resolve(text);
        else if (closed) reject(new Error(`the connection closed first; got: ${text.slice(0, 300)}`));
        else waiters.push(check);
      };
      check();
    }),
    closed: closedP,
    isClosed: () => closed,
  };
}

/** Writes a byte every few ms until the socket closes, as a client that never finishes its body. */
function trickle(socket: Socket, byte = ' '): void {
  const t = setInterval(() => { if (!socket.destroyed) socket.write(byte); }, 20);
  socket.once('close', () => clearInterval(t));
  cleanups.push(() => clearInterval(t));
}

/** The connection closes within `ms`, else fails naming what it got (a bound on the test, not a sync point). */
function closesWithin(c: Client, ms: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still open after ${ms} ms; got: ${c.text().slice(0, 300)}`)), ms);
  });
  return Promise.race([c.closed, late]).finally(() => clearTimeout(timer));
}

/** Complete answers in `text`: status codes of those with a Content-Length body read whole. */
function answers(text: string): number[] {
  const out: number[] = [];
  let rest = text;
  for (;;) {
    const head = rest.indexOf('\r\n\r\n');
    if (head < 0) return out;
    const length = Number(/content-length: (\d+)/i.exec(rest.slice(0, head))?.[1] ?? NaN);
    if (!Number.isFinite(length) || rest.length < head + 4 + length) return out;
    out.push(Number(rest.slice(9, 12)));
    rest = rest.slice(head + 4 + length);
  }
}

const post = (path: string, body: string, headers = ''): string =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`;

describe('refused requests', () => {
  const cases: Array<{ what: string; over: Partial<ServerConfig>; head: string; status: number }> = [
    { what: '401 (no API key)', over: { apiKey: 'sekret' }, head: 'POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n', status: 401 },
    { what: '403 (foreign Host)', over: {}, head: 'POST /v1/completions HTTP/1.1\r\nHost: attacker.example\r\n', status: 403 },
    { what: '404 (no route)', over: {}, head: 'POST /v1/nothing-here HTTP/1.1\r\nHost: 127.0.0.1\r\n', status: 404 },
  ];
  for (const c of cases) {
    it(`a ${c.what} answer closes the connection while the client keeps sending its body`, async () => {
      const { port } = await start(c.over);
      const cl = client(port);
      cl.socket.write(`${c.head}Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{"prompt": "`);
      trickle(cl.socket);
      const got = await closesWithin(cl, 3000);
      expect(got.slice(0, 12)).toBe(`HTTP/1.1 ${c.status}`);
      expect(got).toMatch(/\r\nconnection: close\r\n/i);
    });
  }

  it('a 503 body_budget_spent answer closes the connection while the client keeps sending its body', async () => {
    const { port } = await start({ bodyLimitMib: 1, bodyTimeoutMs: 0 });
    // Four bodies of the largest size declared (and charged up front) fill the budget.
    const holders = Array.from({ length: 4 }, () => client(port));
    for (const h of holders) h.socket.write(`POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${2 ** 20}\r\n\r\n{`);
    const cl = client(port);
    cl.socket.write('POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"prompt": "');
    trickle(cl.socket);
    const got = await closesWithin(cl, 3000);
    expect(got.slice(0, 12)).toBe('HTTP/1.1 503');
    expect(got).toContain('body_budget_spent');
    expect(got).toMatch(/\r\nconnection: close\r\n/i);
  });
});

describe('receive deadlines', () => {
  it('closes a connection whose headers trickle in slower than --headers-timeout-ms', async () => {
    const { port } = await start({ headersTimeoutMs: 200 });
    const cl = client(port);
    cl.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    trickle(cl.socket, 'X');
    const got = await closesWithin(cl, 3000);
    expect(answers(got)).not.toContain(200);
  });

  it('closes a connection that opens and sends nothing within --headers-timeout-ms', async () => {
    const { port } = await start({ headersTimeoutMs: 200 });
    const cl = client(port);
    await closesWithin(cl, 3000);
  });

  it('closes a connection whose body is not in within the headers and body deadlines, also where no route reads it', async () => {
    const { port } = await start({ headersTimeoutMs: 200, bodyTimeoutMs: 300 });
    const cl = client(port);
    // /health answers at once and never reads the body; the connection still may not be held.
    cl.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n');
    trickle(cl.socket);
    const got = await closesWithin(cl, 3000);
    expect(answers(got)).toEqual([200]);
  });
});

describe('the connection cap', () => {
  it('closes connections past --max-connections at once, and takes new ones once one has closed', async () => {
    const { port } = await start({ maxConnections: 2 });
    const health = 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const [a, b] = [client(port), client(port)];
    a.socket.write(health);
    b.socket.write(health);
    await a.until((t) => answers(t).length === 1);
    await b.until((t) => answers(t).length === 1);
    const c = client(port);
    c.socket.write(health);
    const refused = await closesWithin(c, 3000);
    expect(refused).toBe('');
    // `a` leaves (the server closes it after this answer): a new connection is served.
    a.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(answers(await closesWithin(a, 3000))).toEqual([200, 200]);
    const d = client(port);
    d.socket.write(health);
    expect(answers(await d.until((t) => answers(t).length === 1))).toEqual([200]);
    expect(b.isClosed()).toBe(false);
  });
});

describe('well-behaved clients', () => {
  it('keep one connection for several requests, under short deadlines', async () => {
    const { port } = await start({ headersTimeoutMs: 200, bodyTimeoutMs: 300 });
    const cl = client(port);
    const body = JSON.stringify({ prompt: 'hi', max_tokens: 2 });
    cl.socket.write(post('/v1/completions', body));
    await cl.until((t) => answers(t).length === 1);
    cl.socket.write(post('/v1/completions', body));
    await cl.until((t) => answers(t).length === 2);
    expect(answers(cl.text())).toEqual([200, 200]);
    expect(cl.isClosed()).toBe(false);
  });

  it('get a streamed answer that runs far past the receive deadlines', async () => {
    const { port, fakes } = await start({ headersTimeoutMs: 100, bodyTimeoutMs: 100, keepAliveMs: 40 }, { autoRun: null });
    const cl = client(port);
    cl.socket.write(post('/v1/completions', JSON.stringify({ prompt: 'hi', max_tokens: 2, stream: true })));
    // Fifteen keep-alive periods (600 ms) against a 200 ms deadline for the request to arrive.
    await cl.until((t) => t.split(': keep-alive').length > 15);
    const r = fakes[0]!.all[0]!;
    r.admit(0); r.tokens([5], 'ok'); r.finish('stop');
    await cl.until((t) => t.includes('data: [DONE]'));
    expect(cl.text().slice(0, 12)).toBe('HTTP/1.1 200');
    expect(cl.isClosed()).toBe(false);
  });
});
