// Several models in one server, against scripted engines whose loads the test opens by hand:
// routing by name and role, 404 for a model not served, load on demand (a waiting stream gets
// keep-alives), LRU under --models-max, unloads refused while requests are in flight, idle
// unload on an injected clock, a failed load, and the states /v1/models and /metrics show on
// the way. The same paths run on real engines in test/integration/server-models.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { modelsBodySchema, type ModelRole } from '../../contract/models.js';
import { metricsBodySchema } from '../../contract/metrics.js';
import { checkBody } from '../../contract/check.js';
import type { ModelInfo } from '../../native/lib/addon.js';
import { silentLogger } from '../../backend/log/logger.js';
import { StrataServer } from '../../backend/app/app.js';
import { defaultConfig, type ServerConfig } from '../../backend/app/config.js';
import { FakeEngineClient, type FakeRequest } from '../helpers/fake-engine-client.js';

/** A scripted engine whose load waits for the test (gate) and may fail. */
class GatedEngine extends FakeEngineClient {
  constructor(private readonly load: Load, model: string) {
    super({ slots: 2, ctx: 256, autoRun: load.hold ? null : { tokens: 2, text: () => [`${model}-says `, 'hi'] } });
    this.onGenerate = (r) => load.held.push(r);
  }
  private closed: (() => void) | null = null;
  override async start(): Promise<ModelInfo> {
    // Closing the engine fails a start still waiting, as closing an engine process does.
    await Promise.race([this.load.gate, new Promise<never>((_, reject) => { this.closed = () => reject(new Error('engine closed while loading')); })]);
    if (this.load.fail) throw new Error(this.load.fail);
    return super.start();
  }
  override async close(): Promise<void> {
    this.closed?.();
    return super.close();
  }
}

interface Load { gate: Promise<void>; open(): void; fail: string | null; hold: boolean; held: FakeRequest[]; engines: GatedEngine[] }

function newLoad(open: boolean): Load {
  let release!: () => void;
  const gate = open ? Promise.resolve() : new Promise<void>((r) => { release = r; });
  return { gate, open: () => release?.(), fail: null, hold: false, held: [], engines: [] };
}

interface Harness { server: StrataServer; port: number; loads: Map<string, Load>; clock: { t: number } }
const running: Array<{ server: StrataServer; dir: string }> = [];

afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.server.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

async function start(models: Array<{ name: string; role?: ModelRole }>, over: Partial<ServerConfig> = {}, gated: string[] = []): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-models-'));
  const specs = models.map((m) => {
    const path = join(dir, `${m.name}.gguf`);
    writeFileSync(path, `scripted model ${m.name}`);
    return { name: m.name, path, role: m.role ?? null, settings: {} };
  });
  const loads = new Map(models.map((m) => [m.name, newLoad(!gated.includes(m.name))]));
  const clock = { t: 1_000_000 };
  const config: ServerConfig = { ...defaultConfig(), port: 0, sessionsDir: dir, keepAliveMs: 40, models: specs, model: specs[0]!.path, ...over };
  const server = new StrataServer({
    config, modelPath: specs[0]!.path, log: silentLogger, now: () => clock.t,
    engineFactory: (_replica, _ec, model) => {
      const load = loads.get(model)!;
      const e = new GatedEngine(load, model);
      load.engines.push(e);
      return e;
    },
  });
  running.push({ server, dir });
  const { port } = await server.listen();
  await server.startEngines();
  return { server, port, loads, clock };
}

function call(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

/** A streamed request read as raw text; `until` resolves when the text so far matches. */
function rawStream(port: number, path: string, body: unknown) {
  let text = '';
  let status = 0;
  const waiters: Array<{ re: RegExp; resolve: () => void }> = [];
  const check = () => { for (const w of waiters.splice(0)) { if (w.re.test(text)) w.resolve(); else waiters.push(w); } };
  const ended = new Promise<void>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; check(); });
      res.on('end', () => resolve());
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  return {
    get text() { return text; }, get status() { return status; }, ended,
    until: (re: RegExp) => new Promise<void>((resolve) => { waiters.push({ re, resolve }); check(); }),
  };
}

const states = async (port: number) => Object.fromEntries(checkBody(modelsBodySchema, (await call(port, 'GET', '/v1/models')).body, 'GET /v1/models').data.map((r) => [r.id, r.state]));
const chat = (port: number, model: string | undefined, content = 'hello') =>
  call(port, 'POST', '/v1/chat/completions', { ...(model !== undefined ? { model } : {}), messages: [{ role: 'user', content }], max_tokens: 8 });
const textOf = (r: { body: any }) => r.body.choices[0].message?.content ?? r.body.choices[0].text;

describe('several models in one server', () => {
  it('routes by name, by role when no model is named, and refuses a model it does not serve with 404 naming the served ones', async () => {
    const h = await start([{ name: 'coder', role: 'completion' }, { name: 'chat', role: 'chat' }], { preload: ['all'] });
    await h.server.pool.load('chat'); // the background preload, awaited
    const named = await chat(h.port, 'coder');
    expect(named.status).toBe(200);
    expect(textOf(named)).toBe('coder-says hi');
    expect(named.body.model).toBe('coder');
    const byRole = await chat(h.port, undefined);
    expect(textOf(byRole)).toBe('chat-says hi');
    expect(byRole.body.model).toBe('chat');
    const completion = await call(h.port, 'POST', '/v1/completions', { prompt: 'x', max_tokens: 4 });
    expect(textOf(completion)).toBe('coder-says hi');
    const unknown = await chat(h.port, 'gpt-4o');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(unknown.body.error.message).toContain('served models: coder, chat');
    const list = (await call(h.port, 'GET', '/v1/models')).body;
    expect(list.data.map((m: any) => [m.id, m.state, m.role, m.default, m.file])).toEqual([
      ['coder', 'loaded', 'completion', true, 'coder.gguf'], ['chat', 'loaded', 'chat', false, 'chat.gguf'],
    ]);
    expect(list.data[0].meta.n_ctx).toBe(256);
  });

  it('loads a model on first use; a waiting stream gets keep-alives, /v1/models and /metrics show it loading', async () => {
    const h = await start([{ name: 'a' }, { name: 'b' }], {}, ['b']);
    expect(await states(h.port)).toEqual({ a: 'loaded', b: 'unloaded' });
    const s = rawStream(h.port, '/v1/chat/completions', { model: 'b', stream: true, messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
    await s.until(/: keep-alive/);
    expect(s.status).toBe(200);
    expect(await states(h.port)).toEqual({ a: 'loaded', b: 'loading' });
    const m = checkBody(metricsBodySchema, (await call(h.port, 'GET', '/metrics')).body, 'GET /metrics');
    const b = m.models!.data.find((x) => x.name === 'b')!;
    expect(b).toMatchObject({ state: 'loading', requests_in_flight: 1, loads: 0 });
    expect(b.loading_ms).not.toBeNull();
    expect(m.model?.id).toBe('a'); // the top-level figures stay the default model's
    h.loads.get('b')!.open();
    await s.ended;
    expect(s.text).toContain('b-says ');
    expect(s.text).toContain('data: [DONE]');
    expect(await states(h.port)).toEqual({ a: 'loaded', b: 'loaded' });
  });

  it('unloads the least recently used idle model under --models-max, and reloads it on demand', async () => {
    const h = await start([{ name: 'a' }, { name: 'b' }, { name: 'c' }], { modelsMax: 2 });
    expect(textOf(await chat(h.port, 'b'))).toBe('b-says hi');
    h.clock.t += 1000;
    expect(textOf(await chat(h.port, 'a'))).toBe('a-says hi'); // b is now the least recently used
    h.clock.t += 1000;
    expect(textOf(await chat(h.port, 'c'))).toBe('c-says hi');
    expect(await states(h.port)).toEqual({ a: 'loaded', b: 'unloaded', c: 'loaded' });
    expect(h.loads.get('b')!.engines[0]!.status().state).toBe('closed');
    h.clock.t += 1000;
    expect(textOf(await chat(h.port, 'b'))).toBe('b-says hi');
    expect(await states(h.port)).toEqual({ a: 'unloaded', b: 'loaded', c: 'loaded' });
    const b = h.server.pool.rows().find((r) => r.name === 'b')!;
    expect(b).toMatchObject({ loads: 2, unloads: 1, requests_total: 2 });
    const prom = await new Promise<string>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: h.port, path: '/metrics/prometheus', agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { text += c; });
        res.on('end', () => resolve(text));
      }).on('error', reject).end();
    });
    expect(prom).toContain('strata:model_state{model="a",state="unloaded"} 1');
    expect(prom).toContain('strata:model_state{model="b",state="loaded"} 1');
    expect(prom).toContain('strata:model_loads_total{model="b"} 2');
  });

  it('a memory budget evicts like a count limit', async () => {
    const h = await start([{ name: 'a' }, { name: 'b' }], { modelsRamMib: 1 });
    // Each scripted file is a few bytes, so shrink the budget below two of them.
    (h.server.pool as unknown as { opts: { ramBudgetBytes: number } }).opts.ramBudgetBytes = 20;
    expect(textOf(await chat(h.port, 'b'))).toBe('b-says hi');
    expect(await states(h.port)).toEqual({ a: 'unloaded', b: 'loaded' });
  });

  it('never unloads a model with requests in flight: unload is a 409, LRU refuses with 503, both say why', async () => {
    const h = await start([{ name: 'a' }, { name: 'b' }], { modelsMax: 1 });
    const a = h.loads.get('a')!;
    a.engines[0]!.autoRun = null;
    const pending = chat(h.port, 'a');
    await until(() => a.held.length === 1);
    const refused = await call(h.port, 'POST', '/v1/models/unload', { model: 'a' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'model_busy', param: 'model' });
    expect(refused.body.error.message).toContain("'a' has 1 request(s) in flight");
    const other = await chat(h.port, 'b');
    expect(other.status).toBe(503);
    expect(other.body.error.code).toBe('models_busy');
    expect(other.body.error.message).toContain('a (1 in flight)');
    const r = a.held[0]!;
    r.admit(0);
    r.tokens([100], 'done');
    r.finish('stop');
    expect(textOf(await pending)).toBe('done');
    expect((await call(h.port, 'POST', '/v1/models/unload', { model: 'a' })).body).toEqual({ model: 'a', state: 'unloaded' });
    expect((await call(h.port, 'POST', '/v1/models/load', { model: 'b' })).body).toEqual({ model: 'b', state: 'loaded' });
    expect(await states(h.port)).toEqual({ a: 'unloaded', b: 'loaded' });
    expect((await call(h.port, 'POST', '/v1/models/load', { model: 'zz' })).status).toBe(404);
    const missing = await call(h.port, 'POST', '/v1/models/unload', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('model');
  });

  it('unloads a model idle past --model-idle-s (injected clock), not one in use', async () => {
    const h = await start([{ name: 'a' }, { name: 'b' }], { modelIdleS: 60, preload: ['all'] });
    await h.server.pool.load('b');
    expect(textOf(await chat(h.port, 'a'))).toBe('a-says hi');
    h.clock.t += 30_000;
    expect(textOf(await chat(h.port, 'b'))).toBe('b-says hi');
    h.clock.t += 31_000;
    expect(await h.server.pool.sweepIdle()).toEqual(['a']);
    expect(await states(h.port)).toEqual({ a: 'unloaded', b: 'loaded' });
    const b = h.loads.get('b')!;
    b.engines[0]!.autoRun = null;
    b.held.length = 0;
    const pending = chat(h.port, 'b');
    await until(() => b.held.length === 1);
    h.clock.t += 120_000;
    expect(await h.server.pool.sweepIdle()).toEqual([]);
    b.held[0]!.finish('stop');
    expect((await pending).status).toBe(200);
    expect(await h.server.pool.sweepIdle()).toEqual([]); // just used
    h.clock.t += 60_000;
    expect(await h.server.pool.sweepIdle()).toEqual(['b']);
    expect(textOf(await chat(h.port, 'a'))).toBe('a-says hi'); // loads again on demand
  });

  it('a model that fails to load is "failed" with its error, answers 503, and loads on a later request', async () => {
    const h = await start([{ name: 'a' }, { name: 'b' }]);
    h.loads.get('b')!.fail = 'bad tensor data';
    const r = await chat(h.port, 'b');
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('model_load_failed');
    expect(r.body.error.message).toContain('bad tensor data');
    const row = (await call(h.port, 'GET', '/v1/models')).body.data[1];
    expect(row).toMatchObject({ id: 'b', state: 'failed' });
    expect(row.error).toContain('bad tensor data');
    h.loads.get('b')!.fail = null;
    expect(textOf(await chat(h.port, 'b'))).toBe('b-says hi');
  });

  it('shutting down during a load ends the load and the request waiting for it', async () => {
    const h = await start([{ name: 'a' }, { name: 'b' }], {}, ['b']);
    const waiting = chat(h.port, 'b');
    await until(() => h.server.pool.state('b') === 'loading' && h.loads.get('b')!.engines.length === 1);
    await h.server.close();
    const r = await waiting;
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('shutting_down');
  });

  it('with --preload none nothing loads at start; health says ok and the first request loads its model', async () => {
    const h = await start([{ name: 'a' }, { name: 'b' }], { preload: ['none'] });
    expect(await states(h.port)).toEqual({ a: 'unloaded', b: 'unloaded' });
    expect((await call(h.port, 'GET', '/health')).body).toMatchObject({ status: 'ok', model: null });
    expect(textOf(await chat(h.port, 'b'))).toBe('b-says hi');
    expect((await call(h.port, 'GET', '/health')).body).toMatchObject({ status: 'ok', model: 'b' });
  });
});

/** Resolves once `cond` holds, checked after each turn of the event loop (no timers). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise<void>((r) => setImmediate(r));
}
