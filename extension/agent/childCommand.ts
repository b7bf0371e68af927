// run_command without a terminal: the command in a child process (its own process group, so
// Stop ends everything it started), stdout and stderr together, kept within a cap while it runs.
// A command line goes to a shell (when the terminal has no shell integration, and in the unit
// tests); an allow-listed command's words run without any shell (runChildArgv).
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve as resolvePath } from 'node:path';
import type { CommandResult } from './types.js';

/** Output kept while a command runs (the budget cuts it further): the first and last halves. */
export const OUTPUT_CAP = 200_000;

export class CappedOutput {
  private head = '';
  private tail = '';
  private dropped = 0;
  constructor(private readonly cap = OUTPUT_CAP) {}
  push(s: string): void {
    if (this.head.length < this.cap / 2) {
      const room = this.cap / 2 - this.head.length;
      this.head += s.slice(0, room);
      s = s.slice(room);
    }
    if (!s) return;
    this.tail += s;
    if (this.tail.length > this.cap / 2) {
      this.dropped += this.tail.length - this.cap / 2;
      this.tail = this.tail.slice(this.tail.length - this.cap / 2);
    }
  }
  text(): string {
    return this.dropped ? `${this.head}\n[… ${this.dropped} characters of output left out …]\n${this.tail}` : this.head + this.tail;
  }
}

export function runChildCommand(command: string, cwd: string, signal: AbortSignal, note: string | null = null): Promise<CommandResult> {
  return collect(() => spawn(command, { cwd, shell: true, detached: process.platform !== 'win32', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } }), signal, note);
}

/**
 * The program of an allow-listed command: a name is looked up on PATH's absolute folders only
 * (never the command's folder, which the workspace controls); a path ("./gradlew") is taken
 * relative to the folder. On Windows only .exe and .com run without a shell.
 */
export async function findProgram(program: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const win = process.platform === 'win32';
  const exts = win ? ['', '.exe', '.com'] : [''];
  const runnable = async (p: string): Promise<boolean> => {
    if (win && !/\.(exe|com)$/i.test(p)) return false;
    try { await access(p, win ? constants.F_OK : constants.X_OK); return true; } catch { return false; }
  };
  if (/[\\/]/.test(program)) {
    const p = resolvePath(cwd, program);
    for (const e of exts) if (await runnable(p + e)) return p + e;
    return null;
  }
  const path = (win ? env.Path ?? env.PATH : env.PATH) ?? '';
  for (const dir of path.split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    for (const e of exts) if (await runnable(join(dir, program + e))) return join(dir, program + e);
  }
  return null;
}

/** Runs a program with its arguments, no shell in between (an allow-listed command). */
export async function runChildArgv(argv: readonly string[], cwd: string, signal: AbortSignal): Promise<CommandResult> {
  const program = await findProgram(argv[0]!, cwd);
  if (!program) return { output: `${argv[0]}: no such program on PATH (allow-listed commands run without a shell: no shell built-ins or aliases${process.platform === 'win32' ? ', and only .exe and .com programs' : ''})`, exitCode: 127, note: null };
  return collect(() => spawn(program, argv.slice(1), { cwd, shell: false, detached: process.platform !== 'win32', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' }, windowsHide: true }),
    signal, 'allow-listed: it ran without a shell');
}

function collect(start: () => ChildProcess, signal: AbortSignal, note: string | null): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const child = start();
    const out = new CappedOutput();
    child.stdout!.setEncoding('utf8').on('data', (s: string) => out.push(s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => out.push(s));
    const kill = (): void => {
      try {
        if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch { /* already gone */ }
    };
    signal.addEventListener('abort', kill, { once: true });
    child.on('error', (err) => { signal.removeEventListener('abort', kill); reject(err); });
    child.on('close', (code) => {
      signal.removeEventListener('abort', kill);
      if (signal.aborted) return reject(signal.reason);
      resolve({ output: out.text(), exitCode: code, note });
    });
  });
}
