// Session files of the native Engine (real tiny model, greedy): a saved conversation loaded
// into a fresh Engine continues exactly as the original would, and damaged, foreign or
// unrelated files are refused with a clear error while the engine keeps working.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

  it('round-trip into a fresh engine and continue with the same output', async () => {
    const fresh = await EngineDriver.load({ model, ctx: 512, slots: 2, threads: 2, freeRamFloorMiB: 0 });
    try {
      const loaded = await fresh.engine.loadSession(sessionPath, IDENTITY);
      const held = prompt.length + firstIds.length - 1;
      expect(loaded.tokens).toBe(held);
      expect(loaded.meta).toBe(META);
      expect(loaded.phases.readMs).toBeGreaterThan(0);
      expect(loaded.phases.hashMs).toBeGreaterThan(0);
      expect(Array.from(loaded.tokenIds)).toEqual([...prompt, ...firstIds.slice(0, -1)]);
      expect(fresh.engine.snapshot().park.entries.map((e) => e.tokens)).toEqual([held]);

      const cont = await fresh.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      expect(cont.admitted).toMatchObject({ restored: true, reused: held });
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
      const cont = await fresh.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      expect(cont.admitted!.restored).toBe(true);
      expect(cont.ids).toEqual(expected);
    } finally {
      await fresh.close();
    }
  });

  it('refuses a corrupt file (checksum), a truncated one, another model\'s, and a non-session file', async () => {
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

    // Nothing was parked by the failures, and the engine still serves.
    expect(source.engine.snapshot().park.entries).toEqual([]);
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
