// The prefix cache's folder: KV files of long prompts (a coding agent's system prompt and tools
// come first in every session), so a new session after a restart reads only what follows them.
// Each file is a session file the engine wrote (sessions/session-store.ts's format: the model
// identity, the tokens, the KV, a checksum; mode 0600 in a 0700 folder). Its name is
// <first>-<id>.session: <first> a hash of the model identity and the prompt's first FIRST_BLOCK
// tokens, so a lookup reads the heads (identity and tokens) only of files that can share at least
// that much, and keeps them in memory; <id> a hash of the whole prompt. Bounded in bytes, the least
// recently used file going first (a file's time is its last use, so the order survives a restart).
// A file that cannot be used here (its head damaged, another model's) is removed.
import { createHash } from 'node:crypto';
import { mkdir, readdir, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from '../../common/os/process.js';
import type { Logger } from '../log/logger.js';
import { readSessionHead } from '../sessions/session-store.js';

/** Tokens hashed into a file name's first part: a candidate shares at least these. */
export const FIRST_BLOCK = 256;

const FILE = /^([0-9a-f]{16})-[0-9a-f]{16}\.session$/;
// The engine's temp files of interrupted writes (PATH.tmp-PID-N).
const TEMP = /^[0-9a-f]{16}-[0-9a-f]{16}\.session\.tmp-(\d+)-\d+$/;

interface Entry {
  bytes: number;
  usedAt: number;
  first: string;
  /** Read on the first lookup that needs it. */
  head: { identity: string; tokens: Int32Array } | null;
}

export interface PrefixMatch {
  name: string;
  path: string;
  /** Tokens the file shares with the prompt from its start. */
  common: number;
}

export function commonPrefix(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function hash16(identity: string, tokens: ArrayLike<number>, n: number): string {
  const ids = Int32Array.from({ length: n }, (_, i) => tokens[i]!);
  return createHash('sha256').update(identity).update('\0').update(Buffer.from(ids.buffer)).digest('hex').slice(0, 16);
}

export class PrefixStore {
  /** Every file, least recently used first (a Map keeps insertion order; a use re-inserts). */
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private ready: Promise<void> | null = null;
  /** Folder work runs one operation at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly pending = new Set<Promise<void>>();
  private readonly warned = new Set<string>();
  /** Saves of one first block run one after another, so the second sees what the first wrote. */
  readonly saving = new Map<string, Promise<void>>();
  /** Loads of one file in progress: a request arriving meanwhile waits for it instead of loading it again. */
  readonly loading = new Map<string, Promise<void>>();

  /** `maxBytes` 0: the cache is off (nothing read, written or removed). */
  constructor(readonly dir: string, readonly maxBytes: number, private readonly log: Logger, private readonly now: () => number = Date.now) {}

  get enabled(): boolean { return this.maxBytes > 0; }

  /** The name of a prompt's first part (null when it is shorter than FIRST_BLOCK). */
  static firstKey(identity: string, tokens: ArrayLike<number>): string | null {
    return tokens.length < FIRST_BLOCK ? null : hash16(identity, tokens, FIRST_BLOCK);
  }

  /** The file a prompt of FIRST_BLOCK tokens or more is saved to; the folder exists once this resolves. */
  target(identity: string, tokens: ArrayLike<number>): Promise<{ name: string; path: string }> {
    const first = PrefixStore.firstKey(identity, tokens);
    if (first === null) throw new RangeError(`a cached prefix needs ${FIRST_BLOCK} tokens or more`);
    const name = `${first}-${hash16(identity, tokens, tokens.length)}.session`;
    return this.serial(async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      return { name, path: join(this.dir, name) };
    });
  }

  /**
   * The file of this model sharing the longest prefix with `tokens` (at least FIRST_BLOCK tokens),
   * or null; `exact`: only a file all of whose tokens `tokens` starts with (a recurrent model's KV,
   * which cannot be cut back). Files whose head cannot be read, or that hold another model's KV, are removed.
   */
  best(identity: string, tokens: ArrayLike<number>, exact = false): Promise<PrefixMatch | null> {
    const first = PrefixStore.firstKey(identity, tokens);
    if (first === null || !this.enabled) return Promise.resolve(null);
    return this.serial(async () => {
      let best: PrefixMatch | null = null;
      for (const [name, e] of [...this.entries]) {
        if (e.first !== first || !(await this.readHead(name, e, identity))) continue;
        const common = commonPrefix(e.head!.tokens, tokens);
        if (exact && common < e.head!.tokens.length) continue;
        if (common >= FIRST_BLOCK && (!best || common > best.common)) best = { name, path: join(this.dir, name), common };
      }
      return best;
    });
  }

  /**
   * The engine wrote `name` from the conversation holding the longest prefix of `prompt`: it is kept
   * when it shares at least `minCommon` tokens with the prompt and fits the bound; files it covers
   * (it shares `cover` of their tokens or more; null: none, each file serves its own prompts) go.
   * Returns the tokens it shares (0: not kept).
   */
  added(name: string, identity: string, prompt: ArrayLike<number>, minCommon: number, cover: number | null): Promise<number> {
    return this.serial(async () => {
      const m = FILE.exec(name);
      if (!m) throw new Error(`not a prefix cache file name: ${name}`);
      this.forget(name);
      const path = join(this.dir, name);
      let head: Awaited<ReturnType<typeof readSessionHead>>;
      try {
        head = await readSessionHead(path);
      } catch (e) {
        this.warnOnce(`written:${(e as Error).message}`, 'prefix cache: a file just written cannot be read; removed', { file: name, error: (e as Error).message });
        await rm(path, { force: true });
        return 0;
      }
      const common = commonPrefix(head.tokens, prompt);
      if (head.identity !== identity || common < minCommon || head.bytes > this.maxBytes) {
        await rm(path, { force: true });
        return 0;
      }
      const e: Entry = { bytes: head.bytes, usedAt: this.now(), first: m[1]!, head: { identity, tokens: head.tokens } };
      for (const [other, o] of cover === null ? [] : [...this.entries]) {
        if (o.first !== e.first || !(await this.readHead(other, o, identity))) continue;
        if (commonPrefix(o.head!.tokens, head.tokens) >= cover! * o.head!.tokens.length) await this.remove(other);
      }
      this.entries.set(name, e);
      this.bytes += e.bytes;
      await utimes(path, e.usedAt / 1000, e.usedAt / 1000).catch(() => {});
      await this.evict();
      return this.entries.has(name) ? common : 0;
    });
  }

  /** A file was loaded or found to cover a prompt: it becomes the most recently used. */
  used(name: string): Promise<void> {
    return this.serial(async () => {
      const e = this.entries.get(name);
      if (!e) return;
      e.usedAt = this.now();
      this.entries.delete(name);
      this.entries.set(name, e);
      await utimes(join(this.dir, name), e.usedAt / 1000, e.usedAt / 1000).catch(() => {});
    });
  }

  /** Removes a file an engine refused (damaged, another model's). */
  drop(name: string): Promise<void> {
    return this.serial(() => this.remove(name));
  }

  /** Background work on the folder (a save) that must finish before the server stops. */
  track(work: Promise<unknown>): void {
    const p: Promise<void> = work.then(() => {}, () => {}).finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Waits for all tracked work (at shutdown, so a stopped server leaves whole files; tests wait for a save). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** True the first time a key is seen: a failure that repeats is logged once. */
  firstTime(key: string): boolean {
    if (this.warned.has(key)) return false;
    this.warned.add(key);
    return true;
  }

  /** Files and their bytes (the folder as this server knows it). */
  size(): { count: number; bytes: number } { return { count: this.entries.size, bytes: this.bytes }; }

  private warnOnce(key: string, message: string, fields: Record<string, string | number>): void {
    if (this.firstTime(key)) this.log.warn(message, fields);
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => this.load()).then(op);
    this.queue = run.catch(() => {});
    return run;
  }

  /** Reads the folder once (made by the first save): its files by last use; leftovers of interrupted writes removed. */
  private load(): Promise<void> {
    this.ready ??= (async () => {
      const found: Array<[string, Entry]> = [];
      const names = await readdir(this.dir).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') return [] as string[];
        throw e;
      });
      for (const name of names) {
        const temp = TEMP.exec(name);
        if (temp) {
          if (!(await processAlive(Number(temp[1])))) await rm(join(this.dir, name), { force: true });
          continue;
        }
        const m = FILE.exec(name);
        if (!m) continue;
        const st = await stat(join(this.dir, name)).catch(() => null);
        if (st?.isFile()) found.push([name, { bytes: st.size, usedAt: st.mtimeMs, first: m[1]!, head: null }]);
      }
      found.sort((a, b) => a[1].usedAt - b[1].usedAt);
      for (const [name, e] of found) {
        this.entries.set(name, e);
        this.bytes += e.bytes;
      }
      await this.evict();
    })();
    return this.ready;
  }

  /** The entry's head, read once; false (and the file removed) when it cannot be used by this model. */
  private async readHead(name: string, e: Entry, identity: string): Promise<boolean> {
    if (!e.head) {
      try {
        const h = await readSessionHead(join(this.dir, name));
        e.head = { identity: h.identity, tokens: h.tokens };
      } catch (err) {
        this.warnOnce(`head:${name}`, 'prefix cache: a file cannot be read; removed', { file: name, error: (err as Error).message });
        await this.remove(name);
        return false;
      }
    }
    // The name's hash covers the identity: another model's file here was not written by this cache.
    if (e.head.identity !== identity) {
      this.warnOnce(`identity:${name}`, 'prefix cache: a file holds another model\'s KV under this model\'s name; removed', { file: name });
      await this.remove(name);
      return false;
    }
    return true;
  }

  /** The least recently used files go while over the bound. */
  private async evict(): Promise<void> {
    while (this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      await this.remove(oldest);
    }
  }

  private async remove(name: string): Promise<void> {
    this.forget(name);
    await rm(join(this.dir, name), { force: true });
  }

  private forget(name: string): void {
    const e = this.entries.get(name);
    if (!e) return;
    this.bytes -= e.bytes;
    this.entries.delete(name);
  }
}
