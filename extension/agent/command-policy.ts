// strata.agent.allowedCommands: the commands run_command may run without asking. An allow-listed
// command is never given to a shell: it is split into a program and its arguments and run as a
// child process (shell: false), so what matched the pattern is exactly what runs.
//
// A pattern is a program followed by arguments, separated by spaces:
//   "git status"      the program with exactly these arguments (and no others)
//   "npm test *"      the program, these leading arguments, then any further plain arguments
//                     ("npm test*" means the same: a trailing "*" is always its own word)
// A "*" anywhere else, quotes or shell syntax make the pattern invalid (it allows nothing).
//
// A command is allow-listed only when it is plain words: any shell syntax (; & | < > ` $ ( ) { }
// * ? [ ] ! ~ #, a backslash, unbalanced quotes, a line break, a control, bidi or invisible
// character) makes it ask, whatever the shell would have made of it. Words may be quoted ('a b'
// or "a b") to hold spaces. The arguments a "*" matched must also be harmless: an option that
// writes a file, runs another program or moves the program's configuration (--output, -o,
// --exec, -c, --git-dir, ...) or a path that leaves the folder (absolute, "..", a drive or UNC
// path) asks unless the pattern spells it out. Every "="-separated piece of an argument counts,
// and a value that is itself an option ("--node-options=--require=x") asks. An argument that
// names a file (it exists, or holds a slash) is resolved as read_file resolves paths: outside the
// workspace (also through a link), looking like a secret, or ignored by the workspace, it asks.
import { lstat } from 'node:fs/promises';
import nodePath from 'node:path';
import type { WorkspacePaths } from './paths.js';
import { looksSecret } from './sensitive-files.js';

/** Characters that are shell syntax in some shell (sh, zsh, PowerShell, cmd) or hide what is shown. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[;&|<>`$(){}*?[\]!~#%^\\\x00-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\ufff9-\ufffb]/u;

/** A wildcard argument that is one of these options (or starts a short-option cluster holding one of RISKY_SHORT) asks. */
const RISKY_LONG = /out|file|dir|exec|config|pack|path|prefix|script|shell|eval|require|import|loader|hook|editor|pager|textconv|command|cmd|delete|remove|write|upload|global|system|user|plugin|init|template|node-option|inspect/i;
const RISKY_SHORT = /[oOcCeExXfFwW]/;

/** The words of a command line, or null when it is not plain words (see above). */
export function splitCommand(command: string): string[] | null {
  if (UNSAFE.test(command)) return null;
  const words: string[] = [];
  let word = '';
  let quote: '"' | "'" | null = null;
  let inWord = false;
  for (const c of command) {
    if (quote) {
      if (c === quote) quote = null;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === ' ' || c === '\t') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else if (/\s/u.test(c)) {
      return null; // a space-like character a reader would take for a plain space
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) return null;
  if (inWord) words.push(word);
  return words.length ? words : null;
}

export interface CommandPattern {
  /** The program and the arguments that must come first, exactly. */
  fixed: string[];
  /** Whether further (harmless) arguments may follow. */
  more: boolean;
}

/** A pattern as it allows commands, or null when it is not a valid pattern. */
export function parsePattern(raw: string): CommandPattern | null {
  let p = raw.trim();
  let more = false;
  if (p.endsWith('*')) {
    more = true;
    p = p.slice(0, -1).trim();
  }
  if (!p || /["']/.test(p)) return null;
  const fixed = splitCommand(p);
  return fixed ? { fixed, more } : null;
}

/** Why an argument a "*" matched is not harmless, or null when it is. */
export function riskyArgument(arg: string): string | null {
  const values = arg.split('=').slice(1);
  for (const v of [arg, ...values]) {
    if (/^[/\\]/.test(v) || /^[a-zA-Z]:/.test(v)) return `${arg} names an absolute path`;
    if (v.split(/[/\\]/).includes('..')) return `${arg} leaves the folder (..)`;
  }
  // An option inside a value goes to another program (node through npm's --node-options).
  const passed = values.find((v) => v.startsWith('-'));
  if (passed) return `${arg} passes the option ${passed} on`;
  if (arg === '-' || arg === '--') return null;
  if (arg.startsWith('--')) {
    const name = arg.slice(2).split('=')[0]!;
    return RISKY_LONG.test(name) || name === 'o' ? `${arg} is an option that may write files or run programs` : null;
  }
  if (arg.startsWith('-')) {
    const body = arg.slice(1).split('=')[0]!;
    // "-output" (a long option with one dash) or a cluster of short ones ("-la").
    if (RISKY_LONG.test(body) || RISKY_SHORT.test(body)) return `${arg} is an option that may write files or run programs`;
  }
  return null;
}

/** The patterns `command` matches as written: its words and the arguments each pattern's "*" matched. */
function matches(command: string, patterns: readonly string[]): Array<{ argv: string[]; rest: string[] }> {
  const argv = splitCommand(command);
  if (!argv) return [];
  const out: Array<{ argv: string[]; rest: string[] }> = [];
  for (const raw of patterns) {
    const p = parsePattern(raw);
    if (!p || argv.length < p.fixed.length) continue;
    if (!p.fixed.every((w, i) => argv[i] === w)) continue;
    const rest = argv.slice(p.fixed.length);
    if (!rest.length || (p.more && rest.every((a) => riskyArgument(a) === null))) out.push({ argv, rest });
  }
  return out;
}

/**
 * The program and arguments when `command` is allow-listed by one of `patterns` as written (its
 * files not looked at: allowListedRun does that), or null when it must ask.
 */
export function allowListedArgv(command: string, patterns: readonly string[]): string[] | null {
  return matches(command, patterns)[0]?.argv ?? null;
}

/** What checking an argument's file needs of the workspace. */
export interface ArgumentFiles {
  paths: WorkspacePaths;
  isIgnored(abs: string): Promise<boolean>;
}

/**
 * Why an argument a "*" matched names a file the agent would have to ask for (see the top), or
 * null. `cwd`: the command's folder (absolute), which relative names are taken from.
 */
export async function riskyFile(arg: string, cwd: string, files: ArgumentFiles): Promise<string | null> {
  for (const piece of new Set([arg, ...arg.split('=').slice(1)])) {
    if (!piece || piece.startsWith('-')) continue;
    if (looksSecret(piece.replace(/\\/g, '/').replace(/\/+$/, ''))) return `${arg} names a file that looks like it holds secrets`;
    const abs = nodePath.resolve(cwd, piece);
    if (!/[\\/]/.test(piece) && !(await lstat(abs).then(() => true, () => false))) continue; // a plain word, no file
    let real: { abs: string; rel: string };
    try {
      real = await files.paths.resolve(abs);
    } catch (err) {
      return `${arg}: ${(err as Error).message}`;
    }
    if (looksSecret(real.rel)) return `${arg} leads to ${real.rel}, which looks like it holds secrets`;
    if (await files.isIgnored(real.abs)) return `the workspace ignores ${real.rel} (.gitignore)`;
  }
  return null;
}

/**
 * The program and arguments to run without a shell when `command` is allow-listed by one of
 * `patterns` and the files its "*" arguments name may be used unasked, or null when it must ask.
 */
export async function allowListedRun(command: string, patterns: readonly string[], cwd: string, files: ArgumentFiles): Promise<string[] | null> {
  next: for (const m of matches(command, patterns)) {
    for (const a of m.rest) if ((await riskyFile(a, cwd, files)) !== null) continue next;
    return m.argv;
  }
  return null;
}

export function isAllowListed(command: string, patterns: readonly string[]): boolean {
  return allowListedArgv(command, patterns) !== null;
}
