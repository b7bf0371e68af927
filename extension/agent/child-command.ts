// run_command without a terminal: the command in a child process (its own process group, so
// Stop ends everything it started), stdout and stderr together, kept within a cap while it runs.
// A command line goes to a shell (when the terminal has no shell integration, and in the unit
// tests); an allow-listed command's words run without any shell (runChildArgv).
// On Windows the shell is cmd.exe (Node's shell: true), Stop ends the tree with taskkill /T /F
// (there are no process groups), and a program is looked up with PATHEXT's extensions; a batch
// file (.bat, .cmd: npm, npx, yarn are ones) runs only through cmd.exe, so its words are passed
// quoted and only when nothing in them is special to cmd even inside quotes (cmdLine).
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import nodePath from 'node:path';
import { killTree, type Platform } from '../../common/os/process.js';
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

export function runChildCommand(command: string, cwd: string, signal: AbortSignal, note: string | null = null, platform: Platform = process.platform): Promise<CommandResult> {
  return collect(() => spawn(command, { cwd, shell: true, detached: platform !== 'win32', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' }, windowsHide: true }), signal, note, platform);
}

/** PATHEXT's extensions, lower case, in order (Windows' default when unset). */
export function pathExtensions(env: NodeJS.ProcessEnv): string[] {
  const raw = env.PATHEXT ?? env.PathExt ?? env.Pathext ?? '.COM;.EXE;.BAT;.CMD';
  return raw.split(';').map((e) => e.trim().toLowerCase()).filter((e) => /^\.[a-z0-9]+$/.test(e));
}

/** Programs Windows runs only through cmd.exe. */
export const isBatchFile = (program: string): boolean => /\.(bat|cmd)$/i.test(program);

/**
 * The program of an allow-listed command: a name is looked up on PATH's absolute folders only
 * (never the command's folder, which the workspace controls); a path ("./gradlew") is taken
 * relative to the folder. On Windows a name without one of PATHEXT's extensions gets each in
 * turn (git -> git.exe, npm -> npm.cmd), and only files with those extensions run.
 */
export async function findProgram(program: string, cwd: string, env: NodeJS.ProcessEnv = process.env, platform: Platform = process.platform, path: nodePath.PlatformPath = nodePath): Promise<string | null> {
  const win = platform === 'win32';
  const pathext = win ? pathExtensions(env) : [];
  const hasExt = pathext.some((e) => program.toLowerCase().endsWith(e));
  // PATHEXT lists them upper case; Windows' file names match either way.
  const exts = !win ? [''] : hasExt ? [''] : pathext.flatMap((e) => [e, e.toUpperCase()]);
  const runnable = async (p: string): Promise<boolean> => {
    try { await access(p, win ? constants.F_OK : constants.X_OK); return true; } catch { return false; }
  };
  if (/[\\/]/.test(program)) {
    const p = path.resolve(cwd, program);
    for (const e of exts) if (await runnable(p + e)) return p + e;
    return null;
  }
  const list = (win ? env.Path ?? env.PATH : env.PATH) ?? '';
  for (const dir of list.split(win ? ';' : ':')) {
    if (!dir || !path.isAbsolute(dir)) continue;
    for (const e of exts) if (await runnable(path.join(dir, program + e))) return path.join(dir, program + e);
  }
  return null;
}

/**
 * The cmd.exe command line that runs a batch file with these arguments (for cmd /d /v:off /s /c),
 * or null when one of them cannot be passed through cmd as it is. Each word is quoted: inside
 * quotes cmd reads nothing special but '%' (variables), '!' (delayed expansion, off here) and
 * the quote itself, and a word holding any of these, a control character, or a backslash before
 * its closing quote is refused (the allow-list's words never hold '%', '!' or '\\'; a single-quoted
 * word may hold '"').
 */
export function cmdLine(program: string, args: readonly string[]): string | null {
  // eslint-disable-next-line no-control-regex
  const unsafe = (w: string): boolean => /["%!\x00-\x1f]/.test(w) || w.endsWith('\\');
  if ([program, ...args].some(unsafe)) return null;
  return `"${[program, ...args].map((w) => `"${w}"`).join(' ')}"`;
}

/** Runs a program with its arguments, no shell in between (an allow-listed command); a batch file through cmd.exe (cmdLine). */
export async function runChildArgv(argv: readonly string[], cwd: string, signal: AbortSignal, platform: Platform = process.platform): Promise<CommandResult> {
  const win = platform === 'win32';
  const program = await findProgram(argv[0]!, cwd, process.env, platform);
  if (!program) return { output: `${argv[0]}: no such program on PATH (allow-listed commands run without a shell: no shell built-ins or aliases)`, exitCode: 127, note: null };
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  if (win && isBatchFile(program)) {
    const line = cmdLine(program, argv.slice(1));
    if (line === null) return { output: `${argv[0]} is a batch file (${program}), which runs only through cmd.exe, and an argument holds a character cmd would read (", %, !, a control character or a closing backslash)`, exitCode: 126, note: null };
    const comspec = env.ComSpec ?? env.COMSPEC ?? nodePath.win32.join(env.SystemRoot ?? 'C:\\Windows', 'System32', 'cmd.exe');
    return collect(() => spawn(comspec, ['/d', '/v:off', '/s', '/c', line], { cwd, windowsVerbatimArguments: true, stdio: ['ignore', 'pipe', 'pipe'], env, windowsHide: true }),
      signal, 'allow-listed: a batch file, run by cmd.exe with each word quoted', platform);
  }
  return collect(() => spawn(program, argv.slice(1), { cwd, shell: false, detached: !win, stdio: ['ignore', 'pipe', 'pipe'], env, windowsHide: true }),
    signal, 'allow-listed: it ran without a shell', platform);
}

function collect(start: () => ChildProcess, signal: AbortSignal, note: string | null, platform: Platform): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const child = start();
    const out = new CappedOutput();
    child.stdout!.setEncoding('utf8').on('data', (s: string) => out.push(s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => out.push(s));
    // The command and everything it started: its process group on POSIX, its tree on Windows.
    const kill = (): void => { if (child.pid) void killTree(child.pid, { platform, group: platform !== 'win32' }); };
    signal.addEventListener('abort', kill, { once: true });
    // Stopped: once the command itself has exited its output is not wanted, so the pipes are closed
    // rather than waited for; a process it started that outlived the kill (a tree taskkill could
    // not end) would otherwise hold them open and Stop would never return.
    child.on('exit', () => { if (signal.aborted) { child.stdout!.destroy(); child.stderr!.destroy(); } });
    child.on('error', (err) => { signal.removeEventListener('abort', kill); reject(err); });
    child.on('close', (code) => {
      signal.removeEventListener('abort', kill);
      if (signal.aborted) return reject(signal.reason);
      resolve({ output: out.text(), exitCode: code, note });
    });
  });
}
