// Processes the same way on Linux and Windows. POSIX ends a process tree with a signal to its
// process group and asks a process to stop with SIGTERM; Windows has neither: a process is ended
// with TerminateProcess (what Node's kill() does there, whatever the signal's name), a tree with
// `taskkill /T /F`, and a polite stop has to travel over a channel the child reads. Node's own
// children on Windows also sit in libuv's job object, which ends them when their parent's
// handle to it closes (the parent exits, however it exits).
// The platform is a parameter (default: this one) so that the Windows paths run in unit tests here.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { win32 } from 'node:path';

export type Platform = NodeJS.Platform;

/** Whether `pid` names a running process (signal 0; EPERM: it exists and belongs to another user). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether `pid` is still running. On Linux a zombie counts as gone (its /proc/PID/stat state):
 * a killed process stays unreaped where nothing reaps orphans (a container whose first process
 * does not), and signal 0 still reaches it. Windows has no zombies: signal 0 there asks whether
 * the process's exit code is still STILL_ACTIVE.
 */
export async function processAlive(pid: number, platform: Platform = process.platform): Promise<boolean> {
  if (!processExists(pid)) return false;
  if (platform !== 'linux') return true;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false; // gone between the two looks
  }
}

/**
 * The command that ends `pid` and every process it started on Windows. taskkill is named by its
 * full path under %SystemRoot%: a bare name would be looked up in the current folder first.
 */
export function taskkillCommand(pid: number, env: NodeJS.ProcessEnv = process.env): { file: string; args: string[] } {
  const root = env.SystemRoot ?? env.SYSTEMROOT ?? env.windir ?? 'C:\\Windows';
  return { file: win32.join(root, 'System32', 'taskkill.exe'), args: ['/T', '/F', '/PID', String(pid)] };
}

export interface TreeKillOptions {
  platform?: Platform;
  /** POSIX: the process leads its own process group (started detached), so the signal goes to the group. */
  group?: boolean;
  env?: NodeJS.ProcessEnv;
}

/**
 * Ends `pid` and what it started, at once. POSIX: SIGKILL to its process group (when it leads
 * one) or to the process. Windows: `taskkill /T /F /PID`, falling back to TerminateProcess of
 * the process alone when taskkill cannot run. Resolves once the kill has been issued (taskkill
 * has finished); never throws (a process already gone is the goal).
 */
export function killTree(pid: number, opts: TreeKillOptions = {}): Promise<void> {
  const platform = opts.platform ?? process.platform;
  if (platform !== 'win32') {
    try { process.kill(opts.group ? -pid : pid, 'SIGKILL'); } catch { /* already gone */ }
    return Promise.resolve();
  }
  const { file, args } = taskkillCommand(pid, opts.env);
  return new Promise((resolve) => {
    const terminate = (): void => {
      try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
      resolve();
    };
    let child;
    try {
      child = spawn(file, args, { stdio: 'ignore', windowsHide: true });
    } catch {
      terminate();
      return;
    }
    child.once('error', terminate);
    // Exit code 128: no such process (it ended by itself meanwhile); anything else not 0: make sure.
    child.once('exit', (code) => (code === 0 || code === 128 ? resolve() : terminate()));
  });
}

/** Windows' exception codes a crashed process exits with (NTSTATUS), by name. */
const NTSTATUS: Record<number, string> = {
  0xC0000005: 'access violation',
  0xC000001D: 'illegal instruction',
  0xC0000094: 'integer division by zero',
  0xC00000FD: 'stack overflow',
  0xC0000409: 'fail-fast: abort() or a stack buffer overrun',
  0xC0000374: 'heap corruption',
  0xC0000135: 'a DLL it needs was not found',
  0xC0000139: 'a DLL entry point was not found',
  0xC0000142: 'a DLL failed to initialise',
};

/**
 * How a process ended, for messages: "signal SIGSEGV" (POSIX), "code 1", or a Windows crash
 * code in hex with its name ("code 0xC000001D (illegal instruction)"), which a decimal
 * 3221225501 would hide.
 */
export function describeExit(code: number | null, signal: string | null): string {
  if (signal) return `signal ${signal}`;
  if (code === null) return 'code ?';
  const u = code >>> 0;
  if (u >= 0xC0000000) return `code 0x${u.toString(16).toUpperCase()}${NTSTATUS[u] ? ` (${NTSTATUS[u]})` : ''}`;
  return `code ${code}`;
}
