// search_text through the ripgrep VS Code ships (node_modules/@vscode/ripgrep under the app
// root): .gitignore as rg reads it, files.exclude as negated globs, stopped after enough lines.
// Pure Node; the caller finds the binary and falls back to the walker's search without it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import nodePath, { join } from 'node:path';
import type { TextMatch } from './types.js';

/**
 * VS Code's rg under its app root, or null: @vscode/ripgrep/bin/rg (older builds, unpacked from the
 * asar in packaged ones) or @vscode/ripgrep-universal/bin/<platform>-<arch>/rg (1.13x).
 */
export function findRipgrep(appRoot: string, platform: string = process.platform, arch: string = process.arch): string | null {
  const exe = platform === 'win32' ? 'rg.exe' : 'rg';
  for (const nm of ['node_modules', 'node_modules.asar.unpacked']) {
    for (const p of [join(appRoot, nm, '@vscode', 'ripgrep', 'bin', exe), join(appRoot, nm, '@vscode', 'ripgrep-universal', 'bin', `${platform}-${arch}`, exe)]) {
      if (existsSync(p)) return p;
    }
  }
  return null;
}

export interface RipgrepQuery {
  query: string;
  regex: boolean;
  glob: string | null;
  exclude: readonly string[];
  maxResults: number;
  /** Each root with the prefix its paths get ('' in a single-folder workspace). */
  roots: Array<{ path: string; prefix: string }>;
}

export function ripgrepSearch(rg: string, q: RipgrepQuery, signal: AbortSignal): Promise<TextMatch[]> {
  const args = ['--line-number', '--no-heading', '--with-filename', '--null', '--color', 'never', '--max-columns', '400', '--max-filesize', '4M', '--hidden', '-g', '!.git'];
  if (!q.regex) args.push('--fixed-strings');
  if (q.glob) args.push('-g', q.glob);
  for (const g of q.exclude) args.push('-g', `!${g}`);
  args.push('-e', q.query, '--', ...q.roots.map((r) => r.path));
  return new Promise((resolve, reject) => {
    const child = spawn(rg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const hits: TextMatch[] = [];
    let buf = '';
    let err = '';
    const stop = (): void => { child.kill('SIGKILL'); };
    signal.addEventListener('abort', stop, { once: true });
    const line = (l: string): void => {
      const hit = hits.length < q.maxResults ? parseRipgrepLine(l, q.roots) : null;
      if (!hit) return;
      hits.push(hit);
      if (hits.length >= q.maxResults) stop();
    };
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      buf += s;
      const lines = buf.split('\n');
      buf = lines.pop()!;
      lines.forEach(line);
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => { err += s; });
    child.on('error', (e) => { signal.removeEventListener('abort', stop); reject(e); });
    child.on('close', (code) => {
      signal.removeEventListener('abort', stop);
      if (signal.aborted) return reject(signal.reason);
      if (buf) line(buf);
      // 1: no match; 2: an error (a bad pattern) unless some lines came first.
      if (code === 2 && !hits.length) return reject(new Error(err.trim().split('\n')[0] || 'ripgrep failed'));
      resolve(hits);
    });
  });
}

/**
 * One line of `rg --null --line-number --with-filename`: PATH NUL LINE ':' TEXT. The NUL ends the
 * path whatever it holds (a drive's colon on Windows, ':12:' in a Linux file name); a CRLF
 * file's '\r' is not part of the text. The path is made relative to the root it is under (as
 * the platform compares paths: without case on Windows) with '/' between its parts.
 */
export function parseRipgrepLine(l: string, roots: RipgrepQuery['roots'], path: nodePath.PlatformPath = nodePath): TextMatch | null {
  const m = /^([^\0]+)\0(\d+):(.*?)\r?$/.exec(l);
  if (!m || !roots.length) return null;
  const file = m[1]!;
  const under = (root: string): boolean => { const rel = path.relative(root, file); return rel !== '' && !path.isAbsolute(rel) && rel.split(path.sep)[0] !== '..'; };
  const root = roots.find((r) => under(r.path)) ?? roots[0]!;
  const rel = path.relative(root.path, file).split(path.sep).join('/');
  return { path: root.prefix ? `${root.prefix}/${rel}` : rel, line: Number(m[2]), text: m[3]! };
}
