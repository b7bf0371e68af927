// The HTTP layer against scripted engines (no model): OpenAI shapes through the real
// `openai` client, SSE framing, errors, access checks, disconnects and stalled readers.
// The same paths run against the real engine in test/integration/server-*.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../backend/log/logger.js';
import { StrataServer } from '../../backend/app/app.js';
import { defaultConfig, type ServerConfig } from '../../backend/app/config.js';
import { FakeEngineClient, type FakeEngineOptions } from '../helpers/fake-engine-client.js';
import { parseEngineDeath } from '../../contract/health.js';

interface Harness { server: StrataServer; fakes: FakeEngineClient[]; url: string; port: number; openai: OpenAI }
const running: Array<{ server: StrataServer; dir: string }> = [];

afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.server.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

async function start(over: Partial<ServerConfig> = {}, fake: FakeEngineOptions = {}, load = true): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-http-'));
  const config: ServerConfig = { ...defaultConfig(), port: 0, sessionsDir: dir, keepAliveMs: 40, writeStallMs: 300, ...over };
  const fakes: FakeEngineClient[] = [];
  const modelPath = join(dir, 'fake.gguf');
  writeFileSync(modelPath, 'not really a model: the scripted engines never read it');
  const server = new StrataServer({
    config, modelPath, log: silentLogger,
    engineFactory: (replica) => {
      const f = new FakeEngineClient({ replica, slots: 2, ctx: 256, autoRun: { tokens: 4 }, ...fake });
      fakes.push(f);
      return f;
    },
  });
  running.push({ server, dir });
  const { url, port } = await server.listen();
  if (load) await server.startEngines();
  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: over.apiKey ?? 'unused', maxRetries: 0 });
  return { server, fakes, url, port, openai };
}

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: string }

function raw(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

async function metrics(port: number) {
  return JSON.parse((await raw(port, 'GET', '/metrics')).body) as {
    live: { queued: number; admitting: number; running: number; finishing: number; state: string };
    requests: Array<{ finish: string; output_tokens: number; prompt_ms: number | null }>;
    totals: { invariant_violations: number };
    engines: Array<{ last_death: unknown }>;
  };
}

function until(pred: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const check = async () => {
      if (await pred()) { resolve(); return; }
      if (Date.now() > deadline) { reject(new Error(`timed out waiting for ${what}`)); return; }
      setTimeout(() => { void check(); }, 10);
    };
    void check();
  });
}

describe('HTTP server with scripted engines', () => {
  it('answers health 503 loading until an engine is ready, then 200 with model and slots', async () => {
    const h = await start({}, {}, false);
    const before = await raw(h.port, 'GET', '/health');
    expect(before.status).toBe(503);
    expect(JSON.parse(before.body)).toEqual({ status: 'loading', load_timeout_ms: 900000 });
    await h.server.startEngines();
    const after = await raw(h.port, 'GET', '/health');
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body)).toMatchObject({ status: 'ok', model: 'fake', slots: 2 });
    const models = await h.openai.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['fake']);
  });

  it('serves chat completions, streamed and not, with usage and timings', async () => {
    const h = await start();
    const res = await h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
    expect(res.choices[0]!.message.content).toBe('t1.0 t1.1 t1.2 t1.3 ');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ completion_tokens: 4, prompt_tokens_details: { cached_tokens: 0 } });
    expect((res as unknown as { timings: { predicted_n: number } }).timings.predicted_n).toBe(4);

    const stream = await h.openai.chat.completions.create({
      model: 'x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3, stream: true, stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('t2.0 t2.1 t2.2 ');
    const last = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(last).toHaveLength(1);
    expect(last[0]!.choices[0]!.finish_reason).toBe('length');
    expect(last[0]!.usage?.completion_tokens).toBe(3);
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage?.total_tokens).toBeGreaterThan(3);
  });

  it('ends the SSE stream with data: [DONE] and sends keep-alive comments while queued', async () => {
    const h = await start({}, { slots: 1, autoRun: null });
    const fake = () => h.fakes[0]!;
    // Occupy the only slot by hand, so the streamed request waits in the queue.
    const blocker = h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'a' }] });
    await until(() => fake().all.length === 1, 'first request dispatched');
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'b' }], stream: true });
    const streamed = raw(h.port, 'POST', '/v1/chat/completions', body);
    await until(async () => (await metrics(h.port)).live.queued === 1, 'second request queued');
    await new Promise((r) => setTimeout(r, 150)); // several keep-alive periods (40 ms)
    fake().all[0]!.admit(0); fake().all[0]!.finish('stop');
    await until(() => fake().all.length === 2, 'second request dispatched');
    const r2 = fake().all[1]!;
    r2.admit(0); r2.tokens([5], 'ok'); r2.finish('stop');
    const got = await streamed;
    await blocker;
    expect(got.headers['content-type']).toMatch(/text\/event-stream/);
    expect(got.body).toContain(': keep-alive\n\n');
    const events = got.body.split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(JSON.parse(events[0]!.slice(6)).choices[0].delta.role).toBe('assistant');
  });

  it('reports prompt progress events when return_progress is set', async () => {
    const h = await start({}, { autoRun: null });
    const streamed = raw(h.port, 'POST', '/v1/completions', JSON.stringify({ prompt: 'abcdef', stream: true, return_progress: true }));
    await until(() => h.fakes[0]!.all.length === 1, 'dispatched');
    const r = h.fakes[0]!.all[0]!;
    r.admit(0, 2); r.progress(4); r.progress(6); r.tokens([1], 'x'); r.finish('stop');
    const events = (await streamed).body.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
    const progress = events.filter((e) => e.prompt_progress).map((e) => e.prompt_progress);
    expect(progress.map((p) => [p.processed, p.total, p.cache])).toEqual([[4, 6, 2], [6, 6, 2]]);
    expect(events.map((e) => e.choices?.[0]?.text ?? '').join('')).toBe('x');
  });

  it('streams tool calls as tool_call deltas and answers non-streamed tool calls', async () => {
    const call = ['Let me check. ', '<tool', '_call>\n{"name": "get_weather", ', '"arguments": {"city": "Paris"}}\n</tool_', 'call>'];
    const h = await start({}, { autoRun: { tokens: 0, text: () => call }, ctx: 4096 });
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const res = await h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'weather?' }], tools });
    const msg = res.choices[0]!.message;
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    expect(msg.tool_calls).toHaveLength(1);
    const tc = msg.tool_calls![0]!;
    expect(tc.type === 'function' && tc.function.name).toBe('get_weather');
    expect(tc.type === 'function' && JSON.parse(tc.function.arguments)).toEqual({ city: 'Paris' });
    expect(msg.content).toBe('Let me check.');

    const stream = await h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'weather?' }], tools, stream: true });
    let name = '';
    let args = '';
    let content = '';
    let finish: string | null = null;
    for await (const c of stream) {
      const d = c.choices[0]?.delta;
      content += d?.content ?? '';
      for (const t of d?.tool_calls ?? []) { name += t.function?.name ?? ''; args += t.function?.arguments ?? ''; expect(t.index).toBe(0); }
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(content).toBe('Let me check.');
    expect(finish).toBe('tool_calls');
  });

  it('returns text that is not a valid tool call as content (never a 5xx)', async () => {
    const junk = ['<tool_call>{"name": ', '"broken", "arguments": {oops</tool_call> tail'];
    const h = await start({}, { autoRun: { tokens: 0, text: () => junk }, ctx: 4096 });
    const tools = [{ type: 'function' as const, function: { name: 'broken' } }];
    const res = await h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'x' }], tools });
    expect(res.choices[0]!.message.content).toBe(junk.join(''));
    expect(res.choices[0]!.finish_reason).toBe('stop');
  });

  it('serves completions, streamed and not', async () => {
    const h = await start();
    const res = await h.openai.completions.create({ model: 'x', prompt: 'abc', max_tokens: 2 });
    expect(res.choices[0]!.text).toBe('t1.0 t1.1 ');
    expect(res.choices[0]!.finish_reason).toBe('length');
    const stream = await h.openai.completions.create({ model: 'x', prompt: 'abc', stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.text ?? '';
    expect(text).toBe('t2.0 t2.1 t2.2 t2.3 ');
  });

  it('refuses bad bodies with 4xx naming the problem', async () => {
    const h = await start();
    const malformed = await raw(h.port, 'POST', '/v1/chat/completions', '{"messages": [');
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    const wrongType = await raw(h.port, 'POST', '/v1/chat/completions', '{}', { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    const role = await raw(h.port, 'POST', '/v1/chat/completions', JSON.stringify({ messages: [{ role: 'wizard', content: 'x' }] }));
    expect(role.status).toBe(400);
    expect(JSON.parse(role.body).error.message).toMatch(/role/);
    expect(JSON.parse(role.body).error.param).toMatch(/messages\[0\]\.role/);
    // The fake tokenizes one token per byte and has a 256-token context.
    const long = await raw(h.port, 'POST', '/v1/completions', JSON.stringify({ prompt: 'x'.repeat(400) }));
    expect(long.status).toBe(400);
    expect(JSON.parse(long.body).error).toMatchObject({ code: 'context_length_exceeded', param: 'prompt', n_prompt_tokens: 400, n_ctx: 256 });
    expect(JSON.parse(long.body).error.message).toMatch(/400 tokens.*256/);
    const notFound = await raw(h.port, 'GET', '/v1/nothing');
    expect(notFound.status).toBe(404);
    const method = await raw(h.port, 'GET', '/v1/chat/completions');
    expect(method.status).toBe(405);
    // The openai client surfaces them as APIError with the status.
    await expect(h.openai.chat.completions.create({ model: 'x', messages: [] })).rejects.toMatchObject({ status: 400 });
    const m = await metrics(h.port);
    expect(m.live).toMatchObject({ queued: 0, admitting: 0, running: 0, finishing: 0 });
  });

  it('refuses a body over the size limit with 413', async () => {
    const h = await start({ bodyLimitMib: 1 });
    const big = JSON.stringify({ prompt: 'x'.repeat(1024 * 1024 + 10) });
    const res = await raw(h.port, 'POST', '/v1/completions', big);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe('request_too_large');
  });

  it('requires the API key when one is set (Bearer or x-api-key), except for /health', async () => {
    const h = await start({ apiKey: 'sekret' });
    expect((await raw(h.port, 'GET', '/health')).status).toBe(200);
    const none = await raw(h.port, 'GET', '/v1/models');
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body).error.type).toBe('authentication_error');
    expect((await raw(h.port, 'GET', '/v1/models', undefined, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await raw(h.port, 'GET', '/v1/models', undefined, { authorization: 'Bearer sekret' })).status).toBe(200);
    expect((await raw(h.port, 'GET', '/v1/models', undefined, { 'x-api-key': 'sekret' })).status).toBe(200);
    // With a key, another Host is fine (the key protects).
    expect((await raw(h.port, 'GET', '/v1/models', undefined, { 'x-api-key': 'sekret', host: 'example.com' })).status).toBe(200);
    const res = await h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0]!.message.content).toBe('t1.0 t1.1 t1.2 t1.3 ');
  });

  it('without a key, refuses a foreign Host (DNS rebinding) and a cross-site Origin', async () => {
    const h = await start();
    const host = await raw(h.port, 'GET', '/v1/models', undefined, { host: 'attacker.example:8080' });
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body).error.code).toBe('host_not_allowed');
    // A Host that starts with a loopback address is still another host (the old parser took the last ':').
    const tricked = await raw(h.port, 'GET', '/v1/models', undefined, { host: '127.0.0.1:80@evil.com' });
    expect(tricked.status).toBe(403);
    expect(JSON.parse(tricked.body).error.code).toBe('host_not_allowed');
    const origin = await raw(h.port, 'GET', '/v1/models', undefined, { origin: 'https://attacker.example' });
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.body).error.code).toBe('origin_not_allowed');
    expect((await raw(h.port, 'GET', '/v1/models', undefined, { origin: 'http://localhost:5173' })).status).toBe(200);
    expect((await raw(h.port, 'GET', '/v1/models', undefined, { host: `localhost:${h.port}` })).status).toBe(200);
    expect((await raw(h.port, 'GET', '/v1/models', undefined, { host: `[::1]:${h.port}` })).status).toBe(200);
  });

  it('a client that disconnects mid-stream cancels its engine request at once', async () => {
    const h = await start({}, { autoRun: null });
    const ac = new AbortController();
    const stream = await h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'a' }], stream: true }, { signal: ac.signal });
    const r = h.fakes[0]!.all[0]!;
    r.admit(0); r.tokens([1], 'first');
    const it = stream[Symbol.asyncIterator]();
    await it.next(); // role
    await it.next(); // 'first'
    const t0 = Date.now();
    ac.abort();
    await until(() => r.cancelled, 'engine request cancelled');
    expect(Date.now() - t0).toBeLessThan(1000);
    await until(async () => (await metrics(h.port)).live.running === 0, 'nothing running');
    const m = await metrics(h.port);
    expect(m.requests.at(-1)!.finish).toBe('disconnected');
    expect(m.live).toMatchObject({ queued: 0, admitting: 0, running: 0, finishing: 0 });
  });

  it('a client that disconnects while queued leaves the queue at once; the engine never sees it', async () => {
    const h = await start({}, { slots: 1, autoRun: null });
    const blocker = h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'a' }] });
    await until(() => h.fakes[0]!.all.length === 1, 'first dispatched');
    const sock = connect(h.port, '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    const body = JSON.stringify({ prompt: 'queued', stream: true });
    sock.write(`POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await until(async () => (await metrics(h.port)).live.queued === 1, 'queued');
    sock.destroy();
    await until(async () => (await metrics(h.port)).live.queued === 0, 'left the queue', 1000);
    const m = await metrics(h.port);
    expect(m.requests.at(-1)!.finish).toBe('disconnected');
    expect(m.live).toMatchObject({ queued: 0, admitting: 1, running: 0, finishing: 0 });
    h.fakes[0]!.all[0]!.admit(0); h.fakes[0]!.all[0]!.finish('stop');
    await blocker;
    expect(h.fakes[0]!.all).toHaveLength(1);
  });

  it('a client that stops reading is treated as disconnected after --write-stall-ms', async () => {
    // 20 KB per token fills the socket buffers quickly when nobody reads.
    const piece = 'y'.repeat(20_000);
    const h = await start({ writeStallMs: 300 }, { autoRun: { tokens: 0, delayMs: 1, text: () => Array.from({ length: 2000 }, () => piece) }, ctx: 100_000 });
    const sock = connect(h.port, '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    const body = JSON.stringify({ prompt: 'go', stream: true, max_tokens: 2000 });
    sock.write(`POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    sock.pause(); // never read
    await until(() => h.fakes[0]!.all[0]?.cancelled === true, 'stalled client cancelled', 20_000);
    const m = await metrics(h.port);
    expect(m.requests.at(-1)!.finish).toBe('disconnected');
    expect(m.requests.at(-1)!.output_tokens).toBeLessThan(2000);
    sock.destroy();
  });

  it('an engine death mid-stream ends the stream with an error; the next request is served on the new epoch', async () => {
    const h = await start({}, { autoRun: null });
    const stream = await h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'a' }], stream: true });
    const r = h.fakes[0]!.all[0]!;
    r.admit(0); r.tokens([1], 'partial');
    const seen: string[] = [];
    const consumed = (async () => { for await (const c of stream) seen.push(c.choices[0]?.delta.content ?? ''); })();
    await until(() => seen.includes('partial'), 'first text');
    h.fakes[0]!.die('segfault in test');
    await expect(consumed).rejects.toThrow(/segfault in test/);
    // Down: 503 with the reason.
    await expect(h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'b' }] }))
      .rejects.toMatchObject({ status: 503 });
    const health = await raw(h.port, 'GET', '/health');
    expect(health.status).toBe(503);
    expect(JSON.parse(health.body).reason).toMatch(/segfault in test/);
    // The death as data (contract/health.ts), for a supervisor to read without parsing `reason`.
    const death = parseEngineDeath(JSON.parse(health.body).engine_death);
    expect(death).toMatchObject({ replica: 0, epoch: 1, signal: 'SIGKILL', last_error: 'segfault in test', deaths_in_row: 1, gave_up: false });
    h.fakes[0]!.restart();
    h.fakes[0]!.autoRun = { tokens: 2 };
    const res = await h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'c' }] });
    expect(res.choices[0]!.message.content).toBe('t2.0 t2.1 ');
    expect(h.fakes[0]!.all.at(-1)!.epoch).toBe(2);
    const m = await metrics(h.port);
    expect(m.totals.invariant_violations).toBe(0);
    expect(m.engines[0]!.last_death).toEqual(death);
  });

  it('a stream that fails before its first byte gets the status code and JSON error a plain request gets', async () => {
    const h = await start({ keepAliveMs: 60_000 }, { autoRun: null });
    const fake = h.fakes[0]!;
    const post = (path: string, body: Record<string, unknown>) => raw(h.port, 'POST', path, JSON.stringify(body));
    // The tokenizer fails (the engine process went away meanwhile): 503, streamed or not.
    const tokenize = fake.tokenize.bind(fake);
    fake.tokenize = async () => { throw new Error('tokenizer crashed'); };
    for (const stream of [false, true]) {
      const r = await post('/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }], stream });
      expect(r.status).toBe(503);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(r.body).error).toMatchObject({ code: 'engine_unavailable', message: expect.stringMatching(/tokenizer crashed/) });
    }
    // The same failure on /tokenize: the one engine-error table answers it, not a bare 500.
    const direct = await post('/tokenize', { content: 'x' });
    expect([direct.status, JSON.parse(direct.body).error.code]).toEqual([503, 'engine_unavailable']);
    fake.tokenize = tokenize;
    // Admitted, then the engine dies before any token: still a status code, not an empty 200.
    const streamed = post('/v1/completions', { prompt: 'abc', stream: true });
    await until(() => fake.all.length === 1, 'dispatched');
    fake.all[0]!.admit(0);
    fake.die('died reading the prompt');
    const r = await streamed;
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('1');
    expect(JSON.parse(r.body).error).toMatchObject({ code: 'engine_unavailable', message: expect.stringMatching(/died reading the prompt/) });
    expect((await metrics(h.port)).requests.at(-1)!.finish).toBe('error');
    // n > 1 (a role chunk per choice) and Anthropic's Messages stream (message_start) open the same
    // way, with their first real event: a death before it is still a status code.
    const opened = [
      { path: '/v1/chat/completions', body: { messages: [{ role: 'user', content: 'x' }], n: 2, stream: true }, why: 'died before the choices',
        error: (b: Record<string, unknown>) => expect(b.error).toMatchObject({ code: 'engine_unavailable', message: expect.stringMatching(/died before the choices/) }) },
      { path: '/v1/messages', body: { model: 'x', max_tokens: 4, messages: [{ role: 'user', content: 'x' }], stream: true }, why: 'died before message_start',
        error: (b: Record<string, unknown>) => expect(b).toEqual({ type: 'error', error: { type: 'overloaded_error', message: expect.stringMatching(/died before message_start/) } }) },
    ];
    for (const c of opened) {
      fake.restart();
      const sent = fake.all.length;
      const pending = post(c.path, c.body);
      await until(() => fake.all.length === sent + 1, `${c.path} dispatched`);
      fake.all[sent]!.admit(0);
      fake.die(c.why);
      const res = await pending;
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      c.error(JSON.parse(res.body));
    }
  });

  it('after a keep-alive comment committed the stream, a failure is an error event and no [DONE]', async () => {
    const h = await start({ keepAliveMs: 40 }, { autoRun: null });
    const fake = h.fakes[0]!;
    const sock = connect(h.port, '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    const body = JSON.stringify({ prompt: 'abc', stream: true });
    sock.write(`POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    let got = '';
    // The response is chunked: it has ended when the last chunk ("0\r\n\r\n") arrives.
    let onEnd: () => void = () => {};
    const ended = new Promise<void>((r) => { onEnd = r; });
    await new Promise<void>((resolve) => sock.on('data', (b: Buffer) => {
      got += b.toString();
      if (got.includes(': keep-alive')) resolve();
      if (got.endsWith('\r\n0\r\n\r\n')) onEnd();
    }));
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    fake.die('gone after the keep-alive');
    await ended;
    const blocks = got.split('\r\n\r\n').slice(1).join('').split('\n\n');
    const errorBlock = blocks.find((b) => b.includes('event: error'));
    expect(errorBlock).toMatch(/"code":"engine_unavailable"/);
    expect(got).not.toContain('[DONE]');
    sock.destroy();
  });

  it('reports Prometheus text with llamacpp names', async () => {
    const h = await start();
    await h.openai.completions.create({ model: 'x', prompt: 'abc', max_tokens: 2 });
    const res = await raw(h.port, 'GET', '/metrics/prometheus');
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/^llamacpp:tokens_predicted_total 2$/m);
    expect(res.body).toMatch(/^llamacpp:requests_deferred 0$/m);
    expect(res.body).toMatch(/^strata:requests_total\{finish="length"\} 1$/m);
  });

  it('stops cleanly: queued requests end, the stream gets an error, engines close', async () => {
    const h = await start({}, { slots: 1, autoRun: null });
    const settled = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);
    const first = settled(h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'a' }] }));
    await until(() => h.fakes[0]!.all.length === 1, 'dispatched');
    const second = settled(h.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'b' }] }));
    await until(async () => (await metrics(h.port)).live.queued === 1, 'queued');
    const t0 = Date.now();
    await h.server.close();
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(await first).toMatchObject({ status: 503, code: 'shutting_down' });
    expect(await second).toMatchObject({ status: 503, code: 'shutting_down' });
    expect(h.fakes[0]!.status().state).toBe('closed');
  });
});
