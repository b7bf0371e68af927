// contract/file-names.ts: the names Windows refuses or reads as a device, and the session-name
// rule that keeps them out of the sessions folder on every platform.
import { describe, expect, it } from 'vitest';
import { portableFileName, windowsNameProblem } from '../../contract/file-names.js';
import { sessionNameProblem } from '../../contract/session-name.js';
import { isSafeRepoPath } from '../../common/hub/repo-files.js';

describe('windowsNameProblem', () => {
  it('refuses device names in any case, also before an extension or with trailing spaces', () => {
    for (const n of ['CON', 'con', 'Nul', 'aux.json', 'PRN.session', 'com1', 'COM9.txt', 'lpt3', 'LPT¹', 'conin$', 'CONOUT$.x', 'nul .txt']) {
      expect(windowsNameProblem(n), n).toMatch(/is a device name on Windows/);
    }
  });
  it('takes names that only contain a device name', () => {
    for (const n of ['console', 'icon', 'com10', 'lpt', 'nul_1', 'x.con', 'a.nul.json', 'COM', 'notes.session']) expect(windowsNameProblem(n), n).toBeNull();
  });
  it('refuses a trailing dot or space and the characters Windows keeps out of names', () => {
    expect(windowsNameProblem('a.')).toMatch(/end with a dot or a space/);
    expect(windowsNameProblem('a ')).toMatch(/end with a dot or a space/);
    for (const c of ['<', '>', ':', '"', '/', '\\', '|', '?', '*', '\u0001']) expect(windowsNameProblem(`a${c}b`), c).toMatch(/must not contain/);
  });
});

describe('portableFileName', () => {
  it('leaves a safe name alone and mends the others into safe ones', () => {
    expect(portableFileName('model-Q4_K_M.gguf')).toBe('model-Q4_K_M.gguf');
    expect(portableFileName('con')).toBe('_con');
    expect(portableFileName('NUL.txt')).toBe('_NUL.txt');
    expect(portableFileName('a:b')).toBe('a_b');
    expect(portableFileName('x.')).toBe('x_');
    expect(portableFileName('x ')).toBe('x_');
    for (const n of ['con', 'NUL.txt', 'a:b', 'x.', 'a<b>|c?*', 'lpt1 ']) expect(windowsNameProblem(portableFileName(n)), n).toBeNull();
  });
});

describe('session names and Windows', () => {
  it('a device name before the first dot is refused on every platform, naming why', () => {
    for (const n of ['con', 'CON', 'nul.1', 'Com1', 'lpt9.backup', 'aux']) expect(sessionNameProblem(n), n).toMatch(/device name on Windows/);
  });
  it('names that only resemble one, and trailing dots (the file name ends in .session), are fine', () => {
    for (const n of ['console', 'con-1', 'my.con', 'com10', 'notes.', 'v1..2']) expect(sessionNameProblem(n), n).toBeNull();
  });
});

describe('Hub file paths taken into the models folder', () => {
  it('Windows also refuses streams, device names and trailing dots; Linux takes them', () => {
    for (const p of ['model.gguf:evil', 'CON/model.gguf', 'dir./m.gguf', 'nul.gguf']) {
      expect(isSafeRepoPath(p, 'win32'), p).toBe(false);
      expect(isSafeRepoPath(p, 'linux'), p).toBe(true);
    }
    for (const p of ['Q4_K_M/model-00001-of-00002.gguf', 'model.Q8_0.gguf']) expect(isSafeRepoPath(p, 'win32'), p).toBe(true);
    for (const p of ['../x.gguf', 'a\\b.gguf', 'a//b.gguf']) expect(isSafeRepoPath(p, 'linux'), p).toBe(false);
  });
});
