// Where the agent may read and write: inside the workspace folders only. A path is resolved
// against the first folder (or a folder named by its first segment in a multi-root workspace)
// and checked twice: as written, before the file system is touched (so a UNC or device path
// never opens a network connection, and ".." cannot climb out), then with its symbolic links
// resolved (also of the nearest existing parent, for a file to create). A link that leads
// nowhere is refused, as is a folder too broad to be a workspace (the file system's root, the
// home folder). Writes also refuse a link at the file itself and the files sensitive-files.ts names.
// On Windows paths are compared without case (path.win32 does), a drive letter or a rooted path
// ("\\src") lands on the folder's drive, and another drive is outside; the path module and the
// platform are parameters, so the Windows rules are unit-tested on any machine.
import { lstat, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import nodePath from 'node:path';
import { writeRefusal } from './sensitive-files.js';

export interface WorkspaceRoot { name: string; path: string }

/** The path rules of a platform: its path module and name (default: this machine's). */
export interface PathOs {
  path: nodePath.PlatformPath;
  platform: NodeJS.Platform;
  /** The home folder (too broad to be a workspace); default: this user's. */
  home?: string;
}

const HOST: PathOs = { path: nodePath, platform: process.platform };

export class PathRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathRefused';
  }
}

/** Whether `p` is `root` or under it (without case on Windows: path.win32.relative compares so). */
export function isInside(root: string, p: string, path: nodePath.PlatformPath = nodePath): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!path.isAbsolute(rel) && rel.split(path.sep)[0] !== '..');
}

/** Why a path as written is refused before it is looked up, or null. */
export function lexicalProblem(p: string, platform: NodeJS.Platform = process.platform): string | null {
  if (p.includes('\0')) return 'the path contains a NUL character';
  // \\host\share, \\?\C:\, \\.\pipe\x (and the same with "/"): network shares and devices.
  if (/^[\\/]{2}/.test(p)) return `${p} is a network (UNC) or device path`;
  if (/^[a-zA-Z]:(?![\\/])/.test(p)) return `${p} is relative to a drive's current folder`;
  // NTFS alternate data streams ("settings.json:stream") name another file than they seem to.
  if (platform === 'win32' && p.replace(/^[a-zA-Z]:/, '').includes(':')) return `${p} names an alternate data stream`;
  return null;
}

/** The real path of `p`, or of its nearest existing parent joined with the rest; a dangling link is refused. */
async function realOrParent(p: string, path: nodePath.PlatformPath): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    // Something is there (a link to nowhere, a loop): it cannot be followed, and must not be replaced.
    if (await lstat(p).then(() => true, () => false)) throw new PathRefused(`${p} is a symbolic link that leads nowhere`);
    const parent = path.dirname(p);
    if (parent === p) return p;
    return path.resolve(await realOrParent(parent, path), path.basename(p));
  }
}

/** Whether `abs` is a symbolic link itself (not following it). */
export async function isLink(abs: string): Promise<boolean> {
  return lstat(abs).then((s) => s.isSymbolicLink(), () => false);
}

export class WorkspacePaths {
  private realRoots: Promise<string[]> | undefined;
  private broad: Promise<Array<string | null>> | undefined;

  constructor(readonly roots: readonly WorkspaceRoot[], private readonly os: PathOs = HOST) {}

  /** The absolute, real path of `p` inside the workspace; throws PathRefused otherwise. */
  async resolve(p: string): Promise<{ abs: string; rel: string }> {
    return (await this.locate(p)).real;
  }

  /**
   * resolve() for a file the agent writes: also refused when the file is a symbolic link (a link
   * is never written through) or one that runs code (sensitive-files.ts).
   */
  async resolveForWrite(p: string): Promise<{ abs: string; rel: string }> {
    const { real, lexical, lexicalRel } = await this.locate(p);
    if (await isLink(lexical)) throw new PathRefused(`${p} is a symbolic link; the agent does not write through links`);
    for (const rel of new Set([lexicalRel, real.rel])) {
      const why = writeRefusal(rel);
      if (why) throw new PathRefused(why);
    }
    return real;
  }

  private async locate(p: string): Promise<{ real: { abs: string; rel: string }; lexical: string; lexicalRel: string }> {
    if (!this.roots.length) throw new PathRefused('there is no workspace folder open');
    if (typeof p !== 'string' || !p.trim()) throw new PathRefused('the path is empty');
    const { path } = this.os;
    const inside = (root: string, q: string): boolean => isInside(root, q, path);
    const problem = lexicalProblem(p.trim(), this.os.platform);
    if (problem) throw new PathRefused(problem);
    const want = p.trim().replace(/\\/g, '/');
    let root = this.roots[0]!;
    let rest = want;
    const first = want.split('/')[0];
    const named = this.roots.length > 1 ? this.roots.find((r) => r.name === first) : undefined;
    if (named) { root = named; rest = want.slice(first!.length + 1); }
    // An absolute path stays itself; a rooted one without a drive ("/src" on Windows) takes the folder's.
    const abs = path.resolve(root.path, rest);
    const roots = await this.real();
    const outside = (): PathRefused => new PathRefused(`${p} is outside the workspace (only files under ${this.roots.map((r) => r.path).join(', ')} can be used)`);
    // As written first: nothing outside the folders is looked up at all.
    const j = this.roots.findIndex((r, k) => inside(path.resolve(r.path), abs) || inside(roots[k]!, abs));
    if (j < 0) throw outside();
    await this.refuseBroad(j);
    const real = await realOrParent(abs, path);
    const i = roots.findIndex((r) => inside(r, real));
    if (i < 0) throw outside();
    await this.refuseBroad(i);
    const base = inside(path.resolve(this.roots[j]!.path), abs) ? path.resolve(this.roots[j]!.path) : roots[j]!;
    return { real: { abs: real, rel: this.relative(real, i, roots) }, lexical: abs, lexicalRel: path.relative(base, abs).split(path.sep).join('/') };
  }

  /** Refuses every path under a folder that is the file system's (or a drive's) root or the home folder. */
  private async refuseBroad(i: number): Promise<void> {
    const { path } = this.os;
    this.broad ??= this.real().then(async (roots) => {
      const given = this.os.home ?? homedir();
      const home = await realpath(given).catch(() => path.resolve(given));
      // Compared as the platform compares paths (without case on Windows): C:\ and c:\Users\Ana\ too.
      const same = (a: string, b: string): boolean => path.relative(a, b) === '';
      return roots.map((r) => (same(path.parse(r).root, r) ? 'the root of the file system' : same(r, home) ? 'your home folder' : null));
    });
    const why = (await this.broad)[i];
    if (why) throw new PathRefused(`the workspace folder ${this.roots[i]!.path} is ${why}, too broad for the agent to work in: open a project's folder instead`);
  }

  /** Workspace-relative form of a real path under root `i` (the folder's name first when there are several). */
  private relative(real: string, i: number, roots: string[]): string {
    const rel = this.os.path.relative(roots[i]!, real).split(this.os.path.sep).join('/');
    return this.roots.length > 1 ? `${this.roots[i]!.name}/${rel}` : rel || '.';
  }

  /** The folder paths with their symlinks resolved. */
  real(): Promise<string[]> {
    this.realRoots ??= Promise.all(this.roots.map((r) => realpath(r.path).catch(() => this.os.path.resolve(r.path))));
    return this.realRoots;
  }
}
