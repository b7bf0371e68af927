// The engine host process with the real native engine and a real tiny model (greedy): streaming,
// engine death mid-request, restart on a new epoch, stale frames, cancel in every phase,
// sessions across processes, and load errors.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineClient, EngineRequest, EngineStatus, GenerateInput, RequestEvent } from '../../backend/engine/client.js';
import { createProcessEngineClient, injectFrameForTest } from '../../backend/engine/process-client.js';
import { ensureTestModel } from '../helpers/models.js';
import { SERVE_ENGINE_TIMEOUTS } from '../helpers/engine-timeouts.js';

type Done = Extract<RequestEvent, { type: 'done' }>;

let model = '';
let dir = '';
const logs: string[] = [];
const clients: EngineClient[] = [];

function client(over: Partial<Parameters<typeof createProcessEngineClient>[0]['config']> = {}): EngineClient {
  const c = createProcessEngineClient({
    replica: 0,
    // Small batches make the prompt take several steps, so "mid-prompt" is a real phase.
    config: { model, slots: 2, batch: 32, threads: 2, ...over },
    restart: { minDelayMs: 50, maxDelayMs: 1000 }, ...SERVE_ENGINE_TIMEOUTS,
    log: (line) => logs.push(line),
  });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  model = await ensureTestModel({});
  dir = mkdtempSync(join(tmpdir(), 'strata-engine-it-'));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  rmSync(dir, { recursive: true, force: true });
});

interface Run { events: RequestEvent[]; text: string; ids: number[]; dones: Done[] }

async function run(req: EngineRequest, onEvent?: (e: RequestEvent) => void): Promise<Run> {
  const out: Run = { events: [], text: '', ids: [], dones: [] };
  for await (const ev of req.events) {
    out.events.push(ev);
    onEvent?.(ev);
    if (ev.type === 'tokens') { out.text += ev.text; out.ids.push(...ev.ids); }
    if (ev.type === 'done') { out.dones.push(ev); out.text += ev.text; }
  }
  return out;
}

function nextStatus(c: EngineClient, pred: (s: EngineStatus) => boolean, what: string): Promise<EngineStatus> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`timed out waiting for ${what}: ${JSON.stringify(c.status())}`)); }, 60_000);
    const off = c.onStatus((s) => { if (pred(s)) { clearTimeout(timer); off(); resolve(s); } });
  });
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e: unknown) => { clearTimeout(t); reject(e as Error); });
  });
}

const long = (prompt: number[]): GenerateInput => ({ prompt, maxTokens: 100_000, ignoreEos: true });

describe('engine process (real engine, tiny model)', () => {
  let c: EngineClient;
  let prompt: number[] = [];
  let baseline: Run;

  beforeAll(async () => {
    c = client();
    await c.start();
    prompt = await c.tokenize('The quick brown fox jumps over the lazy dog because', true);
  });

  it('streams a greedy request and ends it exactly once', async () => {
    baseline = await run(c.generate({ prompt, maxTokens: 12, ignoreEos: true }));
    expect(baseline.dones).toHaveLength(1);
    expect(baseline.events[0]).toMatchObject({ type: 'admitted', promptTokens: prompt.length });
    expect(baseline.dones[0]).toMatchObject({ finish: 'length', generated: 12, promptTokens: prompt.length });
    expect(baseline.ids).toHaveLength(12);
    expect(baseline.text.length).toBeGreaterThan(0);
    expect(baseline.dones[0]!.promptMs).not.toBeNull();
    const again = await run(c.generate({ prompt, maxTokens: 12, ignoreEos: true }));
    expect(again.text).toBe(baseline.text);
  });

  it('killing the engine fails every in-flight request promptly; the restart serves the same text on a new epoch', async () => {
    const before = c.status();
    const a = c.generate(long(prompt));
    const b = c.generate(long([...prompt].reverse()));
    const queued = c.generate(long(prompt.slice(0, 4))); // 2 slots: this one waits
    const call = c.snapshot();
    let sawToken!: () => void;
    const tokenSeen = new Promise<void>((r) => { sawToken = r; });
    const runs = [run(a, (e) => { if (e.type === 'tokens') sawToken(); }), run(b), run(queued)];
    await tokenSeen;
    await call;
    const ready = nextStatus(c, (s) => s.state === 'ready' && s.epoch === before.epoch + 1, 'restart');
    process.kill(before.pid!, 'SIGKILL');
    const ended = await within(Promise.all(runs), 5000, 'failing in-flight requests');
    for (const r of ended) {
      expect(r.dones).toHaveLength(1);
      expect(r.dones[0]).toMatchObject({ finish: 'error', engineDied: true, promptMs: null, decodeMs: null });
      expect(r.dones[0]!.error).toMatch(/^engine process exited \(signal SIGKILL\)/);
    }
    expect(ended[0]!.dones[0]!.generated).toBeGreaterThan(0);
    const s = await ready;
    expect(s.pid).not.toBe(before.pid);
    expect(s.restarts).toBe(before.restarts + 1);
    const after = await run(c.generate({ prompt, maxTokens: 12, ignoreEos: true }));
    expect(after.text).toBe(baseline.text);
    expect(after.dones).toHaveLength(1);
  });

  it('frames of an older epoch or a finished request never reach a live request', async () => {
    const { epoch } = c.status();
    expect(epoch, 'runs after the restart test: needs an older epoch').toBeGreaterThan(1);
    const finished = c.generate({ prompt, maxTokens: 2 });
    await finished.done;
    const live = c.generate(long(prompt));
    const stale0 = c.status().staleFrames;
    let forgedOnce = false;
    const result = run(live, (e) => {
      if (e.type !== 'tokens' || forgedOnce) return;
      forgedOnce = true;
      const forged = (ep: number, id: number) => ({ kind: 'events', epoch: ep, events: [
        { type: 'tokens', id, ids: [1], text: '<FORGED>' },
        { type: 'done', id, finish: 'stop', promptTokens: 1, reused: 0, promptMs: 1, decodeMs: 1, generated: 1, text: '<FORGED>' },
      ] });
      injectFrameForTest(c, forged(epoch - 1, live.id));
      injectFrameForTest(c, forged(epoch, finished.id));
      expect(c.status().staleFrames - stale0).toBe(4);
      live.cancel();
    });
    const r = await result;
    expect(r.text).not.toContain('<FORGED>');
    expect(r.dones).toEqual([expect.objectContaining({ finish: 'cancel' })]);
  });

  it('cancel while queued, mid-prompt and mid-decode gives exactly one done each', async () => {
    const longPrompt = await c.tokenize('one two three four five six seven eight nine ten '.repeat(20), true);
    expect(longPrompt.length).toBeGreaterThan(64); // more than two steps of 32
    // Mid-decode: cancel at its first token.
    const decoding = c.generate(long(prompt));
    const decodeRun = run(decoding, (e) => { if (e.type === 'tokens') decoding.cancel(); });
    // Mid-prompt: cancel at its first progress report, before the prompt is read.
    const reading = c.generate(long(longPrompt));
    const readRun = run(reading, (e) => { if (e.type === 'progress' && e.read < e.total) reading.cancel(); });
    // Queued: both slots are taken, so this one waits; cancel it right away.
    const queued = c.generate(long(prompt.slice(0, 3)));
    queued.cancel();
    queued.cancel();
    const [d, p, q] = await Promise.all([decodeRun, readRun, run(queued)]);
    for (const r of [d, p, q]) expect(r.dones).toEqual([expect.objectContaining({ finish: 'cancel' })]);
    expect(d.ids.length).toBeGreaterThan(0);
    expect(p.events.some((e) => e.type === 'progress')).toBe(true);
    expect(p.ids).toHaveLength(0);
    expect(q.events.filter((e) => e.type !== 'done')).toEqual([]);
    expect(q.dones[0]!.promptMs).toBeNull();
    // The slots are free again: a new request runs to the end.
    expect((await run(c.generate({ prompt, maxTokens: 4, ignoreEos: true }))).dones[0]!.finish).toBe('length');
  });

  it('a session saved in one engine process continues identically in a fresh one', async () => {
    const path = join(dir, 'conversation.session');
    const first = await run(c.generate({ prompt, maxTokens: 8, ignoreEos: true }));
    const conversation = [...prompt, ...first.ids];
    const saved = await c.saveSession(path, conversation, 'engine-process-test', '{"note":"kept"}');
    expect(saved.tokens).toBeGreaterThan(0);
    const followUp = [...conversation, ...(await c.tokenize(' and then', false))];
    const here = await run(c.generate({ prompt: followUp, maxTokens: 10, ignoreEos: true }));

    const fresh = client();
    await fresh.start();
    expect(fresh.status().pid).not.toBe(c.status().pid);
    const loaded = await fresh.loadSession(path, 'engine-process-test');
    expect(loaded.tokenIds).toEqual(conversation.slice(0, loaded.tokenIds.length));
    expect(loaded.meta).toBe('{"note":"kept"}');
    expect(loaded.into).toBe('slot');
    const there = await run(fresh.generate({ prompt: followUp, maxTokens: 10, ignoreEos: true }));
    // Loaded straight into an idle slot: the continuation reuses that slot's KV (no park restore).
    expect(there.events[0]).toMatchObject({ type: 'admitted', restored: false, reused: loaded.tokens });
    expect(there.text).toBe(here.text);
    await fresh.close();
  });

  it('a call fails clearly when the engine dies during it', async () => {
    const pending = c.devices();
    const tokenizing = c.tokenize('hello');
    process.kill(c.status().pid!, 'SIGKILL');
    // Either reply may have made it out before the kill; whichever did not must say why.
    const [devices, tokens] = await Promise.allSettled([pending, tokenizing]);
    for (const r of [devices, tokens]) {
      if (r.status === 'rejected') expect((r.reason as Error).message).toMatch(/engine process exited \(signal SIGKILL\)/);
      else expect(Array.isArray(r.value)).toBe(true);
    }
    await nextStatus(c, (s) => s.state === 'ready', 'restart');
  });
});

describe('engine process load errors', () => {
  it('a bad model path makes start() reject with the engine\'s load error', async () => {
    const bad = createProcessEngineClient({ replica: 1, config: { model: join(tmpdir(), 'no-such-model.gguf') }, ...SERVE_ENGINE_TIMEOUTS, log: (l) => logs.push(l) });
    clients.push(bad);
    const err = await bad.start().then(() => null, (e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toContain('no-such-model.gguf');
    expect(err!.message).not.toMatch(/engine process exited/);
    expect(bad.status()).toMatchObject({ state: 'dead', lastError: err!.message });
  });
});
