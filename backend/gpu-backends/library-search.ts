// Where the dynamic loader would find a shared library by its soname (libcudart.so.13, …):
// LD_LIBRARY_PATH, then the ld.so cache (`ldconfig -p`), then the default folders. This is what
// `strata gpu list` shows for each library a GPU backend needs, so that a missing one is named
// before a load fails with only the first missing name (dlopen reports one at a time).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface LibrarySearch {
  ldLibraryPath: string[];
  /** soname -> path from the ld.so cache (this machine's architecture only). */
  cache: Map<string, string>;
  defaultDirs: string[];
}

const DEFAULT_DIRS = ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib64', '/usr/lib64', '/lib', '/usr/lib'];

/** Parses `ldconfig -p`: "\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.13". */
export function parseLdconfig(text: string, arch = 'x86-64'): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S.*)$/.exec(line);
    if (!m || !m[2]!.split(',').includes(arch)) continue;
    if (!out.has(m[1]!)) out.set(m[1]!, m[3]!.trim());
  }
  return out;
}

function readLdconfigCache(): Map<string, string> {
  for (const cmd of ['ldconfig', '/sbin/ldconfig', '/usr/sbin/ldconfig']) {
    try {
      return parseLdconfig(execFileSync(cmd, ['-p'], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] }));
    } catch { /* not there: try the next */ }
  }
  return new Map();
}

/** The search this process's loader uses (x86-64 Linux). */
export function systemLibrarySearch(env: NodeJS.ProcessEnv = process.env): LibrarySearch {
  return {
    ldLibraryPath: (env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean),
    cache: readLdconfigCache(),
    defaultDirs: DEFAULT_DIRS,
  };
}

/** Path the loader would open for `soname`, or null when it would fail. */
export function resolveLibrary(soname: string, search: LibrarySearch, exists: (p: string) => boolean = existsSync): string | null {
  for (const dir of search.ldLibraryPath) {
    const p = join(dir, soname);
    if (exists(p)) return p;
  }
  const cached = search.cache.get(soname);
  if (cached && exists(cached)) return cached;
  for (const dir of search.defaultDirs) {
    const p = join(dir, soname);
    if (exists(p)) return p;
  }
  return null;
}
