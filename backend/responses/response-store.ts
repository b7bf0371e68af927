// Stored responses (store: true): each one's response object and its whole conversation (input
// items + output items), which previous_response_id continues from. One JSON file per response in
// the server's responses folder (0700), <id>.json, mode 0600, written to a temp file, synced and
// renamed (a crash leaves the old file or the new one, never half of one), so they survive a
// restart of the engine and of the server. Bounded by count and bytes, least recently used
// evicted first; one unused for the expiry is gone. Ids reaching the file system are checked
// against the one id form again here. A response's KV (<id>.session, written by the engine in the
// sessions' file format, responses/response-kv.ts) goes with its response and has its own byte
// bound (the least recently used response's KV file goes first, its response stays). A chain keeps
// one KV file: once a follow-up's is written, the one it continued goes (its tokens are the start
// of the follow-up's), and the earlier response's KV is the follow-up's file from then on (its
// <id>.session becomes a link to it, so a restart knows).
import { lstat, mkdir, open, readdir, readFile, readlink, rename, rm, symlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConversationItem, ResponseObject } from '../../contract/responses.js';
import { RESPONSE_ID } from '../validation/responses-schema.js';
import { processAlive } from '../../common/os/process.js';

export interface StoredResponse {
  response: ResponseObject;
  /** The conversation up to and with this response's output: what a follow-up renders before its own input. */
  items: ConversationItem[];
  /**
   * The model's own tokens: the prompt and the output ids, which a follow-up continues from
   * (continuation.ts), with the model they belong to (its session identity) and what the prompt
   * was rendered with (instructions, tools, template variables as JSON). Absent in older files.
   */
  tokens?: { ids: number[]; model: string; rendering: string };
}

export interface ResponseStoreLimits {
  /** Responses kept at most. */
  maxCount: number;
  /** Bytes of their files at most. */
  maxBytes: number;
  /** A response not used (stored, read, continued) this long expires. */
  ttlMs: number;
  /** Bytes of the responses' KV files at most (0: none kept). */
  maxKvBytes: number;
}

/** `bytes`: the JSON file's; `kv`: the KV file's (0: none). */
interface Entry { bytes: number; usedAt: number; kv: number }

/** How many follow-ups a KV lookup goes through (a chain's one file is its newest response's). */
const MAX_ALIAS_HOPS = 10_000;

const FILE = /^(resp_[A-Za-z0-9_-]{1,120})\.json$/;
const KV_FILE = /^(resp_[A-Za-z0-9_-]{1,120})\.session$/;
// Our temp files (the server's pid) and the engine's (its process's pid) of interrupted writes.
const TEMP = /^resp_[A-Za-z0-9_-]{1,120}\.(?:json|session)\.tmp-(\d+)-\d+$/;

export class ResponseStore {
  /** Every stored response, least recently used first (a Map keeps insertion order; a use re-inserts). */
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private kvBytes = 0;
  /** A response whose KV file went once a follow-up's was written -> that follow-up (on disk: <id>.session links to its file). */
  private readonly kvIn = new Map<string, string>();
  private ready: Promise<void> | null = null;
  /** File work runs one operation at a time, so a put, a read and a delete of one id never interleave. */
  private queue: Promise<unknown> = Promise.resolve();
  private tempSeq = 0;
  private readonly pending = new Map<string, Promise<void>>();

  constructor(readonly dir: string, private readonly limits: ResponseStoreLimits, private readonly now: () => number = Date.now) {}

  /** Stores a response (replacing one of its id). False when it alone is larger than the byte bound (nothing stored). */
  async put(record: StoredResponse): Promise<boolean> {
    const id = this.checked(record.response.id);
    return this.serial(async () => {
      const text = JSON.stringify(record);
      const size = Buffer.byteLength(text);
      if (size > this.limits.maxBytes) return false;
      const temp = join(this.dir, `${id}.json.tmp-${process.pid}-${this.tempSeq++}`);
      const fh = await open(temp, 'wx', 0o600);
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(temp, this.pathOf(id));
      this.forget(id);
      this.entries.set(id, { bytes: size, usedAt: this.now(), kv: 0 });
      this.bytes += size;
      await this.evict();
      return true;
    });
  }

  /** A stored response (its use counts for the LRU order and the expiry), or null: unknown, expired or unreadable. */
  get(id: string): Promise<StoredResponse | null> {
    if (!RESPONSE_ID.test(id)) return Promise.resolve(null);
    return this.serial(async () => {
      const e = this.entries.get(id);
      if (!e) return null;
      if (this.expired(e)) { await this.remove(id); return null; }
      let record: StoredResponse;
      try {
        record = JSON.parse(await readFile(this.pathOf(id), 'utf8')) as StoredResponse;
      } catch {
        await this.remove(id);
        return null;
      }
      const usedAt = this.now();
      this.entries.delete(id);
      this.entries.set(id, { ...e, usedAt });
      // The file's time is the last use, so the LRU order and the expiry survive a restart.
      await utimes(this.pathOf(id), usedAt / 1000, usedAt / 1000).catch(() => {});
      return record;
    });
  }

  /** Deletes a stored response; false when there was none. */
  delete(id: string): Promise<boolean> {
    if (!RESPONSE_ID.test(id)) return Promise.resolve(false);
    return this.serial(async () => {
      const e = this.entries.get(id);
      if (!e) return false;
      const live = !this.expired(e);
      await this.remove(id);
      return live;
    });
  }

  /** Where a response's KV file goes (the engine writes it: sessions/session-store.ts's format). */
  kvPath(id: string): string { return join(this.dir, `${this.checked(id)}.session`); }

  /** Whether KV files are kept at all (--responses-kv-mib above 0). */
  get keepsKv(): boolean { return this.limits.maxKvBytes > 0; }

  /** The file holding the response's KV (its own, or that of the follow-up that continued it), or null. */
  kvOf(id: string): Promise<string | null> {
    if (!RESPONSE_ID.test(id)) return Promise.resolve(null);
    return this.serial(async () => {
      const holder = this.holderOf(id);
      return holder === null ? null : this.kvPath(holder);
    });
  }

  /** The response whose KV file holds `id`'s KV: itself, or the follow-up its link leads to; null when none. */
  private holderOf(id: string): string | null {
    let at: string | undefined = id;
    for (let hop = 0; at !== undefined && hop < MAX_ALIAS_HOPS; hop++) {
      if ((this.entries.get(at)?.kv ?? 0) > 0) return at;
      at = this.kvIn.get(at);
    }
    return null;
  }

  /**
   * The engine wrote the response's KV file (`bytes`): it counts toward the KV bound from now, and
   * the file of the response it continued (`previous`), whose tokens start its own, goes. The file
   * is removed instead when its response is gone meanwhile or it alone would not fit.
   */
  attachKv(id: string, bytes: number, previous: string | null = null): Promise<boolean> {
    return this.serial(async () => {
      const e = this.entries.get(id);
      if (!e || bytes > this.limits.maxKvBytes) {
        await this.dropKv(id);
        return false;
      }
      this.kvBytes += bytes - e.kv;
      e.kv = bytes;
      if (previous !== null && previous !== id && this.entries.has(previous)) await this.linkKv(previous, id);
      await this.evict();
      return e.kv > 0;
    });
  }

  /** Work on a response's files that must finish before the server stops (a KV save). */
  track(id: string, work: Promise<unknown>): void {
    const p: Promise<void> = work.then(() => {}, () => {}).finally(() => { if (this.pending.get(id) === p) this.pending.delete(id); });
    this.pending.set(id, p);
  }

  /** Waits for the tracked work on one response (a continuation waits for its KV file). */
  async settled(id: string): Promise<void> { await this.pending.get(id); }

  /** Waits for all tracked work (at shutdown, so a stopped server leaves whole KV files). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending.values()]);
  }

  /** How many responses are stored, their bytes and their KV files' (expired ones not yet swept included). */
  size(): { count: number; bytes: number; kvBytes: number } {
    return { count: this.entries.size, bytes: this.bytes, kvBytes: this.kvBytes };
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => this.load()).then(op);
    this.queue = run.catch(() => {});
    return run;
  }

  /** Reads the folder once: the files there, ordered by their last use; leftovers of interrupted writes removed. */
  private load(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const found: Array<[string, Entry]> = [];
      const kvFiles = new Map<string, number>();
      const links = new Map<string, string>();
      for (const name of await readdir(this.dir)) {
        const temp = TEMP.exec(name);
        if (temp) {
          if (Number(temp[1]) === process.pid || !(await processAlive(Number(temp[1])))) await rm(join(this.dir, name), { force: true });
          continue;
        }
        const kv = KV_FILE.exec(name);
        const m = FILE.exec(name);
        if (!m && !kv) continue;
        const st = await lstat(join(this.dir, name)).catch(() => null);
        if (kv && st?.isSymbolicLink()) {
          // An earlier response's link to the file of the follow-up that continued it.
          const to = KV_FILE.exec(await readlink(join(this.dir, name)).catch(() => ''));
          if (to) links.set(kv[1]!, to[1]!);
          else await rm(join(this.dir, name), { force: true });
          continue;
        }
        if (!st?.isFile()) continue;
        if (kv) kvFiles.set(kv[1]!, st.size);
        else found.push([m![1]!, { bytes: st.size, usedAt: st.mtimeMs, kv: 0 }]);
      }
      found.sort((a, b) => a[1].usedAt - b[1].usedAt);
      for (const [id, e] of found) {
        e.kv = kvFiles.get(id) ?? 0;
        kvFiles.delete(id);
        this.entries.set(id, e);
        this.bytes += e.bytes;
        this.kvBytes += e.kv;
      }
      // KV files and links whose response is gone.
      for (const id of kvFiles.keys()) await rm(this.kvPath(id), { force: true });
      for (const [id, to] of links) if (this.entries.has(id)) this.kvIn.set(id, to);
      for (const id of links.keys()) {
        if (!this.kvIn.has(id) || this.holderOf(id) === null) { this.kvIn.delete(id); await rm(this.kvPath(id), { force: true }); }
      }
      await this.evict();
    })();
    return this.ready;
  }

  private expired(e: Entry): boolean { return this.now() - e.usedAt > this.limits.ttlMs; }

  /** Drops expired responses, then the least recently used while over a bound. */
  private async evict(): Promise<void> {
    for (const [id, e] of [...this.entries]) if (this.expired(e)) await this.remove(id);
    while (this.entries.size > this.limits.maxCount || this.bytes > this.limits.maxBytes) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      await this.remove(oldest);
    }
    // KV files over their bound: the least recently used response's goes, the response stays.
    for (const id of this.entries.keys()) {
      if (this.kvBytes <= this.limits.maxKvBytes) break;
      await this.dropKv(id);
    }
  }

  /** `id`'s KV file becomes a link to `to`'s, in one step (a reader sees the old file or the link, never neither). */
  private async linkKv(id: string, to: string): Promise<void> {
    const e = this.entries.get(id);
    if (e) { this.kvBytes -= e.kv; e.kv = 0; }
    this.kvIn.set(id, to);
    const temp = join(this.dir, `${id}.session.tmp-${process.pid}-${this.tempSeq++}`);
    try {
      await symlink(`${to}.session`, temp);
      await rename(temp, this.kvPath(id));
    } catch {
      await rm(temp, { force: true });
      await rm(this.kvPath(id), { force: true });
    }
  }

  private async dropKv(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (e) { this.kvBytes -= e.kv; e.kv = 0; }
    await rm(this.kvPath(id), { force: true });
  }

  private async remove(id: string): Promise<void> {
    this.forget(id);
    await rm(this.pathOf(id), { force: true });
    await rm(this.kvPath(id), { force: true });
  }

  private forget(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.bytes -= e.bytes;
    this.kvBytes -= e.kv;
    this.entries.delete(id);
    this.kvIn.delete(id);
  }

  private checked(id: string): string {
    if (!RESPONSE_ID.test(id)) throw new Error(`not a response id: ${JSON.stringify(id)}`);
    return id;
  }

  private pathOf(id: string): string { return join(this.dir, `${this.checked(id)}.json`); }
}
