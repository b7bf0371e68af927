// Checkpoints of Agent mode: every change the user accepted and every command that ran, in the
// order they happened, with the files' content before each change. "Restore to here" puts the
// files the agent changed after a checkpoint back to their content at that point: a file created
// since is deleted, one deleted since is recreated, and a file that changed since the agent's
// last change to it (the user typed, a formatter or a command ran) is a conflict, left alone.
// Commands cannot be undone; the plan lists those that ran after the point. Every path is checked
// again as the agent's writes are (paths.ts resolveForWrite) when the plan is made and when it is
// carried out: a folder on the way that became a link since (out of the workspace, or elsewhere
// in it) refuses the whole restore, naming the file, and nothing is read or written through it.
//
// The journal and the contents live in the extension's storage folder (never in the user's
// repository): journal.json (the entries) and blobs/<sha256> (file contents, shared by entries).
// No vscode here: unit-tested on a temporary folder with NodeWorkspace.
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RestoreFileView, RestorePlanView, RestoreResultView } from '../../contract/agent-checkpoints.js';
import { unifiedDiff } from './diff-text.js';
import type { ProposedChange } from './types.js';

/** A change as the store records it: a ProposedChange, or a deletion (after: null). */
export type RecordedChange = Omit<ProposedChange, 'after'> & { after: string | null };

/** What the loop tells the store (AgentLoopDeps.checkpoints). */
export interface CheckpointRecorder {
  changed(stepId: string, change: RecordedChange): Promise<void>;
  commandRan(stepId: string, command: string, cwd: string): Promise<void>;
}

/** The file access a restore needs: NodeWorkspace and VscodeWorkspace provide it. */
export interface RestoreFiles {
  readText(abs: string): Promise<string | null>;
  /** Writes `after` where the file holds `before` (null: creates it); resolves with a problem, or null. */
  apply(change: ProposedChange): Promise<string | null>;
  /** Deletes a file; resolves with a problem, or null. */
  remove(abs: string): Promise<string | null>;
  /** The real path the agent may write for `p` now (WorkspacePaths.resolveForWrite); throws when it may not. */
  resolveForWrite(p: string): Promise<{ abs: string; rel: string }>;
}

type Hash = string;

interface ChangeEntry {
  kind: 'change';
  seq: number;
  chatId: string;
  stepId: string;
  path: string;
  abs: string;
  /** The content before the change (a blob), null: the file did not exist. */
  before: Hash | null;
  /** The content the change left, null: the change deleted the file. */
  after: Hash | null;
}

interface CommandEntry { kind: 'command'; seq: number; chatId: string; stepId: string; command: string; cwd: string }

type Entry = ChangeEntry | CommandEntry;

/** Entries kept; the oldest go first (with the contents nothing refers to any more). */
export const MAX_CHECKPOINTS = 400;

const hashOf = (text: string): Hash => createHash('sha256').update(text).digest('hex');

/** One file's way back: the content it goes back to, and what it must hold now for that to be safe. */
interface FileTarget { path: string; abs: string; target: Hash | null; expected: Hash | null }

export class CheckpointStore {
  private entries: Entry[] = [];
  private seq = 0;
  private loaded: Promise<void> | null = null;
  /** Every write of the journal, one after the other. */
  private chain: Promise<unknown> = Promise.resolve();

  /** `platform`: how file paths compare (without case on Windows: C:\\ws\\A.ts and c:\\ws\\a.ts are one file). */
  constructor(private readonly dir: string, private readonly log: (message: string) => void = () => undefined, private readonly platform: NodeJS.Platform = process.platform) {}

  /** What the loop of answer `chatId` records into; a failure to record is logged, never stops the agent. */
  recorder(chatId: string): CheckpointRecorder {
    return {
      changed: (stepId, change) => this.add(async () => {
        const before = change.before === null ? null : await this.putBlob(change.before);
        return { kind: 'change', seq: 0, chatId, stepId, path: change.path, abs: change.abs, before, after: change.after === null ? null : hashOf(change.after) };
      }),
      commandRan: (stepId, command, cwd) => this.add(async () => ({ kind: 'command', seq: 0, chatId, stepId, command, cwd })),
    };
  }

  /** The step ids of answer `chatId` that are checkpoints, in order. */
  async checkpoints(chatId: string): Promise<string[]> {
    await this.load();
    return [...new Set(this.entries.filter((e) => e.chatId === chatId).map((e) => e.stepId))];
  }

  /** What Restore to here would do (before anything changes): each file with its diff, conflicts, commands. */
  async plan(chatId: string, stepId: string, files: RestoreFiles): Promise<RestorePlanView> {
    const at = await this.pointOf(chatId, stepId);
    if (at < 0) return { chatId, stepId, files: [], commands: [], error: 'this step is not a checkpoint any more (it was restored past, or its record is gone)' };
    const refused = await this.refused(this.targets(at), files);
    if (refused) return { chatId, stepId, files: [], commands: [], error: refused };
    const out: RestoreFileView[] = [];
    for (const t of this.targets(at)) {
      const now = await files.readText(t.abs);
      const nowHash = now === null ? null : hashOf(now);
      if (nowHash === t.target) continue; // already as it was
      const target = t.target === null ? null : await this.getBlob(t.target);
      out.push({
        path: t.path,
        action: t.target === null ? 'delete' : now === null ? 'recreate' : 'write',
        diff: unifiedDiff(t.path, now, target ?? ''),
        conflict: nowHash !== t.expected,
      });
    }
    return { chatId, stepId, files: out, commands: this.later(at).filter((e): e is CommandEntry => e.kind === 'command').map((e) => e.command), error: null };
  }

  /**
   * Puts the files the agent changed after the checkpoint back as they were there; a conflicting
   * file is reported and left as it is. The checkpoints after this one are forgotten.
   */
  async restore(chatId: string, stepId: string, files: RestoreFiles): Promise<RestoreResultView> {
    const at = await this.pointOf(chatId, stepId);
    const result: RestoreResultView = { chatId, stepId, restored: [], conflicts: [], error: null };
    if (at < 0) return { ...result, error: 'this step is not a checkpoint any more (it was restored past, or its record is gone)' };
    // Checked again here: the links may have changed since the plan was shown.
    const refused = await this.refused(this.targets(at), files);
    if (refused) return { ...result, error: refused };
    for (const t of this.targets(at)) {
      const now = await files.readText(t.abs);
      const nowHash = now === null ? null : hashOf(now);
      if (nowHash === t.target) continue;
      if (nowHash !== t.expected) {
        result.conflicts.push({ path: t.path, reason: now === null ? 'deleted since the agent changed it' : 'changed since the agent changed it' });
        continue;
      }
      let problem: string | null;
      if (t.target === null) problem = await files.remove(t.abs);
      else {
        const text = await this.getBlob(t.target);
        problem = text === null ? 'its saved content is missing from the checkpoint store' : await files.apply({ path: t.path, abs: t.abs, before: now, after: text });
      }
      if (problem) result.conflicts.push({ path: t.path, reason: problem });
      else result.restored.push(t.path);
    }
    this.entries = this.entries.slice(0, at + 1);
    await this.save();
    return result;
  }

  /** Index of the checkpoint's last entry, or -1. */
  private async pointOf(chatId: string, stepId: string): Promise<number> {
    await this.load();
    await this.chain.catch(() => undefined);
    return this.entries.findLastIndex((e) => e.chatId === chatId && e.stepId === stepId);
  }

  /** Why the restore may not touch these files now (each refused one named), or null when it may. */
  private async refused(targets: FileTarget[], files: RestoreFiles): Promise<string | null> {
    const why: string[] = [];
    for (const t of targets) {
      try {
        const { abs } = await files.resolveForWrite(t.abs);
        // Another real path: a folder on the way became a link to elsewhere in the workspace.
        if (this.key(abs) !== this.key(t.abs)) why.push(`${t.path} now leads to ${abs} through a link`);
      } catch (err) {
        why.push(`${t.path}: ${(err as Error).message}`);
      }
    }
    return why.length ? `nothing was restored: ${why.join('; ')}` : null;
  }

  private key(abs: string): string {
    return this.platform === 'win32' ? abs.toLowerCase() : abs;
  }

  private later(at: number): Entry[] {
    return this.entries.slice(at + 1);
  }

  /** Per file changed after `at`: its content before the first such change, and after the last. */
  private targets(at: number): FileTarget[] {
    const byFile = new Map<string, FileTarget>();
    const key = (abs: string): string => this.key(abs);
    for (const e of this.later(at)) {
      if (e.kind !== 'change') continue;
      const t = byFile.get(key(e.abs));
      if (t) t.expected = e.after;
      else byFile.set(key(e.abs), { path: e.path, abs: e.abs, target: e.before, expected: e.after });
    }
    return [...byFile.values()].sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  }

  private add(make: () => Promise<Entry>): Promise<void> {
    const run = this.chain.then(async () => {
      await this.load();
      const e = await make();
      e.seq = ++this.seq;
      this.entries.push(e);
      if (this.entries.length > MAX_CHECKPOINTS) this.entries = this.entries.slice(-MAX_CHECKPOINTS);
      await this.save();
    }).catch((err: unknown) => this.log(`agent checkpoint not recorded: ${(err as Error).message}`));
    this.chain = run;
    return run;
  }

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      try {
        const parsed = JSON.parse(await readFile(join(this.dir, 'journal.json'), 'utf8')) as { entries?: Entry[] };
        this.entries = Array.isArray(parsed.entries) ? parsed.entries : [];
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log(`agent checkpoints unreadable, starting afresh: ${(err as Error).message}`);
        this.entries = [];
      }
      this.seq = this.entries.reduce((m, e) => Math.max(m, e.seq), 0);
    })();
    return this.loaded;
  }

  /** Writes the journal (whole, through a rename: a crash leaves the old one) and drops unused contents. */
  private async save(): Promise<void> {
    await mkdir(join(this.dir, 'blobs'), { recursive: true });
    const tmp = join(this.dir, 'journal.json.tmp');
    await writeFile(tmp, JSON.stringify({ version: 1, entries: this.entries }));
    await rename(tmp, join(this.dir, 'journal.json'));
    const used = new Set(this.entries.flatMap((e) => (e.kind === 'change' && e.before ? [e.before] : [])));
    for (const name of await readdir(join(this.dir, 'blobs'))) if (!used.has(name)) await rm(join(this.dir, 'blobs', name), { force: true });
  }

  private async putBlob(text: string): Promise<Hash> {
    const h = hashOf(text);
    await mkdir(join(this.dir, 'blobs'), { recursive: true });
    await writeFile(join(this.dir, 'blobs', h), text, { flag: 'w' });
    return h;
  }

  private async getBlob(h: Hash): Promise<string | null> {
    try { return await readFile(join(this.dir, 'blobs', h), 'utf8'); } catch { return null; }
  }
}
