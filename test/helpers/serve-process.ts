// `strata serve` from the bundled CLI in its own process, as a user runs it: its output lines
// kept, the port it says it listens on, and its exit code.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../backend/addon/loader.js';

export const cliPath = join(packageRoot, 'dist', 'strata.mjs');

export interface ServeProcess { child: ChildProcess; out: string[]; port: Promise<number>; exit: Promise<number | null> }

/** detached: its own process group, so a signal to the group reaches it and its engine hosts as a terminal's Ctrl+C does. */
export function spawnServe(args: string[], env: NodeJS.ProcessEnv, detached = false): ServeProcess {
  const child = spawn(process.execPath, [cliPath, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], detached });
  const out: string[] = [];
  const port = new Promise<number>((resolve, reject) => {
    const onData = (b: Buffer) => {
      for (const line of b.toString().split('\n')) {
        if (line) out.push(line);
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
        if (m) resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited (${code}) before listening:\n${out.join('\n')}`)));
  });
  port.catch(() => {});
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out, port, exit };
}
