// The agent's programs on Windows' terms, run on any machine: PATHEXT lookup, batch files run
// through cmd.exe with each word quoted (or refused), ripgrep's rg.exe and its output lines with
// drive letters, and Stop on a command (taskkill /T /F there; here, without taskkill, the
// process itself). File names below are created in the case the lookup tries first.
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, win32 } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cmdLine, findProgram, isBatchFile, pathExtensions, runChildArgv } from '../../extension/agent/child-command.js';
import { findRipgrep, parseRipgrepLine } from '../../extension/agent/ripgrep.js';
import { CheckpointStore, type RestoreFiles } from '../../extension/agent/checkpoints.js';
import { mcpProgram } from '../../extension/agent/mcp.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'strata-win32-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('program lookup on Windows', () => {
  it('PATHEXT: its extensions in order, lower case; Windows\' default when unset', () => {
    expect(pathExtensions({})).toEqual(['.com', '.exe', '.bat', '.cmd']);
    expect(pathExtensions({ PATHEXT: '.EXE;.CMD;;.PS1; .Py ;bad' })).toEqual(['.exe', '.cmd', '.ps1', '.py']);
  });

  it('finds a name with PATHEXT\'s extensions on PATH\'s absolute folders (";"-separated), never in "." or relative folders', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    for (const f of ['tool.exe', 'npm.cmd', 'notes.txt', 'script']) writeFileSync(join(bin, f), '');
    writeFileSync(join(dir, 'git.exe'), '');
    const env = { PATH: `.;bin;${bin}`, PATHEXT: '.COM;.EXE;.BAT;.CMD' };
    expect(await findProgram('tool', dir, env, 'win32')).toBe(join(bin, 'tool.exe'));
    expect(await findProgram('npm', dir, env, 'win32')).toBe(join(bin, 'npm.cmd'));
    expect(await findProgram('tool.exe', dir, env, 'win32')).toBe(join(bin, 'tool.exe'));
    for (const name of ['notes', 'notes.txt', 'script', 'git']) expect(await findProgram(name, dir, env, 'win32'), name).toBeNull();
    expect(await findProgram('npm', dir, { ...env, PATHEXT: '.EXE' }, 'win32')).toBeNull();
    // Windows spells it Path; the value's separator is ';'.
    expect(await findProgram('tool', dir, { Path: `${bin};C:\\nowhere`, PATHEXT: '.EXE' }, 'win32')).toBe(join(bin, 'tool.exe'));
    // A path is taken relative to the folder, with the extensions too.
    expect(await findProgram('./git', dir, { PATH: '' }, 'win32')).toBe(join(dir, 'git.exe'));
  });

  it('batch files are known by their extension', () => {
    for (const p of ['C:\\nodejs\\npm.cmd', 'x.BAT', 'y.Cmd']) expect(isBatchFile(p), p).toBe(true);
    for (const p of ['git.exe', 'cmd', 'a.cmdx']) expect(isBatchFile(p), p).toBe(false);
  });
});

describe('MCP server programs on Windows', () => {
  it("npx is PATH's npx.cmd, never the workspace folder's (the folder the server starts in)", async () => {
    const ws = join(dir, 'ws');
    const bin = join(dir, 'bin');
    mkdirSync(ws);
    mkdirSync(bin);
    writeFileSync(join(ws, 'npx.cmd'), '');
    writeFileSync(join(bin, 'npx.cmd'), '');
    const env = { Path: `.;ws;${bin}`, PATHEXT: '.COM;.EXE;.BAT;.CMD' };
    expect(await mcpProgram('npx', ws, env, 'win32')).toBe(join(bin, 'npx.cmd'));
    await expect(mcpProgram('npx', ws, { ...env, Path: '.;ws' }, 'win32')).rejects.toThrow(/^npx: no such program on PATH/);
  });
});

describe('cmdLine: a batch file\'s words through cmd.exe', () => {
  it('quotes the program and every word, spaces and cmd\'s operators inside quotes included', () => {
    expect(cmdLine('C:\\Program Files (x86)\\nodejs\\npm.cmd', ['run', 'test', '--', 'a b', 'x&y', '<z>', '(q)', '^'])).toBe(
      '""C:\\Program Files (x86)\\nodejs\\npm.cmd" "run" "test" "--" "a b" "x&y" "<z>" "(q)" "^""');
    expect(cmdLine('npm.cmd', [])).toBe('""npm.cmd""');
  });
  it('refuses words that cmd would read even inside quotes', () => {
    for (const w of ['a"b', '%PATH%', '50%', 'hi!', 'dir\\', 'a\nb', 'a\u0007']) expect(cmdLine('npm.cmd', ['run', w]), JSON.stringify(w)).toBeNull();
    expect(cmdLine('C:\\odd%dir\\npm.cmd', ['test'])).toBeNull();
  });
  it('an allow-listed batch file with such a word is refused before anything runs', async () => {
    writeFileSync(join(dir, 'build.cmd'), '');
    const r = await runChildArgv(['./build', 'say "hi"'], dir, new AbortController().signal, 'win32');
    expect(r.exitCode).toBe(126);
    expect(r.output).toMatch(/^\.\/build is a batch file \(.*build\.cmd\), which runs only through cmd\.exe, and an argument holds a character cmd would read/);
  });
});

describe('Stop on a command, the Windows way', () => {
  it('ends the command (taskkill /T /F there; TerminateProcess of the command when taskkill cannot run, as here)', async () => {
    // Found the Windows way, by a PATHEXT extension (on Windows Node's own path already has one).
    if (process.platform !== 'win32') symlinkSync(process.execPath, join(dir, 'node.exe'));
    const program = process.platform === 'win32' ? process.execPath : './node';
    const ac = new AbortController();
    const running = runChildArgv([program, '-e', 'require("fs").writeFileSync("up", ""); setInterval(() => {}, 1000)'], dir, ac.signal, 'win32');
    await expect.poll(() => existsSync(join(dir, 'up')), { timeout: 10_000 }).toBe(true);
    ac.abort(new Error('stopped'));
    await expect(running).rejects.toThrow('stopped');
  });
});

describe('ripgrep on Windows', () => {
  it('rg.exe under VS Code\'s app root', () => {
    const bin = join(dir, 'node_modules', '@vscode', 'ripgrep', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'rg.exe'), '');
    expect(findRipgrep(dir, 'win32', 'x64')).toBe(join(bin, 'rg.exe'));
    expect(findRipgrep(dir, 'linux', 'x64')).toBeNull();
  });

  it('reads PATH NUL LINE:TEXT with drive letters, any case, CRLF files, several roots', () => {
    const one = [{ path: 'C:\\Users\\Ana\\proj', prefix: '' }];
    expect(parseRipgrepLine('C:\\Users\\Ana\\proj\\src\\a.ts\u000012:const x = 1; // a:1:b\r', one, win32)).toEqual({ path: 'src/a.ts', line: 12, text: 'const x = 1; // a:1:b' });
    const two = [{ path: 'D:\\src\\app', prefix: 'app' }, { path: 'E:\\docs', prefix: 'docs' }];
    expect(parseRipgrepLine('e:\\DOCS\\guide.md\u00003:# Guide', two, win32)).toEqual({ path: 'docs/guide.md', line: 3, text: '# Guide' });
    expect(parseRipgrepLine('D:\\src\\app\\main.ts\u00001:', two, win32)).toEqual({ path: 'app/main.ts', line: 1, text: '' });
    expect(parseRipgrepLine('no separator:1:x', one, win32)).toBeNull();
  });

  it('on Linux a file name holding ":12:" stays one name', () => {
    expect(parseRipgrepLine('/ws/odd:12:name.txt\u00005:hit', [{ path: '/ws', prefix: '' }], posix)).toEqual({ path: 'odd:12:name.txt', line: 5, text: 'hit' });
  });
});

describe('checkpoints on Windows', () => {
  it('changes to one file written in two cases are one file to restore (two on Linux)', async () => {
    const plans = [];
    for (const platform of ['win32', 'linux'] as const) {
      const store = new CheckpointStore(join(dir, `store-${platform}`), () => undefined, platform);
      const rec = store.recorder('chat');
      await rec.commandRan('s0', 'npm test', 'C:\\WS');
      await rec.changed('s1', { path: 'A.ts', abs: 'C:\\WS\\A.ts', before: 'a0', after: 'a1' });
      await rec.changed('s2', { path: 'a.ts', abs: 'c:\\ws\\a.ts', before: 'a1', after: 'a2' });
      // The disk as Windows has it: one file, read by either name.
      const files: RestoreFiles = { readText: async (abs) => (abs.toLowerCase() === 'c:\\ws\\a.ts' ? 'a2' : null), apply: async () => null, remove: async () => null, resolveForWrite: async (p) => ({ abs: p, rel: p }) };
      plans.push((await store.plan('chat', 's0', files)).files.map((f) => [f.path, f.action, f.conflict]));
    }
    expect(plans[0]).toEqual([['A.ts', 'write', false]]);
    // Linux: two files; the first looks changed since (it holds a2, the agent left a1).
    expect(plans[1]).toEqual([['A.ts', 'write', true], ['a.ts', 'write', false]]);
  });
});
