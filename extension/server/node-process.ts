// Real processes and ports for the Supervisor (Node only, no vscode).
// Every script gets an IPC channel besides its pipes: on Windows, where kill() ends a process at
// once whatever the signal, 'SIGTERM' closes that channel (strata stops as on SIGTERM:
// backend/cli/stop-channel.ts) and 'SIGKILL' ends the process with everything it started
// (taskkill /T /F). On POSIX both are the signals themselves.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { killTree, type Platform } from '../../common/os/process.js';
import type { ProcessHandle } from './supervisor.js';

/**
 * Runs a Node script with the editor's own runtime: inside VS Code process.execPath is Electron,
 * which behaves as plain Node with ELECTRON_RUN_AS_NODE=1, so no separate Node install is needed.
 */
export function spawnNodeScript(script: string, args: string[], env: Record<string, string> = {}, platform: Platform = process.platform): ProcessHandle {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    windowsHide: true,
  });
  const outputListeners: Array<(l: string) => void> = [];
  const exitListeners: Array<(c: number | null, s: string | null) => void> = [];
  let exited: [number | null, string | null] | undefined;
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream!, crlfDelay: Infinity }).on('line', (l) => { for (const f of outputListeners) f(l); });
  }
  const onExit = (code: number | null, signal: string | null): void => {
    if (exited) return;
    exited = [code, signal];
    for (const f of exitListeners) f(code, signal);
  };
  child.on('exit', (code, signal) => onExit(code, signal));
  child.on('error', (err) => {
    for (const f of outputListeners) f(`error: ${err.message}`);
    onExit(null, null);
  });
  return {
    pid: child.pid,
    kill: (signal) => {
      if (exited) return;
      if (platform !== 'win32') child.kill(signal);
      else if (signal === 'SIGTERM') { if (child.connected) child.disconnect(); }
      else if (child.pid !== undefined) void killTree(child.pid, { platform });
    },
    onOutput: (l) => { outputListeners.push(l); },
    onExit: (l) => {
      if (exited) l(...exited);
      else exitListeners.push(l);
    },
  };
}
