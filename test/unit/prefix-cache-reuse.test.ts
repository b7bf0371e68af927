// The prefix cache's two calls around a chat turn (backend/prefix-cache/prefix-reuse.ts) against a
// scripted engine: a long prompt is saved once (a prompt a file covers is not saved again), a
// prompt no replica holds loads the file with the longest common prefix and tells the router,
// requests arriving together load it once, one a replica holds loads nothing, and failures (a file
// the engine refuses, no idle slot, a save that fails) never throw, cost only the load or the save,
// and are logged once.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineCallError } from '../../backend/engine/client.js';
import { createLogger } from '../../backend/log/logger.js';
import { loadCachedPrefix, saveCachedPrefix, type PrefixDeps } from '../../backend/prefix-cache/prefix-reuse.js';
import { PrefixStore } from '../../backend/prefix-cache/prefix-store.js';
import type { Scheduler } from '../../backend/scheduler/scheduler.js';
import type { ModelView } from '../../backend/served-model/model-view.js';
import { buildSessionFile } from '../helpers/session-files.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const ME = 'model-a';
const model = { info: { recurrent: false }, session: { identity: ME, name: 'm', file: 'm.gguf' } } as unknown as ModelView;
/** A hybrid model (Qwen3.5's kind): its state cannot be cut back, so a file serves prompts that start with all of it. */
const recurrent = { ...model, info: { recurrent: true } } as unknown as ModelView;
const system = Array.from({ length: 1500 }, (_, i) => 1000 + (i % 3000));
const ask = (seed: number, n = 20) => [...system, ...Array.from({ length: n }, (_, i) => 50_000 + seed * 100 + i)];

/** An engine whose saves write what it holds (the prompt and an answer) and whose loads are scripted. */
class ScriptedEngine {
  readonly replica = 0;
  loads: string[] = [];
  saves = 0;
  loadFails: EngineCallError | null = null;
  saveFails: EngineCallError | null = null;
  /** What the holder it saves from holds past the tokens asked for (an answer). */
  past = [7, 8, 9];

  async saveSession(path: string, tokens: number[]) {
    this.saves++;
    if (this.saveFails) throw this.saveFails;
    const held = [...tokens, ...this.past];
    writeFileSync(path, buildSessionFile({
      version: 2, meta: '{}', identity: ME, description: 'tiny', sizes: Buffer.alloc(12), tokens: Buffer.from(Int32Array.from(held).buffer), state: Buffer.alloc(1000),
    }));
    return { tokens: held.length, bytes: 0, ms: 1, phases: { stateMs: 0, readMs: 0, hashMs: 0, writeMs: 0, syncMs: 0 } };
  }

  async loadSession(path: string) {
    this.loads.push(path);
    await new Promise((r) => setImmediate(r));
    if (this.loadFails) throw this.loadFails;
    return { tokens: 0, bytes: 0, ms: 1, phases: { stateMs: 0, readMs: 0, hashMs: 0, writeMs: 0, syncMs: 0 }, tokenIds: [...system], meta: '', into: 'slot' as const };
  }
}

function setUp() {
  const dir = mkdtempSync(join(tmpdir(), 'strata-prefix-reuse-'));
  dirs.push(dir);
  const lines: string[] = [];
  const log = createLogger({ format: 'text', level: 'debug', writer: { writeLine: (l) => { lines.push(l); }, flush: async () => {}, dropped: 0 } });
  const engine = new ScriptedEngine();
  let held = 0;
  const noted: number[][] = [];
  const scheduler = {
    cachedPrefix: () => ({ tokens: held, block: 64 }),
    anyReadyClient: () => engine,
    replicasByCache: () => [engine],
    noteCached: (_r: number, tokens: number[]) => { noted.push(tokens); held = Math.floor(tokens.length / 64) * 64; },
  } as unknown as Scheduler;
  const store = new PrefixStore(dir, 1 << 24, log);
  const deps: PrefixDeps = { scheduler, log, prefixes: store };
  return { dir, lines, engine, store, deps, noted, hold: (n: number) => { held = n; } };
}

const sessions = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.session'));
const failure = (code: EngineCallError['code']) => new EngineCallError('loadSession', `refused (${code})`, code);

describe('the prefix cache around a chat turn', () => {
  it('saves a long prompt once, and not a short one or one a file covers', async () => {
    const t = setUp();
    saveCachedPrefix(t.deps, model, ask(1), 0);
    saveCachedPrefix(t.deps, model, ask(2), 0);
    saveCachedPrefix(t.deps, model, ask(3).slice(0, 1000), 0);
    saveCachedPrefix(t.deps, model, ask(4), 1);
    await t.store.drain();
    // The second prompt shares 1,500 of its 1,520 tokens with the first's file.
    expect(t.engine.saves).toBe(1);
    expect(sessions(t.dir)).toHaveLength(1);
    saveCachedPrefix(t.deps, model, [...ask(1), ...Array.from({ length: 400 }, (_, i) => 90_000 + i)], 0);
    await t.store.drain();
    // Grown past a tenth of its file: saved again, and the older file it covers goes.
    expect(t.engine.saves).toBe(2);
    expect(sessions(t.dir)).toHaveLength(1);
  });

  it('loads the best file for a prompt no replica holds, once for requests arriving together; nothing when one holds it', async () => {
    const t = setUp();
    saveCachedPrefix(t.deps, model, ask(1), 0);
    await t.store.drain();
    await Promise.all([loadCachedPrefix(t.deps, model, ask(2), 0), loadCachedPrefix(t.deps, model, ask(3), 0)]);
    expect(t.engine.loads).toEqual([join(t.dir, sessions(t.dir)[0]!)]);
    expect(t.noted).toEqual([system]);
    // Now the router says a replica holds the shared part: no load.
    await loadCachedPrefix(t.deps, model, ask(4), 0);
    expect(t.engine.loads).toHaveLength(1);
    // Short prompts and prompts with images are not looked up.
    t.hold(0);
    await loadCachedPrefix(t.deps, model, ask(5).slice(0, 400), 0);
    await loadCachedPrefix(t.deps, model, ask(5), 2);
    expect(t.engine.loads).toHaveLength(1);
  });

  it('a file the engine refuses goes; no idle slot keeps it; each failure is logged once and never thrown', async () => {
    const t = setUp();
    saveCachedPrefix(t.deps, model, ask(1), 0);
    await t.store.drain();
    t.engine.loadFails = failure('park_unavailable');
    await loadCachedPrefix(t.deps, model, ask(2), 0);
    await loadCachedPrefix(t.deps, model, ask(3), 0);
    expect(t.engine.loads).toHaveLength(2);
    expect(sessions(t.dir)).toHaveLength(1);
    t.engine.loadFails = failure('session_unreadable');
    await loadCachedPrefix(t.deps, model, ask(4), 0);
    expect(sessions(t.dir)).toHaveLength(0);
    await loadCachedPrefix(t.deps, model, ask(5), 0);
    expect(t.engine.loads).toHaveLength(3);
    const warned = t.lines.filter((l) => l.includes('was not loaded'));
    expect(warned).toHaveLength(2);
    expect(warned.join('\n')).toMatch(/park_unavailable[\s\S]*session_unreadable/);
  });

  it('a save that fails is logged once and leaves nothing', async () => {
    const t = setUp();
    t.engine.saveFails = new EngineCallError('saveSession', 'disk full', 'no_space');
    saveCachedPrefix(t.deps, model, ask(1), 0);
    saveCachedPrefix(t.deps, model, ask(1, 400), 0);
    await t.store.drain();
    expect(t.engine.saves).toBe(2);
    expect(sessions(t.dir)).toEqual([]);
    expect(t.lines.filter((l) => l.includes('was not saved'))).toHaveLength(1);
  });

  it('on a recurrent model: saves the shared start alone, only from a copy of exactly it, and loads a file only for prompts that start with all of it', async () => {
    const t = setUp();
    saveCachedPrefix(t.deps, recurrent, ask(1), 0);
    saveCachedPrefix(t.deps, recurrent, ask(1), 0, 1400);
    await t.store.drain();
    // No shared start: nothing; the engine gave the whole conversation, not the start alone: not kept.
    expect(t.engine.saves).toBe(1);
    expect(sessions(t.dir)).toEqual([]);
    expect(t.lines.some((l) => l.includes('held no copy of the shared start alone'))).toBe(true);
    t.engine.past = [];
    saveCachedPrefix(t.deps, recurrent, ask(1), 0, 1400);
    saveCachedPrefix(t.deps, recurrent, ask(2), 0, 1400);
    await t.store.drain();
    expect(t.engine.saves).toBe(2);
    expect(sessions(t.dir)).toHaveLength(1);
    // A prompt that leaves the file's tokens before their end gets nothing from it; one that keeps them all loads it.
    await loadCachedPrefix(t.deps, recurrent, [...system.slice(0, 1300), ...Array.from({ length: 300 }, (_, i) => 70_000 + i)], 0);
    expect(t.engine.loads).toEqual([]);
    await loadCachedPrefix(t.deps, recurrent, ask(3), 0);
    expect(t.engine.loads).toHaveLength(1);
  });

  it('on a recurrent model, a file of a whole conversation (written for another model kind) is not loaded for a new one', async () => {
    const t = setUp();
    saveCachedPrefix(t.deps, model, ask(1), 0);
    await t.store.drain();
    await loadCachedPrefix(t.deps, recurrent, ask(2), 0);
    expect(t.engine.loads).toEqual([]);
    await loadCachedPrefix(t.deps, model, ask(2), 0);
    expect(t.engine.loads).toHaveLength(1);
  });
});
