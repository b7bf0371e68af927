// Where the agent may read and write: inside the workspace folders only. A path is resolved
// against the first folder (or a folder named by its first segment in a multi-root workspace),
// symbolic links are resolved (also of the nearest existing parent, for a file to create), and
// anything whose real location is outside every folder is refused.
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';

export interface WorkspaceRoot { name: string; path: string }

export class PathRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathRefused';
  }
}

const inside = (root: string, p: string): boolean => {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..');
};

/** The real path of `p`, or of its nearest existing parent joined with the rest. */
async function realOrParent(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    const parent = dirname(p);
    if (parent === p) return p;
    return resolve(await realOrParent(parent), basename(p));
  }
}

export class WorkspacePaths {
  private realRoots: Promise<string[]> | undefined;

  constructor(readonly roots: readonly WorkspaceRoot[]) {}

  /** The absolute, real path of `p` inside the workspace; throws PathRefused otherwise. */
  async resolve(p: string): Promise<{ abs: string; rel: string }> {
    if (!this.roots.length) throw new PathRefused('there is no workspace folder open');
    if (typeof p !== 'string' || !p.trim()) throw new PathRefused('the path is empty');
    if (p.includes('\0')) throw new PathRefused('the path contains a NUL character');
    const want = p.trim().replace(/\\/g, '/');
    let root = this.roots[0]!;
    let rest = want;
    const first = want.split('/')[0];
    const named = this.roots.length > 1 ? this.roots.find((r) => r.name === first) : undefined;
    if (named) { root = named; rest = want.slice(first!.length + 1); }
    const abs = isAbsolute(rest) ? resolve(rest) : resolve(root.path, rest);
    const real = await realOrParent(abs);
    const roots = await this.real();
    const i = roots.findIndex((r) => inside(r, real));
    if (i < 0) throw new PathRefused(`${p} is outside the workspace (only files under ${this.roots.map((r) => r.path).join(', ')} can be used)`);
    return { abs: real, rel: this.relative(real, i, roots) };
  }

  /** Workspace-relative form of a real path under root `i` (the folder's name first when there are several). */
  private relative(real: string, i: number, roots: string[]): string {
    const rel = relative(roots[i]!, real).split(sep).join('/');
    return this.roots.length > 1 ? `${this.roots[i]!.name}/${rel}` : rel || '.';
  }

  /** The folder paths with their symlinks resolved. */
  real(): Promise<string[]> {
    this.realRoots ??= Promise.all(this.roots.map((r) => realpath(r.path).catch(() => resolve(r.path))));
    return this.realRoots;
  }
}
