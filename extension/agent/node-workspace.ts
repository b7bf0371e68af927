// The agent's workspace on plain folders (Node only): files from disk, the listing of the
// codebase index's walker (.gitignore, excludes), a line search, commands in a child process.
// The unit tests run the loop on it; vscode-workspace.ts builds on it inside VS Code.
import { constants } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import picomatch from 'picomatch';
import { isIndexable, readText, walk } from '../codebase/walker.js';
import { runChildArgv, runChildCommand } from './child-command.js';
import { isInside, isLink, type WorkspacePaths } from './paths.js';
import { looksSecret } from './sensitive-files.js';
import type { AgentWorkspace, CodebaseSearchFn, CommandResult, DiagnosticItem, ProposedChange, TextMatch } from './types.js';

/** The largest file read_file, search_text and edit_file open. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;
/** What list_files and search_text always leave out (beside .gitignore and files.exclude). */
export const LIST_EXCLUDES: readonly string[] = ['**/node_modules/**', '**/.git/**'];

export interface NodeWorkspaceOptions {
  /** Globs left out beside .gitignore (files.exclude keys set to true). */
  exclude: () => readonly string[];
  codebase?: CodebaseSearchFn | undefined;
}

export class NodeWorkspace implements AgentWorkspace {
  codebase: CodebaseSearchFn | undefined;

  constructor(protected readonly paths: WorkspacePaths, protected readonly opts: NodeWorkspaceOptions) {
    this.codebase = opts.codebase;
  }

  async readText(abs: string): Promise<string | null> {
    return readText(abs, MAX_FILE_BYTES);
  }

  async isIgnored(abs: string): Promise<boolean> {
    const roots = await this.paths.real();
    const i = roots.findIndex((r) => isInside(r, abs));
    if (i < 0) return false;
    const rel = relative(roots[i]!, abs).split(sep).join('/');
    return rel !== '' && !(await isIndexable(roots[i]!, rel, { exclude: [], maxFileBytes: Number.MAX_SAFE_INTEGER }));
  }

  async listFiles(signal: AbortSignal): Promise<string[]> {
    const out: string[] = [];
    const multi = this.paths.roots.length > 1;
    for (const root of this.paths.roots) {
      const r = await walk(root.path, { exclude: [...LIST_EXCLUDES, ...this.opts.exclude()], maxFileBytes: Number.MAX_SAFE_INTEGER }, signal);
      out.push(...r.files.map((f) => (multi ? `${root.name}/${f.path}` : f.path)));
    }
    return out;
  }

  async searchText(query: string, opts: { regex: boolean; glob: string | null; maxResults: number }, signal: AbortSignal): Promise<TextMatch[]> {
    const re = opts.regex ? new RegExp(query) : null;
    const match = opts.glob ? picomatch(opts.glob, { dot: true }) : null;
    const hits: TextMatch[] = [];
    for (const rel of await this.listFiles(signal)) {
      if (match && !match(rel) && !match(rel.split('/').pop()!)) continue;
      if (looksSecret(rel)) continue;
      signal.throwIfAborted();
      const text = await this.readText(this.absOf(rel));
      if (text === null) continue;
      const lines = text.split('\n');
      for (let i = 0; i < lines.length; i++) {
        if (re ? re.test(lines[i]!) : lines[i]!.includes(query)) {
          hits.push({ path: rel, line: i + 1, text: lines[i]! });
          if (hits.length >= opts.maxResults) return hits;
        }
      }
    }
    return hits;
  }

  diagnostics(_abs: string | undefined): DiagnosticItem[] {
    return [];
  }

  async apply(change: ProposedChange): Promise<string | null> {
    try {
      if (await isLink(change.abs)) return `${change.path} is a symbolic link now; the agent does not write through links`;
      await mkdir(dirname(change.abs), { recursive: true });
      // Never through a link, even one put there since the check; a new file must not exist yet.
      const flags = constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0) | (change.before === null ? constants.O_CREAT | constants.O_EXCL : constants.O_TRUNC);
      const file = await open(change.abs, flags, 0o666);
      try { await file.writeFile(change.after); } finally { await file.close(); }
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** Deletes a file (Restore to here takes back a file the agent created). */
  async remove(abs: string): Promise<string | null> {
    try {
      await rm(abs);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** A path as the agent's writes resolve it now (Restore to here checks each file again). */
  resolveForWrite(p: string): Promise<{ abs: string; rel: string }> {
    return this.paths.resolveForWrite(p);
  }

  runCommand(command: string, cwd: string, signal: AbortSignal, argv?: readonly string[]): Promise<CommandResult> {
    return argv ? runChildArgv(argv, cwd, signal) : runChildCommand(command, cwd, signal);
  }

  /** The absolute path of a listed (workspace-relative) path. */
  protected absOf(rel: string): string {
    const roots = this.paths.roots;
    if (roots.length > 1) {
      const [name, ...rest] = rel.split('/');
      const root = roots.find((r) => r.name === name) ?? roots[0]!;
      return join(root.path, rest.join('/'));
    }
    return join(roots[0]!.path, rel);
  }
}
