// The prefix cache's folder (backend/prefix-cache/prefix-store.ts) with files laid out as the engine
// writes them: the byte bound holds with the least recently used file going first (after a restart
// too), a lookup finds the file sharing the longest prefix among several, a file a newer one covers
// goes, and a file of another model under this model's name or a truncated one is ignored and
// removed. Also the options: bad values name the option, 0 turns the cache off.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../backend/app/config.js';
import { silentLogger } from '../../backend/log/logger.js';
import { FIRST_BLOCK, PrefixStore } from '../../backend/prefix-cache/prefix-store.js';
import { buildSessionFile } from '../helpers/session-files.js';

const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'strata-prefix-')); dirs.push(d); return d; };
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const ME = 'model-a';
const STATE = 10_000;

/** `n` tokens starting with `seed`'s own first block (a different seed: a different first block). */
function tokens(seed: number, n: number, tailSeed = seed): number[] {
  return Array.from({ length: n }, (_, i) => (i < 600 ? seed * 1000 + (i % 997) : tailSeed * 7919 + i) % 150_000);
}

/** What the engine does on a save: the file at the store's target, then the store is told. */
async function save(s: PrefixStore, prompt: number[], identity = ME, state = STATE): Promise<{ name: string; common: number }> {
  const { name, path } = await s.target(identity, prompt);
  writeSession(path, identity, prompt, state);
  return { name, common: await s.added(name, identity, prompt, 512, 0.9) };
}

function sessionFile(identity: string, ids: number[], state = STATE): Buffer {
  return buildSessionFile({
    version: 2, meta: '{}', identity, description: 'tiny', sizes: Buffer.alloc(12), tokens: Buffer.from(Int32Array.from(ids).buffer), state: Buffer.alloc(state),
  });
}
function writeSession(path: string, identity: string, ids: number[], state = STATE): void {
  writeFileSync(path, sessionFile(identity, ids, state), { mode: 0o600 });
}

const sessions = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.session')).sort();

describe('the prefix cache folder', () => {
  it('keeps its byte bound, the least recently used file going first, after a restart too', async () => {
    const dir = join(tempDir(), 'cache');
    let t = 1_000_000;
    const bytesOfOne = sessionFile(ME, tokens(1, 1100)).length;
    const s = new PrefixStore(dir, 3 * bytesOfOne + 100, silentLogger, () => (t += 1000));
    const [a, b, c, d] = [1, 2, 3, 4].map((seed) => tokens(seed, 1100));
    const fa = await save(s, a!);
    const fb = await save(s, b!);
    const fc = await save(s, c!);
    expect(fa.common).toBe(1100);
    expect(s.size().count).toBe(3);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    await s.used(fa.name);
    const fd = await save(s, d!);
    // b was the least recently used (a was used after it).
    expect(sessions(dir)).toEqual([fa.name, fc.name, fd.name].sort());
    expect(s.size().bytes).toBeLessThanOrEqual(3 * bytesOfOne + 100);
    expect(existsSync(join(dir, fb.name))).toBe(false);
    // A restart orders the files by their last use (the file times): c is now the oldest.
    const again = new PrefixStore(dir, 2 * bytesOfOne + 100, silentLogger, () => (t += 1000));
    expect(await again.best(ME, a!)).not.toBeNull();
    expect(sessions(dir)).toEqual([fa.name, fd.name].sort());
  });

  it('a file alone over the bound is not kept; 0 MiB is off', async () => {
    const dir = tempDir();
    const s = new PrefixStore(dir, 5000, silentLogger);
    expect((await save(s, tokens(1, 1100))).common).toBe(0);
    expect(sessions(dir)).toEqual([]);
    const off = new PrefixStore(join(dir, 'off'), 0, silentLogger);
    expect(off.enabled).toBe(false);
    expect(await off.best(ME, tokens(1, 1100))).toBeNull();
  });

  it('finds the file sharing the longest prefix among several', async () => {
    const dir = tempDir();
    const s = new PrefixStore(dir, 1 << 24, silentLogger);
    // Three files sharing their first 600 tokens, then each its own tail; one with another first block.
    const x = await save(s, tokens(1, 1200, 11));
    const longer = [...tokens(1, 1000, 12).slice(0, 900), ...tokens(1, 1200, 13).slice(900)];
    const y = await save(s, longer);
    await save(s, tokens(1, 1100, 14));
    await save(s, tokens(2, 1500));
    // A prompt that follows `longer` for 950 tokens, then goes its own way.
    const prompt = [...longer.slice(0, 950), ...tokens(1, 1400, 99).slice(950)];
    expect(await s.best(ME, prompt)).toMatchObject({ name: y.name, common: 950 });
    expect(await s.best(ME, tokens(1, 1300, 11))).toMatchObject({ name: x.name, common: 1200 });
    // Only 600 tokens in common with any: still the best there is (the caller sets the least it loads).
    expect((await s.best(ME, tokens(1, 1000, 50)))?.common).toBe(600);
    expect(await s.best(ME, tokens(3, 1000))).toBeNull();
    expect(await s.best('model-b', prompt)).toBeNull();
    expect(await s.best(ME, prompt.slice(0, FIRST_BLOCK - 1))).toBeNull();
  });

  it('exact (a recurrent model\'s files): a file serves only prompts that start with all of it, and none covers another', async () => {
    const dir = tempDir();
    const s = new PrefixStore(dir, 1 << 24, silentLogger);
    const start = tokens(1, 1000);
    const longer = [...start, ...tokens(5, 80)];
    for (const t of [start, longer]) {
      const { name, path } = await s.target(ME, t);
      writeSession(path, ME, t);
      expect(await s.added(name, ME, t, 512, null)).toBe(t.length);
    }
    expect(sessions(dir)).toHaveLength(2);
    const other = [...start, ...tokens(6, 80)];
    expect(await s.best(ME, other, true)).toMatchObject({ common: 1000 });
    expect(await s.best(ME, [...longer, 1, 2], true)).toMatchObject({ common: 1080 });
    expect(await s.best(ME, start.slice(0, 900), true)).toBeNull();
    expect(await s.best(ME, start.slice(0, 900))).toMatchObject({ common: 900 });
  });

  it('a newer file that covers an older one replaces it', async () => {
    const dir = tempDir();
    const s = new PrefixStore(dir, 1 << 24, silentLogger);
    const first = tokens(1, 1000);
    const a = await save(s, first);
    const b = await save(s, [...first, ...tokens(5, 80)]);
    expect(sessions(dir)).toEqual([b.name]);
    expect(a.name).not.toBe(b.name);
    // One that shares less than 90% of it keeps both.
    const c = await save(s, [...first.slice(0, 700), ...tokens(6, 600)]);
    expect(sessions(dir)).toEqual([b.name, c.name].sort());
  });

  it('ignores and removes another model\'s file under this model\'s name and a truncated file', async () => {
    const dir = tempDir();
    const s = new PrefixStore(dir, 1 << 24, silentLogger);
    const p1 = tokens(1, 1100);
    const p2 = tokens(2, 1100);
    const forged = await s.target(ME, p1);
    writeSession(forged.path, 'model-b', p1);
    const cut = await s.target(ME, p2);
    writeSession(cut.path, ME, p2);
    truncateSync(cut.path, statSync(cut.path).size - 100);
    // Another model's file under its own name stays (the folder is shared by every model).
    const theirs = await s.target('model-b', p1);
    writeSession(theirs.path, 'model-b', p1);
    const fresh = new PrefixStore(dir, 1 << 24, silentLogger);
    expect(await fresh.best(ME, p1)).toBeNull();
    expect(await fresh.best(ME, p2)).toBeNull();
    expect(sessions(dir)).toEqual([theirs.name]);
    expect(await fresh.best('model-b', p1)).toMatchObject({ name: theirs.name, common: 1100 });
  });

  it('removes a dead writer\'s temp file at start and leaves other files alone', async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    const name = `${'a'.repeat(16)}-${'b'.repeat(16)}.session`;
    writeFileSync(join(dir, `${name}.tmp-999999999-0`), 'x');
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const s = new PrefixStore(dir, 1 << 24, silentLogger);
    expect(await s.best(ME, tokens(1, 1100))).toBeNull();
    expect(readdirSync(dir)).toEqual(['notes.txt']);
  });
});

describe('the prefix cache options', () => {
  const noFile = () => { throw new Error('no file'); };
  const r = (flags: Record<string, string>, env: Record<string, string> = {}) => resolveConfig({ flags: new Map(Object.entries(flags)), env, readFile: noFile });

  it('defaults beside the other stores in the user\'s data folder, 2048 MiB', () => {
    const cfg = r({}, { XDG_DATA_HOME: '/data' });
    expect(cfg.prefixCacheDir).toBe('/data/strata/prefix-cache');
    expect(cfg.prefixCacheMib).toBe(2048);
    expect(r({ 'prefix-cache-mib': '0', 'prefix-cache-dir': '/x' })).toMatchObject({ prefixCacheMib: 0, prefixCacheDir: '/x' });
  });

  it('refuses bad values naming the option', () => {
    expect(() => r({ 'prefix-cache-mib': '-1' })).toThrowError(/--prefix-cache-mib: must be in \[0, 16777216\]/);
    expect(() => r({ 'prefix-cache-mib': 'lots' })).toThrowError(/--prefix-cache-mib: expected an integer/);
    expect(() => r({}, { STRATA_PREFIX_CACHE_MIB: '1.5' })).toThrowError(/STRATA_PREFIX_CACHE_MIB: expected an integer/);
    expect(() => r({ 'prefix-cache-dir': 'true' })).toThrowError(/--prefix-cache-dir: expected a value/);
  });
});
