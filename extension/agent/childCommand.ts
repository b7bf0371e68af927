// run_command without a terminal: the command in a shell child process (its own process group,
// so Stop ends everything it started), stdout and stderr together, kept within a cap while it
// runs. Used when the terminal has no shell integration, and by the unit tests.
import { spawn } from 'node:child_process';
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
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const child = spawn(command, { cwd, shell: true, detached: process.platform !== 'win32', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    const out = new CappedOutput();
    child.stdout.setEncoding('utf8').on('data', (s: string) => out.push(s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => out.push(s));
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
