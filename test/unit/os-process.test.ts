// common/os/process.ts on this machine, with the Windows branches run here too: whether a
// process runs (signal 0; /proc's zombie state on Linux only), and ending a process tree (a
// process group on POSIX; taskkill /T /F on Windows, TerminateProcess of the process alone when
// taskkill cannot run, which is what happens here).
import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { describeExit, killTree, processAlive, processExists, taskkillCommand } from '../../common/os/process.js';

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** A shell that started a long sleep and printed the sleep's pid; resolves once both run. */
async function shellWithChild(detached: boolean): Promise<{ shell: ChildProcess; sleeper: number }> {
  const shell = spawn('/bin/sh', ['-c', 'sleep 60 & echo $!; wait'], { detached, stdio: ['ignore', 'pipe', 'ignore'] });
  const sleeper = await new Promise<number>((resolve) => shell.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  return { shell, sleeper };
}

describe('processAlive', () => {
  for (const platform of ['linux', 'win32'] as const) {
    it(`is true for a running process and false once it has exited (${platform})`, async () => {
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      await new Promise((r) => child.once('spawn', r));
      expect(await processAlive(child.pid!, platform)).toBe(true);
      expect(processExists(child.pid!)).toBe(true);
      const done = exited(child);
      child.kill('SIGKILL');
      await done;
      expect(await processAlive(child.pid!, platform)).toBe(false);
      expect(processExists(child.pid!)).toBe(false);
    });
  }
  it.runIf(process.platform !== 'win32')('counts a process of another user as running (EPERM)', async () => {
    if (process.getuid?.() === 0) return; // root may signal pid 1
    expect(await processAlive(1, 'win32')).toBe(true);
  });
});

describe('taskkillCommand', () => {
  it('names taskkill by its full path under %SystemRoot% and asks for the whole tree, forced', () => {
    expect(taskkillCommand(4242, { SystemRoot: 'D:\\Win' })).toEqual({ file: 'D:\\Win\\System32\\taskkill.exe', args: ['/T', '/F', '/PID', '4242'] });
    expect(taskkillCommand(7, { windir: 'C:/Windows/' }).file).toBe('C:\\Windows\\System32\\taskkill.exe');
    expect(taskkillCommand(7, {}).file).toBe('C:\\Windows\\System32\\taskkill.exe');
  });
});

describe('killTree', () => {
  // These two need a POSIX shell and process groups; the rest also runs on Windows.
  it.runIf(process.platform !== 'win32')('POSIX, a group leader: ends the leader and what it started', async () => {
    const { shell, sleeper } = await shellWithChild(true);
    const done = exited(shell);
    await killTree(shell.pid!, { platform: 'linux', group: true });
    expect((await done).signal).toBe('SIGKILL');
    await expect.poll(() => processAlive(sleeper, 'linux'), { timeout: 30_000 }).toBe(false); // a zombie where nothing reaps orphans counts as gone
  });
  it.runIf(process.platform !== 'win32')('POSIX, not a group leader: ends the process only', async () => {
    const { shell, sleeper } = await shellWithChild(false);
    const done = exited(shell);
    await killTree(shell.pid!, { platform: 'linux' });
    expect((await done).signal).toBe('SIGKILL');
    expect(processExists(sleeper)).toBe(true);
    process.kill(sleeper, 'SIGKILL');
  });
  it('Windows: without a taskkill to run, the process itself is still ended', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    const done = exited(child);
    await killTree(child.pid!, { platform: 'win32', env: { SystemRoot: '/nonexistent' } });
    expect((await done).signal).toBe('SIGKILL');
  });
  it('a process already gone is no error', async () => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await exited(child);
    await expect(killTree(child.pid!, { platform: 'linux' })).resolves.toBeUndefined();
    await expect(killTree(child.pid!, { platform: 'win32', env: { SystemRoot: '/nonexistent' } })).resolves.toBeUndefined();
  });
});

describe('describeExit', () => {
  it('names a signal, a plain code, and Windows crash codes in hex with their name', () => {
    expect(describeExit(null, 'SIGSEGV')).toBe('signal SIGSEGV');
    expect(describeExit(1, null)).toBe('code 1');
    expect(describeExit(3221225501, null)).toBe('code 0xC000001D (illegal instruction)');
    expect(describeExit(-1073741819, null)).toBe('code 0xC0000005 (access violation)');
    expect(describeExit(0xC0000001, null)).toBe('code 0xC0000001');
    expect(describeExit(null, null)).toBe('code ?');
  });
});
