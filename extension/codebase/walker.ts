// Which files of a workspace folder the index reads: every file under it except what .gitignore
// files (each applying to its own folder and below, as git reads them), the exclude globs (VS
// Code's files.exclude and the index's own) and the size cap leave out; .git and symbolic links
// are never followed. Reading a file also skips binary content. Pure Node: unit-tested on folders.
// On Windows names match without case, as the file system and git there (core.ignorecase) do:
// .GIT is git's folder, and the exclude globs match "Build" as "build".
import { lstat, open, readdir, readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';

export interface WalkOptions {
  /** Globs against the path relative to the root (files.exclude keys set to true, strata.codebase.exclude). */
  exclude: readonly string[];
  /** Files larger than this are left out (bytes). */
  maxFileBytes: number;
  /** Default: this machine's; 'win32' matches names without case. */
  platform?: NodeJS.Platform;
}

const caseless = (platform: NodeJS.Platform | undefined): boolean => (platform ?? process.platform) === 'win32';
const isGitDir = (name: string, platform: NodeJS.Platform | undefined): boolean => (caseless(platform) ? name.toLowerCase() : name) === '.git';

export interface WalkedFile {
  /** Relative to the root, with forward slashes. */
  path: string;
  size: number;
  mtimeMs: number;
}

export interface WalkResult {
  files: WalkedFile[];
  /** Files left out for their size. */
  tooLarge: number;
}

/** What the index leaves out besides .gitignore: lock files, bundles, maps, media, archives. */
export const DEFAULT_EXCLUDES: readonly string[] = [
  '**/node_modules/**', '**/.git/**', '**/*.lock', '**/package-lock.json', '**/*.min.*', '**/*.map',
  '**/*.{png,jpg,jpeg,gif,bmp,ico,webp,pdf,zip,gz,tgz,xz,bz2,7z,jar,so,dll,dylib,exe,o,a,wasm,node,gguf,bin,onnx,safetensors,pt,woff,woff2,ttf,otf,mp3,mp4,wav,mov}',
];

/** A compiled filter for one root (files.exclude globs, picomatch with dotfiles matched). */
export function excludeMatcher(globs: readonly string[], platform: NodeJS.Platform = process.platform): (path: string) => boolean {
  if (!globs.length) return () => false;
  const m = picomatch([...globs], { dot: true, nocase: caseless(platform) });
  // "**/build" also leaves out everything below build/.
  return (path) => {
    if (m(path)) return true;
    for (let i = path.indexOf('/'); i > 0; i = path.indexOf('/', i + 1)) if (m(path.slice(0, i))) return true;
    return false;
  };
}

interface Scope { base: string; rules: Ignore }

async function gitignoreAt(dir: string, rel: string): Promise<Scope | null> {
  try {
    const text = await readFile(join(dir, '.gitignore'), 'utf8');
    return { base: rel, rules: ignore().add(text) };
  } catch {
    return null;
  }
}

function ignoredBy(scopes: readonly Scope[], rel: string, isDir: boolean): boolean {
  for (const s of scopes) {
    const sub = s.base ? rel.slice(s.base.length + 1) : rel;
    if (s.rules.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}

export async function walk(root: string, opts: WalkOptions, signal?: AbortSignal): Promise<WalkResult> {
  const excluded = excludeMatcher(opts.exclude, opts.platform);
  const files: WalkedFile[] = [];
  let tooLarge = 0;
  const visit = async (dir: string, rel: string, scopes: readonly Scope[]): Promise<void> => {
    signal?.throwIfAborted();
    const own = await gitignoreAt(dir, rel);
    const here = own ? [...scopes, own] : scopes;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // unreadable folder: nothing to index there
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (isGitDir(e.name, opts.platform) || e.isSymbolicLink()) continue;
      const isDir = e.isDirectory();
      if (!isDir && !e.isFile()) continue;
      if (excluded(path) || ignoredBy(here, path, isDir)) continue;
      if (isDir) {
        await visit(join(dir, e.name), path, here);
        continue;
      }
      const st = await lstat(join(dir, e.name)).catch(() => null);
      if (!st) continue;
      if (st.size > opts.maxFileBytes) { tooLarge++; continue; }
      files.push({ path, size: st.size, mtimeMs: Math.floor(st.mtimeMs) });
    }
  };
  await visit(root, '', []);
  return { files, tooLarge };
}

/** Whether a relative path is one the walk would keep (for watcher events); size is checked on read. */
export async function isIndexable(root: string, path: string, opts: WalkOptions): Promise<boolean> {
  if (excludeMatcher(opts.exclude, opts.platform)(path)) return false;
  const parts = path.split('/');
  if (parts.some((p) => isGitDir(p, opts.platform))) return false;
  const scopes: Scope[] = [];
  for (let i = 0; i < parts.length; i++) {
    const rel = parts.slice(0, i).join('/');
    const own = await gitignoreAt(join(root, rel), rel);
    if (own) scopes.push(own);
    const sub = parts.slice(0, i + 1).join('/');
    if (ignoredBy(scopes, sub, i < parts.length - 1)) return false;
  }
  return true;
}

/** Bytes sniffed for binary content (git's heuristic looks at the first 8000). */
const SNIFF = 8000;

/**
 * A text file's content, or null when it is binary (a NUL byte or invalid UTF-8 in its first
 * 8000 bytes), gone, or larger than the cap.
 */
export async function readText(absPath: string, maxBytes: number): Promise<string | null> {
  let fh;
  try {
    fh = await open(absPath, 'r');
    const st = await fh.stat();
    if (!st.isFile() || st.size > maxBytes) return null;
    const buf = await fh.readFile();
    const head = buf.subarray(0, SNIFF);
    if (head.includes(0)) return null;
    try {
      // A multi-byte character cut at the sniff's end is not an error.
      new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    } catch {
      return null;
    }
    return buf.toString('utf8');
  } catch {
    return null;
  } finally {
    await fh?.close();
  }
}

export const toPosix = (p: string): string => p.split('\\').join(posix.sep);
