// What a client sees when a request fails, streamed or not, on chat, completions and infill, with
// a real server and a real engine. Bad input is a 4xx naming the field, never a 500. Then: a failure known before the stream's first byte (validation,
// the context check, a full queue, an engine that is down, an engine that dies before the first
// token) is the same status code and JSON error as without streaming; one after the first token
// is an SSE `error` event and the stream closes without [DONE]. The official `openai` client
// raises an APIError in every case. Engine deaths are SIGKILLs of the pid /metrics shows, sent
// when the request ledger reaches the state the case needs (no sleeps).
import { request as httpRequest } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLedger } from '../../backend/scheduler/request-ledger.js';
import { ensureTestModel } from '../helpers/models.js';
import { json, metrics, startServer, stream, until, type Running } from './server-helpers.js';

let srv: Running;

beforeAll(async () => {
  // keepAliveMs far above any case here: no keep-alive comment commits a stream before its first
  // token (the status line is committed by the first byte a stream sends; see docs/server.md, Streaming).
  // A restart delay long enough that "engine down" is observable before the engine is back.
  srv = await startServer(await ensureTestModel({ vocab: 'qwen2.5-coder' }),
    { slots: 3, ctx: 2048, batch: 16, keepAliveMs: 600_000, maxQueued: 1 }, { minDelayMs: 1500, maxDelayMs: 1500 });
});
afterAll(async () => { await srv?.close(); });

type Route = 'chat' | 'completions' | 'infill';
const ROUTES: Route[] = ['chat', 'completions', 'infill'];
const PATH: Record<Route, string> = { chat: '/v1/chat/completions', completions: '/v1/completions', infill: '/v1/infill' };

function bodyFor(route: Route, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const gen = { temperature: 0, max_tokens: 8, ...extra };
  if (route === 'chat') return { messages: [{ role: 'user', content: text }], ...gen };
  if (route === 'completions') return { prompt: text, ...gen };
  return { input_prefix: text, input_suffix: '\n}\n', ...gen };
}

// Common English words are one token each in the qwen2 vocabulary (digits would be one per digit).
const VOCAB_WORDS = ['apple', 'river', 'green', 'house', 'water', 'light', 'stone', 'music', 'table', 'cloud'];
const words = (n: number) => Array.from({ length: n }, (_, i) => VOCAB_WORDS[(i * 7 + Math.floor(i / 10)) % VOCAB_WORDS.length]).join(' ');

/** How one request ended: its status and JSON body, or for a 200 stream its events and whether [DONE] came. */
interface Outcome { status: number; contentType: string; error: { message: string; code: string | null; param: string | null } | null; done: boolean; events: unknown[] }

function send(route: Route, body: Record<string, unknown>, streamed: boolean): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: srv.port, method: 'POST', path: PATH[route], agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        const contentType = String(res.headers['content-type'] ?? '');
        if (!contentType.startsWith('text/event-stream')) {
          const parsed = JSON.parse(text || '{}') as { error?: Outcome['error'] };
          resolve({ status: res.statusCode ?? 0, contentType, error: parsed.error ?? null, done: false, events: [] });
          return;
        }
        const blocks = text.split('\n\n').filter((b) => b.length > 0);
        const data = blocks.map((b) => b.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')).filter((d) => d);
        const events = data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as { error?: Outcome['error'] });
        const errorEvent = blocks.find((b) => b.startsWith('event: error\n'));
        resolve({
          status: res.statusCode ?? 0, contentType, done: data.includes('[DONE]'), events,
          error: errorEvent ? (JSON.parse(errorEvent.split('\n')[1]!.slice(6)) as { error: Outcome['error'] }).error : null,
        });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify({ ...body, stream: streamed }));
  });
}

/** Every route in both modes: the same status and error code, as JSON (never a 200 stream). */
async function expectEverywhere(status: number, code: string, body: (route: Route) => Record<string, unknown>, routes = ROUTES): Promise<void> {
  for (const route of routes) {
    for (const streamed of [false, true]) {
      const o = await send(route, body(route), streamed);
      const what = `${route} ${streamed ? 'streamed' : 'not streamed'}`;
      expect({ what, status: o.status, json: o.contentType.startsWith('application/json'), code: o.error?.code }).toEqual({ what, status, json: true, code });
    }
  }
}

/** Resolves the first time `pred` holds for the server's request ledger (checked now and on every change). */
function whenTable(pred: (t: RequestLedger) => boolean): Promise<void> {
  const table = srv.server.ledger;
  return new Promise((resolve) => {
    if (pred(table)) { resolve(); return; }
    const off = table.onChange(() => { if (pred(table)) { off(); resolve(); } });
  });
}

async function enginePid(): Promise<number> {
  const h = await until('the engine to be ready', () => json(srv.port, 'GET', '/health'), (r) => r.status === 200, 60_000);
  expect(h.status).toBe(200);
  return (await metrics(srv.port)).engines[0].pid as number;
}

describe('bad input the engine or a recursion used to turn into a 500', () => {
  const rawBody = (path: string, text: string, headers: Record<string, string> = {}) => new Promise<{ status: number; error: Outcome['error'] }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: srv.port, method: 'POST', path, agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { b += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, error: (JSON.parse(b) as { error: Outcome['error'] }).error }));
    });
    req.on('error', reject);
    req.end(text);
  });
  const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  const user = '{"role":"user","content":"hi"}';

  it('logit_bias with a token id past the vocabulary is a 400 naming logit_bias, on every route and in both modes', async () => {
    const vocab = (await json(srv.port, 'GET', '/v1/models')).body.data[0].meta.n_vocab as number;
    expect(vocab).toBe(151936);
    for (const route of ROUTES) {
      for (const streamed of [false, true]) {
        const o = await send(route, bodyFor(route, 'Hello', { logit_bias: { [String(vocab)]: 5 } }), streamed);
        expect({ route, streamed, status: o.status, param: o.error?.param }).toEqual({ route, streamed, status: 400, param: 'logit_bias' });
        expect(o.error!.message).toMatch(/token id 151936 is outside the vocabulary of 151936 tokens/);
      }
    }
    // The last id is fine.
    expect((await send('completions', bodyFor('completions', 'Hello', { logit_bias: { [String(vocab - 1)]: 5 } }), false)).status).toBe(200);
  });

  it('10,000-deep JSON in tool parameters, tool-call arguments or chat_template_kwargs is a 400 naming the field', async () => {
    const cases: Array<[string, string]> = [
      [`{"messages":[${user}],"tools":[{"type":"function","function":{"name":"f","parameters":${deep(10_000)}}}]}`, 'tools[0].function.parameters'],
      [`{"messages":[${user},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":${deep(10_000)}}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
        'messages[1].tool_calls[0].function.arguments'],
      [`{"messages":[${user}],"chat_template_kwargs":${deep(10_000)}}`, 'chat_template_kwargs'],
    ];
    for (const [body, param] of cases) {
      const r = await rawBody(PATH.chat, body);
      expect({ status: r.status, param: r.error?.param, code: r.error?.code }).toEqual({ status: 400, param, code: 'too_deep' });
    }
  });

  it('numbers past double range or 2^53 get a message that says so', async () => {
    const t = await rawBody(PATH.chat, `{"messages":[${user}],"temperature":1e400}`);
    expect(t).toMatchObject({ status: 400, error: { param: 'temperature', message: 'temperature: must be between 0 and 2, got a number too large to represent' } });
    const m = await rawBody(PATH.completions, '{"prompt":"x","max_tokens":9007199254740994}');
    expect(m).toMatchObject({ status: 400, error: { param: 'max_tokens', message: 'max_tokens: must be an integer of at most 9007199254740991, got 9007199254740994' } });
  });

  it('a Host header that only starts with a loopback address is refused without a key', async () => {
    const r = await rawBody(PATH.completions, '{"prompt":"x","max_tokens":1}', { host: '127.0.0.1:80@evil.com' });
    expect(r).toMatchObject({ status: 403, error: { code: 'host_not_allowed' } });
  });
});

describe('streamed and non-streamed failures on a real server', () => {
  it('validation: a bad field is a 400 naming it, streamed or not, on every route; the openai client raises it', async () => {
    await expectEverywhere(400, 'invalid_value', (r) => bodyFor(r, 'Hello', { temperature: 5 }));
    const o = await send('chat', bodyFor('chat', 'Hello', { temperature: 5 }), true);
    expect(o.error!.param).toBe('temperature');
    await expect(srv.openai.chat.completions.create({ model: 'any', messages: [{ role: 'user', content: 'x' }], temperature: 5, stream: true }))
      .rejects.toMatchObject({ status: 400, code: 'invalid_value', param: 'temperature' });
  });

  it('context check: a prompt longer than the context is a 400 in both modes', async () => {
    // Infill windows its inputs to fit the batch, so only chat and completions can overflow.
    await expectEverywhere(400, 'context_length_exceeded', (r) => bodyFor(r, words(3000)), ['chat', 'completions']);
    const m = await metrics(srv.port);
    expect(m.live).toMatchObject({ queued: 0, admitting: 0, running: 0, finishing: 0 });
  });

  it('a full queue is a 503 in both modes; an engine death mid-stream is an error event without [DONE]', async () => {
    // Three long streams hold the three slots (one of them through the openai client).
    const long = { max_tokens: 1900, ignore_eos: true };
    const chatStream = await srv.openai.chat.completions.create({ model: 'any', messages: [{ role: 'user', content: 'Count:' }], temperature: 0, ...long, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    const chatIt = chatStream[Symbol.asyncIterator]();
    let chatFirst = await chatIt.next();
    while (!chatFirst.done && !chatFirst.value.choices[0]?.delta.content) chatFirst = await chatIt.next();
    const completion = stream(srv.port, PATH.completions, bodyFor('completions', 'Count:', long));
    const infill = stream(srv.port, PATH.infill, bodyFor('infill', 'int main() {', long));
    await Promise.all([completion.pieces(1), infill.pieces(1)]);
    // One more waits in the queue (maxQueued 1); anything else is refused, streamed or not.
    const queued = send('completions', bodyFor('completions', 'Queued'), false);
    await whenTable((t) => t.counts().queued === 1);
    await expectEverywhere(503, 'server_busy', (r) => bodyFor(r, 'Hello'));

    // Every stream got text already; now the engine dies.
    const pid = (await metrics(srv.port)).engines[0].pid as number;
    process.kill(pid, 'SIGKILL');
    const [c, i] = await Promise.all([completion.end, infill.end]);
    for (const end of [c, i]) {
      expect(end.text.length).toBeGreaterThan(0);
      expect(end.how).toBe('error');
      expect(end.error.code).toBe('engine_unavailable');
    }
    // No [DONE] after the error event, nothing at all after it.
    for (const end of [c, i]) expect(end.events.at(-1).error).toBeTruthy();
    let raised: unknown = null;
    try { for (;;) { const n = await chatIt.next(); if (n.done) break; } } catch (e) { raised = e; }
    expect(raised).toBeInstanceOf(OpenAI.APIError);
    expect((raised as InstanceType<typeof OpenAI.APIError>).code).toBe('engine_unavailable');
    // The queued request never reached the engine: a 503 status.
    expect(await queued).toMatchObject({ status: 503, error: { code: 'engine_unavailable' } });
  });

  it('an engine that dies before the first token, or is down, is a 503 status in both modes (never an empty 200)', async () => {
    const pid = await enginePid();
    // Three long prompts take the three slots (read 16 tokens a step, so no token comes for a
    // long while); a streamed infill waits in the queue.
    const prompt = words(1800);
    const chatStreamed = srv.openai.chat.completions.create({ model: 'any', messages: [{ role: 'user', content: prompt }], max_tokens: 4, stream: true })
      .then(() => null, (e: unknown) => e);
    const completionStreamed = send('completions', bodyFor('completions', prompt), true);
    const chatPlain = send('chat', bodyFor('chat', prompt), false);
    await whenTable((t) => t.counts().running === 3);
    const infillQueued = send('infill', bodyFor('infill', 'int f() {'), true);
    await whenTable((t) => t.counts().queued === 1);
    // All three are reading their prompts; none has a token yet.
    expect(srv.server.ledger.liveRecords().every((r) => r.firstTokenAt === null)).toBe(true);
    process.kill(pid, 'SIGKILL');

    expect(await chatStreamed).toMatchObject({ status: 503, code: 'engine_unavailable' });
    expect(await completionStreamed).toMatchObject({ status: 503, contentType: expect.stringMatching(/^application\/json/), error: { code: 'engine_unavailable' } });
    expect(await chatPlain).toMatchObject({ status: 503, error: { code: 'engine_unavailable' } });
    expect(await infillQueued).toMatchObject({ status: 503, contentType: expect.stringMatching(/^application\/json/), error: { code: 'engine_unavailable' } });

    // While it is down (restarting after 1.5 s), every route in both modes says so.
    expect((await metrics(srv.port)).engines[0].state).not.toBe('ready');
    await expectEverywhere(503, 'engine_unavailable', (r) => bodyFor(r, 'Hello'));
    await expect(srv.openai.completions.create({ model: 'any', prompt: 'x', stream: true })).rejects.toMatchObject({ status: 503 });

    // And it comes back; nothing was lost from the bookkeeping.
    await enginePid();
    const ok = await send('completions', bodyFor('completions', 'Hello again'), true);
    expect(ok).toMatchObject({ status: 200, done: true, error: null });
    const m = await metrics(srv.port);
    expect(m.totals.invariant_violations).toBe(0);
    expect(m.live).toMatchObject({ queued: 0, admitting: 0, running: 0, finishing: 0 });
  });
});
