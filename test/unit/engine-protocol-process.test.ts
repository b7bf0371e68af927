// The process client and the real engine host (dist/engine-host.mjs) over the real IPC channel,
// with no model: the host loads a scripted stand-in of the addon (STRATA_ADDON) that implements
// the Engine interface of native/lib/addon.d.ts. It pins the process lifecycle: handshake,
// crash -> engineDied for all + restart with a new epoch, silence watchdog, stale frames,
// calls failing on death, close, and the host exiting when its parent goes away.
// The same behaviours against the real engine: test/integration/engine-process.test.ts.
import { fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EngineClient, EngineRequest, EngineStatus, GenerateInput, RequestEvent } from '../../backend/engine/client.js';
import { createProcessEngineClient, injectFrameForTest, type ProcessEngineClientOptions } from '../../backend/engine/process-client.js';
import { packageRoot } from '../../backend/addon/loader.js';
import { SERVE_ENGINE_TIMEOUTS } from '../helpers/engine-timeouts.js';

// A deterministic engine: admits a request in its first step, then one token per step
// (id derived from the prompt), done at maxTokens. Prompt [666, ...] never gets a step (a hung
// engine); loadSession('…hang…') never settles; model names pick load failures ('flaky': the
// loads of epochs 2 and 3 fail).
const SCRIPTED_ADDON = String.raw`
class Engine {
  static async load(opts) {
    if (opts.model.includes('missing')) throw new Error('model file not found: ' + opts.model);
    if (opts.model.includes('never-ready')) return new Promise(() => {});
    const epoch = Number(process.argv[process.argv.indexOf('--epoch') + 1]);
    if (opts.model.includes('flaky') && (epoch === 2 || epoch === 3)) throw new Error('flaky load failure in epoch ' + epoch);
    return new Engine(opts);
  }
  constructor(opts) {
    this.opts = opts; this.reqs = new Map(); this.scheduled = false;
    this.info = { description: 'scripted ' + opts.model, architecture: 'none', params: 0, sizeBytes: 0, trainCtx: 64,
      ctx: 64, slots: 4, vocabSize: 1000, bos: 1, eos: 2, eot: -1, fim: null, chatTemplate: null, metadata: {},
      placement: [], kvType: 'f16', flashAttn: false };
    process.stderr.write('scripted engine loaded ' + opts.model + '\n');
    // Like the native engine's thread-safe function, a loaded engine keeps the host's loop alive.
    this.keepAlive = setInterval(() => {}, 1 << 30);
  }
  submit(req) {
    if (!req.prompt || req.prompt.length === 0) throw new TypeError('prompt must be non-empty');
    if (this.reqs.has(req.id)) throw new Error('request ' + req.id + ' is already live');
    this.reqs.set(req.id, { req, admitted: false, generated: 0, cancel: false, silent: req.prompt[0] === 666 });
    this.kick();
  }
  cancel(id) { const r = this.reqs.get(id); if (r) { r.cancel = true; this.kick(); } }
  kick() { if (!this.scheduled) { this.scheduled = true; setImmediate(() => this.step()); } }
  done(id, r, finish) {
    this.reqs.delete(id);
    return { type: 'done', id, finish, promptTokens: r.req.prompt.length, reused: 0, promptMs: 1, decodeMs: 2, generated: r.generated, text: '' };
  }
  step() {
    this.scheduled = false;
    const events = [];
    for (const [id, r] of this.reqs) {
      if (r.cancel) { events.push(this.done(id, r, 'cancel')); continue; }
      if (r.silent) continue;
      if (!r.admitted) {
        r.admitted = true;
        events.push({ type: 'admitted', id, slot: 0, promptTokens: r.req.prompt.length, reused: 0, restored: false });
        continue;
      }
      const sum = r.req.prompt.reduce((a, b) => a + b, 0);
      const tok = (sum * 31 + r.generated * 7) % 1000;
      r.generated++;
      events.push({ type: 'tokens', id, ids: [tok], text: 't' + tok + ' ' });
      if (r.generated >= r.req.maxTokens) events.push(this.done(id, r, 'length'));
    }
    if (events.length) this.opts.onEvents(events);
    if ([...this.reqs.values()].some((r) => !r.silent || r.cancel)) this.kick();
  }
  tokenize(text) { return Int32Array.from([...text].map((c) => c.codePointAt(0))); }
  detokenize(tokens) { return String.fromCodePoint(...tokens); }
  async saveSession(path, tokens) { return { tokens: tokens.length, bytes: 10, ms: 1 }; }
  loadSession(path) {
    if (path.includes('hang')) return new Promise(() => {});
    return Promise.resolve({ tokens: 2, bytes: 10, ms: 1, tokenIds: Int32Array.from([5, 6]) });
  }
  snapshot() { return { slots: [], queued: this.reqs.size, park: {}, totals: {} }; }
  traces() { return { steps: [], requests: [] }; }
  devices() { return [{ name: 'CPU', description: 'scripted', type: 'cpu', backend: 'CPU', memoryFree: 1, memoryTotal: 2 }]; }
  async close() {
    clearInterval(this.keepAlive);
    const events = [...this.reqs].map(([id, r]) => this.done(id, r, 'cancel'));
    if (events.length) this.opts.onEvents(events);
  }
}
module.exports = { Engine };
`;

type Done = Extract<RequestEvent, { type: 'done' }>;
const hostScript = join(packageRoot, 'dist', 'engine-host.mjs');
let dir = '';
let savedAddon: string | undefined;
const clients: EngineClient[] = [];

beforeAll(() => {
  if (!existsSync(hostScript)) throw new Error(`${hostScript} is missing: run npm run build`);
  dir = mkdtempSync(join(tmpdir(), 'strata-engine-proc-'));
  writeFileSync(join(dir, 'scripted-addon.cjs'), SCRIPTED_ADDON);
  savedAddon = process.env.STRATA_ADDON;
  process.env.STRATA_ADDON = join(dir, 'scripted-addon.cjs'); // inherited by the engine host
});
afterAll(() => {
  if (savedAddon === undefined) delete process.env.STRATA_ADDON;
  else process.env.STRATA_ADDON = savedAddon;
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function client(over: Partial<ProcessEngineClientOptions> = {}, logs: string[] = []): EngineClient {
  const c = createProcessEngineClient({
    replica: 0, config: { model: 'scripted.gguf' }, restart: { minDelayMs: 20, maxDelayMs: 200 }, ...SERVE_ENGINE_TIMEOUTS,
    log: (line) => logs.push(line), ...over,
  });
  clients.push(c);
  return c;
}

function nextStatus(c: EngineClient, pred: (s: EngineStatus) => boolean, what: string): Promise<EngineStatus> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`timed out waiting for ${what}; status ${JSON.stringify(c.status())}`)); }, 20_000);
    const off = c.onStatus((s) => { if (pred(s)) { clearTimeout(timer); off(); resolve(s); } });
  });
}

/** Reads events until `pred` holds for one of them (the stream stays usable through `rest`). */
async function readUntil(req: EngineRequest, pred: (e: RequestEvent) => boolean): Promise<{ seen: RequestEvent[]; rest: AsyncIterator<RequestEvent> }> {
  const it = req.events[Symbol.asyncIterator]();
  const seen: RequestEvent[] = [];
  for (;;) {
    const r = await it.next();
    if (r.done) return { seen, rest: it };
    seen.push(r.value);
    if (pred(r.value)) return { seen, rest: it };
  }
}

async function drain(it: AsyncIterator<RequestEvent>): Promise<RequestEvent[]> {
  const out: RequestEvent[] = [];
  for (let r = await it.next(); !r.done; r = await it.next()) out.push(r.value);
  return out;
}

async function textOf(req: EngineRequest): Promise<{ text: string; dones: Done[] }> {
  let text = '';
  const dones: Done[] = [];
  for await (const ev of req.events) {
    if (ev.type === 'tokens') text += ev.text;
    if (ev.type === 'done') { dones.push(ev); text += ev.text; }
  }
  return { text, dones };
}

/** Running (a zombie waiting for its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Kills the engine at each ready, `deaths` times in all; resolves with the status once the client gives up. */
async function killAtEachReady(c: EngineClient, deaths: number): Promise<EngineStatus> {
  for (let epoch = 1; epoch < deaths; epoch++) {
    const next = nextStatus(c, (s) => s.state === 'ready' && s.epoch === epoch + 1, `ready on epoch ${epoch + 1}`);
    process.kill(c.status().pid!, 'SIGKILL');
    await next;
  }
  const failed = nextStatus(c, (s) => s.state === 'failed', 'failed');
  process.kill(c.status().pid!, 'SIGKILL');
  return failed;
}

describe('process engine client (scripted addon)', () => {
  it('handshakes, streams a request and ends it exactly once', async () => {
    const logs: string[] = [];
    const c = client({}, logs);
    const info = await c.start();
    expect(info.description).toBe('scripted scripted.gguf');
    expect(c.info).toEqual(info);
    const s = c.status();
    expect(s).toMatchObject({ state: 'ready', epoch: 1, restarts: 0, staleFrames: 0 });
    expect(alive(s.pid!)).toBe(true);
    const { text, dones } = await textOf(c.generate({ prompt: [1, 2, 3], maxTokens: 3 }));
    expect(text).toBe('t186 t193 t200 ');
    expect(dones).toEqual([{ type: 'done', finish: 'length', promptTokens: 3, reused: 0, promptMs: 1, decodeMs: 2, generated: 3, text: '' }]);
    expect(await c.tokenize('hé')).toEqual([104, 233]);
    expect(await c.detokenize([104, 105])).toBe('hi');
    expect(await c.loadSession('/x.session', 'id')).toEqual({ tokens: 2, bytes: 10, ms: 1, tokenIds: [5, 6] });
    expect((await c.devices())[0]!.name).toBe('CPU');
    expect(logs.some((l) => l.includes('scripted engine loaded scripted.gguf'))).toBe(true);
    expect(logs.some((l) => l.includes('engine host started (epoch 1'))).toBe(true);
  });

  it('a refused submit ends that request with the engine\'s error, not engineDied', async () => {
    const c = client();
    await c.start();
    const done = await c.generate({ prompt: [], maxTokens: 3 }).done;
    expect(done).toMatchObject({ finish: 'error', error: 'prompt must be non-empty', generated: 0 });
    expect(done.engineDied).toBeUndefined();
    expect(c.status().state).toBe('ready');
  });

  it('a bad model makes start() reject with the load error, and nothing restarts', async () => {
    const c = client({ config: { model: '/nowhere/missing.gguf' } });
    await expect(c.start()).rejects.toThrow('model file not found: /nowhere/missing.gguf');
    expect(c.status()).toMatchObject({ state: 'dead', epoch: 1, lastError: 'model file not found: /nowhere/missing.gguf' });
    const done = await c.generate({ prompt: [1], maxTokens: 1 }).done;
    expect(done).toMatchObject({ finish: 'error', engineDied: true });
    expect(done.error).toMatch(/is down: model file not found/);
    await expect(c.tokenize('x')).rejects.toThrow(/tokenize: engine \(replica 0\) is down/);
  });

  it('a load that never finishes is killed at the ready timeout', async () => {
    const c = client({ config: { model: 'never-ready.gguf' }, readyTimeoutMs: 500 });
    await expect(c.start()).rejects.toThrow(/engine process exited \(signal SIGKILL\): engine did not become ready within 500 ms/);
    expect(c.status().state).toBe('dead');
  });

  it('killing the process fails every in-flight request and call at once, then restarts on a new epoch', async () => {
    const c = client();
    await c.start();
    const before = await textOf(c.generate({ prompt: [4, 5], maxTokens: 4 }));
    const pid = c.status().pid!;
    const decoding = c.generate({ prompt: [7], maxTokens: 1_000_000 });
    const hung = c.generate({ prompt: [666], maxTokens: 5 });
    const call = c.loadSession('/hang.session', 'id');
    const { rest } = await readUntil(decoding, (e) => e.type === 'tokens');
    const dead = nextStatus(c, (s) => s.state === 'dead', 'dead');
    const ready = nextStatus(c, (s) => s.state === 'ready' && s.epoch === 2, 'ready on epoch 2');
    process.kill(pid, 'SIGKILL');
    for (const done of [(await drain(rest)).at(-1) as Done, await hung.done]) {
      expect(done).toMatchObject({ type: 'done', finish: 'error', engineDied: true, promptMs: null, decodeMs: null });
      expect(done.error).toMatch(/^engine process exited \(signal SIGKILL\)/);
    }
    await expect(call).rejects.toThrow(/^loadSession: engine process exited \(signal SIGKILL\)/);
    expect((await dead).lastError).toMatch(/signal SIGKILL/);
    // While it restarts, requests end at once and say so.
    const during = await c.generate({ prompt: [1], maxTokens: 1 }).done;
    expect(during).toMatchObject({ finish: 'error', engineDied: true });
    expect(during.error).toMatch(/engine \(replica 0\) is restarting/);
    const s = await ready;
    expect(s).toMatchObject({ epoch: 2, restarts: 1 });
    expect(s.pid).not.toBe(pid);
    const after = await textOf(c.generate({ prompt: [4, 5], maxTokens: 4 }));
    expect(after.text).toBe(before.text);
    expect(after.dones).toHaveLength(1);
  });

  it('restarts with doubling back-off after failed loads, reset after a healthy run', async () => {
    const logs: string[] = [];
    const c = client({ config: { model: 'flaky.gguf' }, restart: { minDelayMs: 20, maxDelayMs: 60, healthyMs: 0 } }, logs);
    await c.start();
    const failures: string[] = [];
    c.onStatus((s) => { if (s.state === 'dead' && s.lastError) failures.push(s.lastError); });
    process.kill(c.status().pid!, 'SIGKILL');
    expect(await nextStatus(c, (s) => s.state === 'ready', 'ready after failed restarts')).toMatchObject({ epoch: 4, restarts: 3 });
    expect(failures.slice(1)).toEqual(['flaky load failure in epoch 2', 'flaky load failure in epoch 3']);
    process.kill(c.status().pid!, 'SIGKILL');
    await nextStatus(c, (s) => s.state === 'ready', 'ready on epoch 5');
    const delays = logs.flatMap((l) => /restarting in (\d+) ms/.exec(l)?.[1] ?? []).map(Number);
    expect(delays).toEqual([20, 40, 60, 20]); // doubling, capped at max; a healthy run resets it
  });

  it('an engine killed after serving requests restarts at the base delay each time; its death is data', async () => {
    const logs: string[] = [];
    // healthyMs far away: only the requests served prove the run was not a loop.
    const c = client({ model: 'coder', restart: { minDelayMs: 20, maxDelayMs: 2000, healthyMs: 600_000, maxCrashes: 3 } }, logs);
    await c.start();
    for (let epoch = 1; epoch <= 4; epoch++) {
      expect((await textOf(c.generate({ prompt: [4, 5], maxTokens: 2 }))).dones[0]).toMatchObject({ finish: 'length' });
      const pid = c.status().pid!;
      const dead = nextStatus(c, (s) => s.state === 'dead', `dead after epoch ${epoch}`);
      const next = nextStatus(c, (s) => s.state === 'ready' && s.epoch === epoch + 1, `ready on epoch ${epoch + 1}`);
      process.kill(pid, 'SIGKILL');
      expect((await dead).lastDeath).toMatchObject({
        epoch, pid, signal: 'SIGKILL', exitCode: null, deathsInRow: 1, gaveUp: false, model: 'coder', devices: [],
      });
      await next;
    }
    const delays = logs.flatMap((l) => /restarting in (\d+) ms/.exec(l)?.[1] ?? []).map(Number);
    expect(delays).toEqual([20, 20, 20, 20]); // four deaths, more than maxCrashes, and never a doubled delay
    expect(c.status().state).toBe('ready');
  });

  it('a crash loop (killed at each ready, nothing served) still doubles its delay and gives up, with the death as data', async () => {
    const logs: string[] = [];
    const c = client({ restart: { minDelayMs: 20, maxDelayMs: 2000, healthyMs: 600_000, maxCrashes: 3 } }, logs);
    await c.start();
    const failed = killAtEachReady(c, 3);
    expect((await failed).lastDeath).toMatchObject({ epoch: 3, signal: 'SIGKILL', deathsInRow: 3, gaveUp: true, model: 'scripted.gguf' });
    expect(logs.flatMap((l) => /restarting in (\d+) ms/.exec(l)?.[1] ?? []).map(Number)).toEqual([20, 40]);
  });

  it('a load error is a death whose last error is the engine\'s own words', async () => {
    const c = client({ config: { model: '/nowhere/missing.gguf', devices: ['CPU'] } });
    await expect(c.start()).rejects.toThrow(/model file not found/);
    expect(c.status().lastDeath).toMatchObject({
      epoch: 1, signal: null, exitCode: null, lastError: 'model file not found: /nowhere/missing.gguf', deathsInRow: 1, gaveUp: false,
      model: 'missing.gguf', devices: ['CPU'],
    });
  });

  it('stops restarting after maxCrashes deaths in a row, says why, and starts again only when asked', async () => {
    const logs: string[] = [];
    const c = client({ restart: { minDelayMs: 20, maxDelayMs: 20, maxCrashes: 3 } }, logs);
    await c.start();
    // A model that loads and then dies on every request, as an AMX kernel did: kill it at each ready.
    const failed = killAtEachReady(c, 3);
    const s = await failed;
    expect(s.lastError).toMatch(/^stopped restarting after 3 engine deaths in a row; last: engine process exited \(signal SIGKILL\)/);
    expect(s.epoch).toBe(3);
    expect(logs.filter((l) => /restarting in \d+ ms/.test(l))).toHaveLength(2);
    const refused = await c.generate({ prompt: [1], maxTokens: 1 }).done;
    expect(refused).toMatchObject({ finish: 'error', engineDied: true });
    expect(refused.error).toMatch(/engine \(replica 0\) stopped restarting after 3 engine deaths in a row/);
    expect(c.status()).toMatchObject({ state: 'failed', epoch: 3 });
    // An explicit start (the user fixed the cause) tries again with a fresh count.
    await c.start();
    expect(c.status()).toMatchObject({ state: 'ready', epoch: 4 });
    expect((await textOf(c.generate({ prompt: [4, 5], maxTokens: 2 }))).dones).toHaveLength(1);
  });

  it('drops and counts frames of an older epoch, finished or unknown requests', async () => {
    const c = client();
    await c.start();
    const finished = c.generate({ prompt: [3], maxTokens: 2 });
    await finished.done;
    process.kill(c.status().pid!, 'SIGKILL');
    await nextStatus(c, (s) => s.state === 'ready' && s.epoch === 2, 'ready on epoch 2');
    const live = c.generate({ prompt: [9], maxTokens: 1_000_000 });
    const { rest } = await readUntil(live, (e) => e.type === 'tokens');
    const stale0 = c.status().staleFrames;
    const forged = (epoch: number, id: number) =>
      ({ kind: 'events', epoch, events: [{ type: 'tokens', id, ids: [1], text: 'FORGED' }, { type: 'done', id, finish: 'stop', promptTokens: 1, reused: 0, promptMs: 0, decodeMs: 0, generated: 1, text: 'FORGED' }] });
    injectFrameForTest(c, forged(1, live.id)); // the old epoch, aimed at a live request
    injectFrameForTest(c, forged(2, finished.id)); // a finished request
    injectFrameForTest(c, forged(2, 424242)); // nobody's
    injectFrameForTest(c, { kind: 'result', epoch: 2, call: 999, value: 1 }); // a call nobody made
    expect(c.status().staleFrames - stale0).toBe(7);
    live.cancel();
    const events = await drain(rest);
    expect(events.some((e) => (e.type === 'tokens' || e.type === 'done') && e.text.includes('FORGED'))).toBe(false);
    expect(events.filter((e) => e.type === 'done')).toEqual([expect.objectContaining({ finish: 'cancel' })]);
  });

  it('cancel while queued-looking, decoding, or twice gives exactly one done each', async () => {
    const c = client();
    await c.start();
    const early = c.generate({ prompt: [1], maxTokens: 1_000_000 });
    early.cancel();
    const mid = c.generate({ prompt: [2], maxTokens: 1_000_000 });
    const { rest } = await readUntil(mid, (e) => e.type === 'tokens');
    mid.cancel();
    mid.cancel();
    const a = await textOf(early);
    const b = await drain(rest);
    expect(a.dones).toEqual([expect.objectContaining({ finish: 'cancel' })]);
    expect(b.filter((e) => e.type === 'done')).toEqual([expect.objectContaining({ finish: 'cancel' })]);
    early.cancel();
    expect(c.status().state).toBe('ready');
  });

  it('kills an engine that stays silent while it has work', async () => {
    const c = client({ silenceTimeoutMs: 300 });
    await c.start();
    const idle = c.status().pid;
    const done = await c.generate({ prompt: [666], maxTokens: 3 }).done;
    expect(done).toMatchObject({ finish: 'error', engineDied: true });
    expect(done.error).toMatch(/^engine process exited \(signal SIGKILL\): engine sent nothing for 300 ms with 1 requests and 0 calls in flight/);
    const s = await nextStatus(c, (st) => st.state === 'ready', 'restart after silence');
    expect(s.pid).not.toBe(idle);
  });

  it('close() cancels in-flight requests, ends the process, and is idempotent', async () => {
    const c = client();
    await c.start();
    const pid = c.status().pid!;
    const running = c.generate({ prompt: [8], maxTokens: 1_000_000 });
    const hung = c.generate({ prompt: [666], maxTokens: 1 });
    await readUntil(running, (e) => e.type === 'tokens');
    await Promise.all([c.close(), c.close()]);
    expect((await running.done).finish).toBe('cancel');
    expect((await hung.done).finish).toBe('cancel');
    expect(alive(pid)).toBe(false);
    expect(c.status()).toMatchObject({ state: 'closed', pid: null });
    const after = await c.generate({ prompt: [1], maxTokens: 1 }).done;
    expect(after).toMatchObject({ finish: 'error', engineDied: true, error: 'engine (replica 0) is closed' });
    await expect(c.start()).rejects.toThrow('engine (replica 0) is closed');
    await c.close();
  });

  // Windows has no SIGTERM (kill() ends a process at once there): close() asks over IPC in both
  // phases. Here the POSIX way runs beside it: a load in progress is ended by SIGTERM, unasked.
  for (const platform of ['win32', 'linux'] as const) {
    it(`${platform} way: close() of a ready engine and of one still loading`, async () => {
      for (const model of ['scripted.gguf', 'never-ready.gguf']) {
        const logs: string[] = [];
        const c = client({ platform, config: { model } }, logs);
        const started = c.start();
        started.catch(() => undefined);
        if (model === 'scripted.gguf') await started;
        // A loaded machine can take seconds to start the host: wait for its line, not the default second.
        else await expect.poll(() => logs.some((l) => l.includes('engine host started (epoch 1')), { timeout: 60_000 }).toBe(true);
        const pid = c.status().pid!;
        await c.close();
        expect(alive(pid), model).toBe(false);
        const asked = logs.some((l) => l.includes('engine host (epoch 1) exiting: close requested'));
        expect(asked, `${model}: ${logs.join('\n')}`).toBe(platform === 'win32' || model === 'scripted.gguf');
        expect(logs.some((l) => l.includes('killing it'))).toBe(false);
        if (model !== 'scripted.gguf') await expect(started).rejects.toThrow('engine (replica 0) was closed before it was ready');
      }
    });
  }

  it('a node binary that cannot start is a clear start error', async () => {
    const c = client({ nodePath: join(dir, 'no-node') });
    await expect(c.start()).rejects.toThrow(/^cannot start engine process \(.*no-node\): spawn .*ENOENT/);
    expect(c.status()).toMatchObject({ state: 'dead', pid: null });
  });

  it('a request that cannot be serialized ends with that error and harms nothing else', async () => {
    const c = client();
    await c.start();
    const bad = { prompt: [1], maxTokens: 1, sampling: { seed: () => 1 } } as unknown as GenerateInput;
    const done = await c.generate(bad).done;
    expect(done).toMatchObject({ finish: 'error' });
    expect(done.error).toMatch(/^cannot send submit to the engine: /);
    expect(done.engineDied).toBeUndefined();
    expect((await c.generate({ prompt: [1], maxTokens: 2 }).done).finish).toBe('length');
  });

  it('a missing host script is a clear start error', async () => {
    const c = client({ hostScript: join(dir, 'nope.mjs') });
    await expect(c.start()).rejects.toThrow(/engine host script not found: .*nope\.mjs/);
  });

  it('the engine host exits when its parent goes away', async () => {
    const child = fork(hostScript, ['--epoch', '1'], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'], execArgv: [] });
    const ready = new Promise((resolve) => child.once('message', resolve));
    child.send({ kind: 'init', epoch: 1, config: { model: 'scripted.gguf' } });
    expect(await ready).toMatchObject({ kind: 'ready', epoch: 1, pid: child.pid });
    const exited = new Promise<number | null | 'still running'>((resolve) => {
      const t = setTimeout(() => { child.kill('SIGKILL'); resolve('still running'); }, 10_000);
      child.once('exit', (code) => { clearTimeout(t); resolve(code); });
    });
    child.disconnect();
    expect(await exited).toBe(0);
  });

  it('the engine host exits when its parent is killed', async () => {
    // A parent that forks the host, reports its pid once it is ready, and is then SIGKILLed.
    const parent = spawn(process.execPath, ['-e', `
      const h = require('node:child_process').fork(${JSON.stringify(hostScript)}, ['--epoch', '1'],
        { serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'], execArgv: [] });
      h.on('message', (m) => { if (m.kind === 'ready') process.stdout.write(h.pid + '\\n'); });
      h.send({ kind: 'init', epoch: 1, config: { model: 'scripted.gguf' } });
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    expect(alive(pid)).toBe(true);
    parent.kill('SIGKILL');
    const deadline = Date.now() + 10_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const lingering = alive(pid);
    if (lingering) process.kill(pid, 'SIGKILL');
    expect(lingering).toBe(false);
  });
});
