// run_command's child process (extension/agent/child-command.ts) on this machine: Stop returns once
// the command itself has ended, even when a process it started escaped the kill and still holds
// the output pipe (here: one in its own session, out of the command's process group; on Windows a
// tree taskkill could not end), instead of waiting on that pipe for ever.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processAlive } from '../../common/os/process.js';
import { runChildCommand } from '../../extension/agent/child-command.js';

const dirs: string[] = [];
const strays: number[] = [];
afterEach(() => {
  for (const pid of strays.splice(0)) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 20_000; !check();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.runIf(process.platform === 'linux')('run_command Stop', () => {
  it('returns when the command has ended, though a process it started outside its group holds the output', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-child-'));
    dirs.push(dir);
    const pidFile = join(dir, 'stray.pid');
    const ac = new AbortController();
    const running = runChildCommand(`setsid sh -c 'echo $$ > stray.pid; exec sleep 300' & wait`, dir, ac.signal);
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'the stray process');
    const stray = Number(readFileSync(pidFile, 'utf8'));
    strays.push(stray);
    ac.abort(new Error('stopped'));
    await expect(running).rejects.toThrow('stopped');
    // The stray outlived the group kill (what the command's own kill can reach ended).
    expect(await processAlive(stray)).toBe(true);
  });
});
