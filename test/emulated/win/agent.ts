// The agent's Windows code run by the Windows Node under Wine (test/emulated/win/run.mjs bundles
// and starts this file beside suite.ts): run_command through cmd.exe, an allow-listed batch file
// found through PATHEXT and run with its words quoted, Stop ending the command and what it
// started (taskkill /T /F), and the workspace check on paths with drive letters and backslashes.
// The same rules run on Linux with path.win32 (test/unit/agent-*.test.ts); here the real cmd.exe,
// taskkill and file system answer.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { processAlive } from '../../../common/os/process.js';
import { findProgram, runChildArgv, runChildCommand } from '../../../extension/agent/child-command.js';
import { PathRefused, WorkspacePaths } from '../../../extension/agent/paths.js';

let dir = '';
const never = new AbortController().signal;

/** Resolves once `check` holds, polling the file system the other process writes (bounded). */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-win-agent-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('run_command on Windows (cmd.exe)', () => {
  it('runs a command line in cmd.exe and reports its output and exit code', async () => {
    const r = await runChildCommand('echo one& echo two& exit /b 3', dir, never);
    assert.deepEqual(r.output.split(/\r?\n/).map((l) => l.trim()).filter(Boolean), ['one', 'two']);
    assert.equal(r.exitCode, 3);
  });

  it('finds an allow-listed batch file through PATHEXT and passes its words quoted, refusing words cmd would read', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    // %1 as cmd passed it, quotes included (%~1 would strip them and let the batch file's own
    // line read a '&' in the word: that is the batch file's doing, not the call's).
    writeFileSync(join(bin, 'greet.cmd'), '@echo off\r\necho [%1] [%2]\r\n');
    const env = { ...process.env, PATH: `${bin};${process.env.PATH ?? ''}` };
    assert.equal((await findProgram('greet', dir, env))?.toLowerCase(), join(bin, 'greet.cmd').toLowerCase());
    const saved = process.env.PATH;
    process.env.PATH = env.PATH;
    try {
      const r = await runChildArgv(['greet', 'a b', 'c&echo injected'], dir, never);
      assert.equal(r.output.trim(), '["a b"] ["c&echo injected"]');
      assert.equal(r.exitCode, 0);
      const refused = await runChildArgv(['greet', '100%PATH%'], dir, never);
      assert.equal(refused.exitCode, 126);
      assert.match(refused.output, /batch file/);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('Stop ends the command and returns, also when a process it started outlives the kill', async () => {
    // cmd.exe runs node, which writes its own pid and cmd's. Windows' taskkill /T ends both;
    // Wine 8's taskkill has no /T, so there only cmd.exe ends (TerminateProcess, the fallback) and
    // the node it started keeps the output pipe open: the case where Stop must still return.
    const pidFile = join(dir, 'child.pid');
    const script = join(dir, 'child.js');
    writeFileSync(script, "require('fs').writeFileSync(process.argv[2], process.pid + ' ' + process.ppid); setInterval(() => {}, 1000);\n");
    const ac = new AbortController();
    const running = runChildCommand(`"${process.execPath}" "${script}" "${pidFile}"`, dir, ac.signal);
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').includes(' '), 'the command\'s child to start');
    const [pid, shell] = readFileSync(pidFile, 'utf8').split(' ').map(Number) as [number, number];
    assert.equal(await processAlive(shell), true);
    ac.abort(new Error('stopped'));
    await assert.rejects(running, /stopped/);
    await until(async () => !(await processAlive(shell)), `cmd.exe (${shell}) to end`);
    try { process.kill(pid); } catch { /* ended with its tree */ }
  });
});

describe('the workspace check on Windows paths', () => {
  it('resolves paths inside the folder, whatever their case or slashes, and refuses the rest before looking', async () => {
    const root = join(dir, 'ws');
    mkdirSync(join(root, 'src'), { recursive: true });
    writeFileSync(join(root, 'src', 'a.ts'), 'x');
    const paths = new WorkspacePaths([{ name: 'ws', path: root }]);
    assert.match(root, /^[A-Z]:\\/);
    const inside = await paths.resolve('src\\a.ts');
    assert.deepEqual([inside.rel, inside.abs.toLowerCase()], ['src/a.ts', join(root, 'src', 'a.ts').toLowerCase()]);
    assert.equal((await paths.resolve('src/a.ts')).rel, 'src/a.ts');
    // Another case of the same folder is the same folder on Windows.
    assert.equal((await paths.resolve(join(root.toUpperCase(), 'SRC', 'A.TS'))).rel.toLowerCase(), 'src/a.ts');
    for (const outside of ['..\\outside.txt', 'C:\\Windows\\win.ini', '\\\\server\\share\\x', 'C:relative.txt', 'src\\a.ts:hidden']) {
      await assert.rejects(paths.resolve(outside), PathRefused, outside);
    }
  });
});
