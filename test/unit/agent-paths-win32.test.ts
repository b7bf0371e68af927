// The agent's containment check with Windows' path rules (path.win32), run on any machine: the
// folders below do not exist here, so nothing resolves a link and each answer is the lexical
// rule alone (the link rules: agent-paths.test.ts). Drive letters, both separators, case,
// another drive, rooted paths without a drive, "..", UNC, device and drive-relative paths,
// alternate data streams, and folders too broad to work in.
import { win32 } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isInside, lexicalProblem, PathRefused, WorkspacePaths, type PathOs } from '../../extension/agent/paths.js';

const WIN: PathOs = { path: win32, platform: 'win32', home: 'C:\\Users\\Ana' };
const ws = (...roots: Array<[string, string]>): WorkspacePaths => new WorkspacePaths(roots.map(([name, path]) => ({ name, path })), WIN);
const ROOT = 'C:\\Users\\Ana\\proj';

async function why(paths: WorkspacePaths, p: string): Promise<string> {
  const err = await paths.resolve(p).then(() => null, (e: unknown) => e);
  expect(err, p).toBeInstanceOf(PathRefused);
  return (err as Error).message;
}

describe('isInside (win32)', () => {
  it('compares without case and across separators; another drive or a sibling with the same prefix is outside', () => {
    expect(isInside('C:\\Work\\Proj', 'c:\\work\\proj\\src\\a.ts', win32)).toBe(true);
    expect(isInside('C:\\Work\\Proj', 'C:/Work/Proj', win32)).toBe(true);
    expect(isInside('C:\\Work\\Proj', 'C:\\Work\\Proj-other\\a.ts', win32)).toBe(false);
    expect(isInside('C:\\Work\\Proj', 'D:\\Work\\Proj\\a.ts', win32)).toBe(false);
    expect(isInside('C:\\Work\\Proj', 'C:\\Work\\Proj\\..foo', win32)).toBe(true);
  });
});

describe('WorkspacePaths with Windows paths', () => {
  it('resolves relative paths with either separator, "." and ".." that stay inside, to backslashed absolute paths', async () => {
    const paths = ws(['proj', ROOT]);
    expect(await paths.resolve('src\\main.ts')).toEqual({ abs: `${ROOT}\\src\\main.ts`, rel: 'src/main.ts' });
    expect(await paths.resolve('src/../lib/./util.ts')).toEqual({ abs: `${ROOT}\\lib\\util.ts`, rel: 'lib/util.ts' });
    expect(await paths.resolve('.')).toEqual({ abs: ROOT, rel: '.' });
  });

  it('takes an absolute path inside the folder in any case and with forward slashes', async () => {
    const paths = ws(['proj', ROOT]);
    expect((await paths.resolve('c:/users/ANA/Proj/src/a.ts')).rel).toBe('src/a.ts');
    expect((await paths.resolve('C:\\Users\\Ana\\proj\\README.md')).rel).toBe('README.md');
  });

  it('refuses what leaves the folder: "..", a sibling, another drive, a rooted path on the folder\'s drive', async () => {
    const paths = ws(['proj', ROOT]);
    for (const p of ['..\\secret.txt', 'src/../../x', 'C:\\Users\\Ana\\proj-other\\a.ts', 'D:\\Users\\Ana\\proj\\a.ts', '\\Windows\\System32\\drivers\\etc\\hosts', '/x']) {
      expect(await why(paths, p), p).toMatch(/is outside the workspace/);
    }
  });

  it('refuses UNC, device and \\\\?\\ paths, drive-relative paths and alternate data streams before any lookup', async () => {
    const paths = ws(['proj', ROOT]);
    for (const p of ['\\\\server\\share\\x', '//server/share/x', '\\\\?\\C:\\Users\\Ana\\proj\\a.ts', '\\\\.\\pipe\\x', '\\\\.\\COM1']) {
      expect(await why(paths, p), p).toMatch(/network \(UNC\) or device path/);
    }
    expect(await why(paths, 'C:src\\a.ts')).toMatch(/relative to a drive's current folder/);
    expect(await why(paths, 'notes.txt:hidden')).toMatch(/alternate data stream/);
    expect(await why(paths, 'C:\\Users\\Ana\\proj\\a.ts:$DATA')).toMatch(/alternate data stream/);
    // A colon means nothing special on Linux.
    expect(lexicalProblem('notes.txt:hidden', 'linux')).toBeNull();
  });

  it('a multi-root workspace picks the folder by its name; each folder keeps its own drive', async () => {
    const paths = ws(['app', 'D:\\src\\app'], ['docs', 'E:\\docs']);
    expect(await paths.resolve('docs\\guide.md')).toEqual({ abs: 'E:\\docs\\guide.md', rel: 'docs/guide.md' });
    expect(await paths.resolve('app/main.ts')).toEqual({ abs: 'D:\\src\\app\\main.ts', rel: 'app/main.ts' });
    expect((await paths.resolve('e:\\DOCS\\x.md')).rel).toBe('docs/x.md');
  });

  it('refuses to work in a drive\'s root or the home folder, in whatever case they were opened', async () => {
    expect(await why(ws(['c', 'c:\\']), 'a.txt')).toMatch(/is the root of the file system, too broad/);
    expect(await why(ws(['d', 'D:/']), 'a.txt')).toMatch(/is the root of the file system/);
    expect(await why(ws(['home', 'c:\\users\\ana']), 'a.txt')).toMatch(/is your home folder/);
  });

  it('writes refuse git\'s and VS Code\'s files whatever their case', async () => {
    const paths = ws(['proj', ROOT]);
    const refused = async (p: string): Promise<string> => {
      const err = await paths.resolveForWrite(p).then(() => null, (e: unknown) => e);
      expect(err, p).toBeInstanceOf(PathRefused);
      return (err as Error).message;
    };
    expect(await refused('.GIT\\hooks\\pre-commit')).toMatch(/inside \.git/);
    expect(await refused('C:\\Users\\Ana\\proj\\.Vscode\\Tasks.json')).toMatch(/configures VS Code/);
    expect((await paths.resolveForWrite('src\\ok.ts')).rel).toBe('src/ok.ts');
  });
});
