// The codebase walker's names on Windows' terms (matched without case, as NTFS and git's
// core.ignorecase there do), beside Linux's, on a real folder: .GIT is git's folder, an exclude
// glob "build/**" leaves out Build/, and the watcher's check (isIndexable) agrees with the walk.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIndexable, walk } from '../../extension/codebase/walker.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-walk-win32-'));
  for (const f of ['.GIT/config', 'Build/out.js', 'src/Main.ts', 'src/.Git/x']) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), 'x\n');
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const opts = (platform: NodeJS.Platform) => ({ exclude: ['build/**'], maxFileBytes: 1 << 20, platform });

describe('walker names by platform', () => {
  it('Windows: .GIT folders and Build/ under "build/**" are left out', async () => {
    expect((await walk(dir, opts('win32'))).files.map((f) => f.path)).toEqual(['src/Main.ts']);
    for (const p of ['.GIT/config', 'Build/out.js', 'src/.Git/x']) expect(await isIndexable(dir, p, opts('win32')), p).toBe(false);
    expect(await isIndexable(dir, 'src/Main.ts', opts('win32'))).toBe(true);
  });
  it('Linux: names are exact, so those are ordinary files', async () => {
    expect((await walk(dir, opts('linux'))).files.map((f) => f.path)).toEqual(['.GIT/config', 'Build/out.js', 'src/.Git/x', 'src/Main.ts']);
    expect(await isIndexable(dir, 'Build/out.js', opts('linux'))).toBe(true);
  });
});
