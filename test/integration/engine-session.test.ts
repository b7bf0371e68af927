// Session files of the native Engine (real tiny model, greedy): a saved conversation loaded
// into a fresh Engine continues exactly as the original would, and damaged, foreign or
// unrelated files are refused with a clear error while the engine keeps working.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { buildSessionFile, parseSessionFile } from '../helpers/session-files.js';
import { EngineDriver, promptText } from './engine-driver.js';

const IDENTITY = 'tiny-test-model#1';
let model = '';
let dir = '';
let source: EngineDriver;
let prompt: number[] = [];
let firstIds: number[] = [];
let followup: number[] = [];
let expected: number[] = [];
let sessionPath = '';
const META = JSON.stringify({ messages: [{ role: 'user', content: 'keep this — ünïcode too' }] });
let savedPhases: Awaited<ReturnType<EngineDriver['engine']['saveSession']>>['phases'];
let savedMs = 0;

beforeAll(async () => {
  model = await ensureTestModel({});
  dir = mkdtempSync(join(tmpdir(), 'strata-engine-session-'));
  source = await EngineDriver.load({ model, ctx: 512, slots: 2, threads: 2, freeRamFloorMiB: 0 });
  prompt = source.tokens(promptText('a conversation worth keeping', 30));
  const first = await source.run({ prompt, maxTokens: 12, ignoreEos: true });
  firstIds = first.ids;
  followup = [...prompt, ...firstIds, ...source.tokens(' and the next question')];
  sessionPath = join(dir, 'kept.session');
  const saved = await source.engine.saveSession(sessionPath, followup, IDENTITY, META);
  expect(saved.tokens).toBe(prompt.length + firstIds.length - 1);
  expect(saved.bytes).toBe(statSync(sessionPath).size);
  savedPhases = saved.phases;
  savedMs = saved.ms;
  // What the original engine answers to the follow-up (its slot still holds the conversation).
  const cont = await source.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
  expect(cont.admitted!.restored).toBe(false);
  expected = cont.ids;
});

afterAll(async () => {
  await source?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('session files', () => {
  it('are written with mode 0600 and no temp files left behind, the description stored as given', () => {
    expect(statSync(sessionPath).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['kept.session']);
    const parts = parseSessionFile(readFileSync(sessionPath));
    expect(parts).toMatchObject({ version: 2, meta: META, identity: IDENTITY });
    expect(parts.tokens.length / 4).toBe(prompt.length + firstIds.length - 1);
  });

  it('say where the save went: each phase measured, together within the whole', () => {
    for (const k of ['stateMs', 'hashMs', 'writeMs', 'syncMs'] as const) expect(savedPhases[k]).toBeGreaterThan(0);
    expect(savedPhases.readMs).toBe(0);
    const sum = savedPhases.stateMs + savedPhases.hashMs + savedPhases.writeMs + savedPhases.syncMs;
    expect(sum).toBeLessThanOrEqual(savedMs + 0.01);
  });

  // STRATA_TEST_SAVE_GATE (a FIFO) holds each file write until the test opens the FIFO for writing.
  it.skipIf(process.platform === 'win32')('are written beside the steps: a whole request runs while a save waits to write, then the save completes', async () => {
    const gate = join(dir, 'gate.fifo');
    execFileSync('mkfifo', [gate]);
    process.env.STRATA_TEST_SAVE_GATE = gate;
    let released = false;
    try {
      const path = join(dir, 'held.session');
      const saving = source.engine.saveSession(path, followup, IDENTITY, META);
      const other = await source.run({ prompt: source.tokens(promptText('meanwhile', 5)), maxTokens: 8, ignoreEos: true });
      expect(other.ids).toHaveLength(8);
      expect(existsSync(path)).toBe(false);
      closeSync(openSync(gate, 'w'));
      released = true;
      const saved = await saving;
      expect(saved.bytes).toBe(statSync(path).size);
      expect(parseSessionFile(readFileSync(path)).meta).toBe(META);
      expect(saved.ms).toBeGreaterThanOrEqual(saved.phases.stateMs + saved.phases.writeMs + saved.phases.syncMs);
    } finally {
      // A check failed before the release: the writer still waits on the FIFO, and the engine's close would wait for it.
      if (!released) try { closeSync(openSync(gate, constants.O_WRONLY | constants.O_NONBLOCK)); } catch { /* no writer waiting */ }
      delete process.env.STRATA_TEST_SAVE_GATE;
      rmSync(gate, { force: true });
      rmSync(join(dir, 'held.session'), { force: true });
    }
  });

  // The gate's ".full" twin: a save that finds one already waiting (behind the one being written)
  // opens it before it waits for room, so at most two copies of a state are ever held.
  it.skipIf(process.platform === 'win32')('hold at most one save waiting behind the one being written: the next waits for room, then all complete', async () => {
    const gate = join(dir, 'bound.fifo');
    const full = `${gate}.full`;
    execFileSync('mkfifo', [gate, full]);
    process.env.STRATA_TEST_SAVE_GATE = gate;
    const paths = [1, 2, 3].map((i) => join(dir, `bound${i}.session`));
    let released = 0;
    try {
      const waited = readFile(full);  // resolves once a save had to wait for room
      const saves = paths.map((path) => source.engine.saveSession(path, followup, IDENTITY, META));
      await waited;
      expect(paths.map((path) => existsSync(path))).toEqual([false, false, false]);
      // One write through the gate at a time: the writer opens it anew for each (a second open of
      // ours before its first had closed would pass that same open twice).
      for (; released < paths.length; released++) {
        closeSync(openSync(gate, 'w'));
        const saved = await saves[released]!;
        expect(saved.bytes).toBe(statSync(paths[released]!).size);
      }
    } finally {
      // A check failed first: let the held writes and a pending read of the twin go, so the engine can close.
      for (const fifo of [gate, full]) {
        for (let i = released; i < paths.length; i++) try { closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)); } catch { /* nobody waiting */ }
      }
      delete process.env.STRATA_TEST_SAVE_GATE;
      for (const f of [gate, full, ...paths]) rmSync(f, { force: true });
    }
  });

  it('round-trip into a fresh engine\'s idle slot and continue with the same output, reading only the new tokens', async () => {
    const fresh = await EngineDriver.load({ model, ctx: 512, slots: 2, threads: 2, freeRamFloorMiB: 0 });
    try {
      const loaded = await fresh.engine.loadSession(sessionPath, IDENTITY);
      const held = prompt.length + firstIds.length - 1;
      expect(loaded.tokens).toBe(held);
      expect(loaded.into).toBe('slot');
      expect(loaded.meta).toBe(META);
      expect(loaded.phases.readMs).toBeGreaterThan(0);
      expect(loaded.phases.hashMs).toBeGreaterThan(0);
      expect(loaded.phases.stateMs).toBeGreaterThan(0);
      expect(Array.from(loaded.tokenIds)).toEqual([...prompt, ...firstIds.slice(0, -1)]);
      // Straight into a slot (the lowest empty one), nothing through the park.
      const snap = fresh.engine.snapshot();
      expect(snap.park.entries).toEqual([]);
      expect(snap.slots.map((x) => x.heldTokens)).toEqual([held, 0]);

      const computed = snap.totals.promptComputed;
      const cont = await fresh.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      // The slot's KV as it is: no restore copy, only the tokens after the session's are read.
      expect(cont.admitted).toMatchObject({ slot: 0, restored: false, reused: held });
      expect(cont.done).toMatchObject({ reused: held, promptTokens: followup.length });
      expect(fresh.engine.snapshot().totals.promptComputed - computed).toBe(followup.length - held);
      expect(fresh.engine.snapshot().park).toMatchObject({ hits: 0, entries: [] });
      expect(cont.ids).toEqual(expected);
    } finally {
      await fresh.close();
    }
  });

  it('still loads a format-1 file (older versions: no description, FNV-1a checksum) and continues the same', async () => {
    const legacy = join(dir, 'legacy.session');
    writeFileSync(legacy, buildSessionFile({ ...parseSessionFile(readFileSync(sessionPath)), version: 1 }));
    const fresh = await EngineDriver.load({ model, ctx: 512, slots: 2, threads: 2, freeRamFloorMiB: 0 });
    try {
      const loaded = await fresh.engine.loadSession(legacy, IDENTITY);
      expect(loaded.meta).toBe('');
      expect(loaded.into).toBe('slot');
      const cont = await fresh.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      expect(cont.admitted).toMatchObject({ restored: false, reused: loaded.tokens });
      expect(cont.ids).toEqual(expected);
    } finally {
      await fresh.close();
    }
  });

  it('refuses a corrupt file (checksum), a truncated one, another model\'s, and a non-session file', async () => {
    const heldBefore = source.engine.snapshot().slots.map((x) => x.heldTokens);
    const raw = readFileSync(sessionPath);
    const flipped = Buffer.from(raw);
    flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
    const corrupt = join(dir, 'corrupt.session');
    writeFileSync(corrupt, flipped);
    await expect(source.engine.loadSession(corrupt, IDENTITY)).rejects.toThrow(/corrupt \(checksum mismatch\)/);

    const truncated = join(dir, 'truncated.session');
    writeFileSync(truncated, raw.subarray(0, raw.length - 100));
    await expect(source.engine.loadSession(truncated, IDENTITY)).rejects.toThrow(/corrupt/);

    await expect(source.engine.loadSession(sessionPath, 'some-other-model#2')).rejects.toThrow(/saved with another model/);

    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'just some text, not a session\n');
    await expect(source.engine.loadSession(text, IDENTITY)).rejects.toThrow(/not a Strata session file/);

    await expect(source.engine.loadSession(join(dir, 'missing.session'), IDENTITY)).rejects.toThrow(/cannot open session file/);

    // Nothing was parked or displaced by the failures, and the engine still serves.
    expect(source.engine.snapshot().park.entries).toEqual([]);
    expect(source.engine.snapshot().slots.map((x) => x.heldTokens)).toEqual(heldBefore);
    const r = await source.run({ prompt: source.tokens('still working'), maxTokens: 2, ignoreEos: true });
    expect(r.done.finish).toBe('length');
  });

  it('refuses to save tokens no slot or parked conversation holds', async () => {
    const stranger = source.tokens(promptText('never seen before', 8));
    await expect(source.engine.saveSession(join(dir, 'none.session'), stranger.slice(1), IDENTITY))
      .rejects.toThrow(/nothing to save/);
    await expect(source.engine.saveSession(join(dir, 'no-such-dir', 'x.session'), followup, IDENTITY))
      .rejects.toThrow(/cannot create session file/);
  });

  it('says what kind of failure each refusal is (error.code), whatever its message says', async () => {
    const code = (p: Promise<unknown>) => p.then(() => 'resolved', (e: { code?: unknown }) => e.code);
    const raw = readFileSync(sessionPath);
    const truncated = join(dir, 'truncated-code.session');
    writeFileSync(truncated, raw.subarray(0, raw.length - 100));
    const text = join(dir, 'notes-code.txt');
    writeFileSync(text, 'not a session\n');
    expect(await code(source.engine.loadSession(truncated, IDENTITY))).toBe('session_unreadable');
    expect(await code(source.engine.loadSession(text, IDENTITY))).toBe('session_unreadable');
    expect(await code(source.engine.loadSession(sessionPath, 'some-other-model#2'))).toBe('session_model_mismatch');
    expect(await code(source.engine.loadSession(join(dir, 'missing.session'), IDENTITY))).toBe('io_error');
    const stranger = source.tokens(promptText('never seen before either', 8));
    expect(await code(source.engine.saveSession(join(dir, 'none2.session'), stranger.slice(1), IDENTITY))).toBe('conversation_not_found');
    expect(await code(source.engine.saveSession(join(dir, 'no-such-dir', 'y.session'), followup, IDENTITY))).toBe('io_error');
  });

  it('validates arguments synchronously as rejections', async () => {
    await expect(source.engine.saveSession('', followup, IDENTITY)).rejects.toThrow(TypeError);
    await expect(source.engine.saveSession(join(dir, 'x'), [], IDENTITY)).rejects.toThrow(/tokens is empty/);
    await expect(source.engine.loadSession(sessionPath, 42 as unknown as string)).rejects.toThrow(/identity must be a string/);
  });
});

describe('loading a session: into an idle slot, else the park', () => {
  const fresh = (opts: { slots?: number; parkBudgetMiB?: number } = {}) =>
    EngineDriver.load({ model, ctx: 512, slots: 2, threads: 2, freeRamFloorMiB: 0, ...opts });
  // Long greedy requests that keep every slot busy until cancelled.
  const occupy = (d: EngineDriver, n: number) =>
    Array.from({ length: n }, (_, i) => d.start({ prompt: d.tokens(promptText(`busy ${i}`, 4)), maxTokens: 400, ignoreEos: true }));
  const release = async (d: EngineDriver, busy: ReturnType<typeof occupy>) => {
    for (const b of busy) d.engine.cancel(b.id);
    for (const b of busy) expect((await b.done).done.finish).toBe('cancel');
  };

  it('continues as a cold read of the whole conversation does', async () => {
    const d = await fresh();
    try {
      const cold = await d.run({ prompt: followup, maxTokens: 16, ignoreEos: true, cachePrompt: false });
      expect(cold.admitted).toMatchObject({ reused: 0 });
      expect(cold.ids).toEqual(expected);
    } finally {
      await d.close();
    }
  });

  it('with every slot busy goes to the park and continues the same from there', async () => {
    const d = await fresh();
    try {
      const busy = occupy(d, 2);
      const loaded = await d.engine.loadSession(sessionPath, IDENTITY);
      expect(loaded.into).toBe('park');
      expect(d.engine.snapshot().park.entries.map((e) => e.tokens)).toEqual([loaded.tokens]);
      await release(d, busy);
      const cont = await d.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      expect(cont.admitted).toMatchObject({ restored: true, reused: loaded.tokens });
      expect(cont.ids).toEqual(expected);
    } finally {
      await d.close();
    }
  });

  it('parks the conversation of the least recently used idle slot, which then continues as if never displaced', async () => {
    const d = await fresh();
    const ref = await fresh();
    try {
      const older = d.tokens(promptText('an older conversation', 24));
      const a = await d.run({ prompt: older, maxTokens: 8, ignoreEos: true });
      const olderHeld = older.length + a.ids.length - 1;
      const olderNext = [...older, ...a.ids, ...d.tokens(' and more')];
      const newer = await d.run({ prompt: d.tokens(promptText('a newer one', 24)), maxTokens: 8, ignoreEos: true });
      expect(newer.admitted!.slot).not.toBe(a.admitted!.slot);
      const loaded = await d.engine.loadSession(sessionPath, IDENTITY);
      expect(loaded.into).toBe('slot');
      const snap = d.engine.snapshot();
      expect(snap.slots[a.admitted!.slot]!.heldTokens).toBe(loaded.tokens);
      expect(snap.park.entries.map((e) => e.tokens)).toEqual([olderHeld]);
      // The session continues from the slot, the displaced conversation from the park.
      const cont = await d.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      expect(cont.admitted).toMatchObject({ slot: a.admitted!.slot, restored: false, reused: loaded.tokens });
      expect(cont.ids).toEqual(expected);
      const back = await d.run({ prompt: olderNext, maxTokens: 12, ignoreEos: true });
      expect(back.admitted).toMatchObject({ restored: true, reused: olderHeld });
      await ref.run({ prompt: older, maxTokens: 8, ignoreEos: true });
      expect(back.ids).toEqual((await ref.run({ prompt: olderNext, maxTokens: 12, ignoreEos: true })).ids);
    } finally {
      await d.close();
      await ref.close();
    }
  });

  it('a corrupt file leaves the idle slot\'s conversation as it was (checked before the slot is touched)', async () => {
    const d = await fresh({ parkBudgetMiB: 0 });
    try {
      const other = d.tokens(promptText('a conversation to keep', 24));
      const a = await d.run({ prompt: other, maxTokens: 8, ignoreEos: true });
      await d.run({ prompt: d.tokens(promptText('and one in the other slot', 24)), maxTokens: 8, ignoreEos: true });
      const otherHeld = other.length + a.ids.length - 1;
      const flipped = Buffer.from(readFileSync(sessionPath));
      flipped[flipped.length - 200]! ^= 0x01;  // one bit of the KV state
      const corrupt = join(dir, 'one-bit.session');
      writeFileSync(corrupt, flipped);
      await expect(d.engine.loadSession(corrupt, IDENTITY)).rejects.toMatchObject({ code: 'session_unreadable' });
      expect(d.engine.snapshot().slots[a.admitted!.slot]!.heldTokens).toBe(otherHeld);
      const next = await d.run({ prompt: [...other, ...a.ids, ...d.tokens(' go on')], maxTokens: 4, ignoreEos: true });
      expect(next.admitted).toMatchObject({ slot: a.admitted!.slot, restored: false, reused: otherHeld });
    } finally {
      await d.close();
    }
  });

  it('works with parking disabled (parkBudgetMiB 0) while a slot is idle; with every slot busy says why not', async () => {
    const d = await fresh({ parkBudgetMiB: 0 });
    try {
      const busy = occupy(d, 2);
      await expect(d.engine.loadSession(sessionPath, IDENTITY)).rejects.toMatchObject({
        code: 'park_unavailable', message: expect.stringMatching(/every slot is busy: parking is disabled/),
      });
      await release(d, busy);
      const loaded = await d.engine.loadSession(sessionPath, IDENTITY);
      expect(loaded.into).toBe('slot');
      const cont = await d.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      expect(cont.admitted).toMatchObject({ restored: false, reused: loaded.tokens });
      expect(cont.ids).toEqual(expected);
    } finally {
      await d.close();
    }
  });

  it('goes into the slot whose conversation it continues, once, however often it is loaded', async () => {
    const d = await fresh();
    try {
      const first = await d.engine.loadSession(sessionPath, IDENTITY);
      const other = await d.run({ prompt: d.tokens(promptText('something else', 20)), maxTokens: 4, ignoreEos: true });
      for (let i = 0; i < 3; i++) expect((await d.engine.loadSession(sessionPath, IDENTITY)).into).toBe('slot');
      // Slot 0 took it each time (it held the session already, so nothing was parked); slot 1 kept its own.
      const snap = d.engine.snapshot();
      expect(snap.slots.map((x) => x.heldTokens)).toEqual([first.tokens, other.admitted!.promptTokens + 3]);
      expect(snap.park.entries).toEqual([]);
      const cont = await d.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      expect(cont.admitted).toMatchObject({ slot: 0, reused: first.tokens });
      expect(cont.ids).toEqual(expected);
    } finally {
      await d.close();
    }
  });
});
