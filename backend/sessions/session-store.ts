// Saved sessions on disk: <dir>/<name>.session, one file the engine writes (mode 0600, temp
// file + fsync + rename, so a save is one atomic step): the server's description of the
// session (model, time, the chat messages), then the engine's model identity, tokens, KV state
// and checksum (native/src/session_file.h). This module reads the description part without
// touching the state. Files of format 1 (before the description moved inside) kept it in a
// <name>.json sidecar; they are still read.
// The folder is 0700 (on Windows modes mean nothing: the folder is private by where it is, under
// the user's profile, whose access list admits only that user, administrators and the system); names reaching this layer are already sanitised, and anything that
// could leave the folder is refused again here.
import { mkdir, open, readdir, readFile, rm, stat, type FileHandle } from 'node:fs/promises';
import nodePath from 'node:path';
import { processAlive } from '../../common/os/process.js';
import { sessionNameProblem } from '../../contract/session-name.js';
import type { SessionDescription, SessionMeta, SessionModel } from '../../contract/sessions.js';
import type { ChatMessage } from '../chat/chat-types.js';

/** The session exists but its file or description cannot be read (the API answers 422). */
export class SessionUnreadableError extends Error {}

export interface SweepResult {
  /** Temp files of saves whose process is gone, and sidecars that describe no state. */
  removed: string[];
  /** Format-1 state files without their sidecar: still listed and restorable, described from the file alone. */
  orphans: string[];
}

const MAGIC = 'STRATASN';
// Leftovers of interrupted saves: the engine's NAME.session.tmp-PID-N, format 1's NAME.json.PID.tmp.
const TEMP_FILE = /^(.+)\.(?:session\.tmp-(\d+)-\d+|json\.(\d+)\.tmp)$/;

/** Reads exact byte ranges of a file, failing as "damaged" past its end. */
class HeadReader {
  constructor(private readonly fh: FileHandle, readonly size: number, private readonly what: string) {}

  async bytes(offset: number, n: number): Promise<Buffer> {
    if (offset + n > this.size) throw new SessionUnreadableError(`${this.what} is damaged (truncated)`);
    const buf = Buffer.alloc(n);
    const { bytesRead } = await this.fh.read(buf, 0, n, offset);
    if (bytesRead !== n) throw new SessionUnreadableError(`${this.what} is damaged (truncated)`);
    return buf;
  }

  async u32(offset: number): Promise<number> { return (await this.bytes(offset, 4)).readUInt32LE(0); }
}

/**
 * A format-2 file's model identity and tokens, read without its state; SessionUnreadableError
 * when it is not one or is shorter than its head says (a truncated write or copy). The state's
 * checksum is the engine's to check when it loads the file.
 */
export async function readSessionHead(path: string): Promise<{ identity: string; tokens: Int32Array; bytes: number }> {
  const fh = await open(path, 'r');
  try {
    const st = await fh.stat();
    const r = new HeadReader(fh, st.size, path);
    if (st.size < 12 || (await r.bytes(0, 8)).toString('latin1') !== MAGIC || (await r.u32(8)) !== 2) {
      throw new SessionUnreadableError(`${path} is not a Strata session file of format 2`);
    }
    let at = 12;
    at += 4 + (await r.u32(at));
    const idLen = await r.u32(at);
    const identity = (await r.bytes(at + 4, idLen)).toString('utf8');
    at += 4 + idLen;
    at += 4 + (await r.u32(at)) + 8 + 4;
    const n = await r.u32(at);
    const raw = await r.bytes(at + 4, n * 4);
    const tokens = new Int32Array(n);
    for (let i = 0; i < n; i++) tokens[i] = raw.readInt32LE(i * 4);
    at += 4 + n * 4;
    const state = (await r.bytes(at, 8)).readBigUInt64LE(0);
    // The state and the checksum after it: a file cut short is refused here, before any engine maps it.
    if (BigInt(at) + 8n + state + 8n !== BigInt(st.size)) throw new SessionUnreadableError(`${path} is damaged (its length is not what its head says)`);
    return { identity, tokens, bytes: st.size };
  } finally {
    await fh.close();
  }
}

export class SessionStore {
  /**
   * `path`: the path module the file names are built with (default: this platform's), so that the
   * Windows forms (drive letters, backslashes) are unit-tested anywhere; `platform` the same for
   * how a save's leftover is judged abandoned (common/os/process.ts).
   */
  constructor(readonly dir: string, private readonly path: nodePath.PlatformPath = nodePath, private readonly platform: NodeJS.Platform = process.platform) {}

  /** The one session-name rule (contract/session-name.ts): no separators, no leading dot. */
  static isSafeName(name: string): boolean {
    return sessionNameProblem(name) === null;
  }

  statePath(name: string): string { return this.path.join(this.dir, `${this.checked(name)}.session`); }
  /** Format 1's sidecar (read and removed, never written). */
  legacyMetaPath(name: string): string { return this.path.join(this.dir, `${this.checked(name)}.json`); }

  async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Every session, by name; one that cannot be read is listed with its `error` (it can still be deleted). */
  async list(): Promise<Array<SessionMeta | { name: string; error: string }>> {
    const out: Array<SessionMeta | { name: string; error: string }> = [];
    for (const name of await this.names()) {
      try {
        const meta = await this.get(name);
        if (meta) out.push(meta);
      } catch (e) {
        if (!(e instanceof SessionUnreadableError)) throw e;
        out.push({ name, error: e.message });
      }
    }
    return out;
  }

  /** The session's description, or null when there is none; SessionUnreadableError when it is damaged. */
  async get(name: string): Promise<SessionMeta | null> {
    const path = this.statePath(name);
    let fh: FileHandle;
    try { fh = await open(path, 'r'); } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    try {
      const st = await fh.stat();
      const r = new HeadReader(fh, st.size, `session '${name}' (${path})`);
      if (st.size < 12 || (await r.bytes(0, 8)).toString('latin1') !== MAGIC) {
        throw new SessionUnreadableError(`session '${name}' (${path}) is not a Strata session file`);
      }
      const version = await r.u32(8);
      if (version !== 1 && version !== 2) {
        throw new SessionUnreadableError(`session '${name}' (${path}) has unsupported format ${version}`);
      }
      let at = 12;
      let description: SessionDescription | null = null;
      if (version === 2) {
        const n = await r.u32(at);
        description = this.parseDescription(name, (await r.bytes(at + 4, n)).toString('utf8'), `${path}, description`);
        at += 4 + n;
      }
      // The engine's identity, model description, n_params, n_vocab, then the token count.
      const idLen = await r.u32(at);
      const identity = (await r.bytes(at + 4, idLen)).toString('utf8');
      at += 4 + idLen;
      at += 4 + (await r.u32(at)) + 8 + 4;
      const tokens = await r.u32(at);
      description ??= await this.legacyDescription(name, identity, st.mtime);
      return {
        name, model: { ...description.model, identity }, tokens, bytes: st.size, created: description.created,
        messages: description.messages, message_count: description.messages?.length ?? 0, format: version,
      };
    } finally {
      await fh.close();
    }
  }

  /**
   * The description a save stores in the file. Files of earlier versions may carry more keys (a
   * `held_text` record of the tokens the model sampled): they are read and ignored.
   */
  static describe(model: SessionModel, messages: ChatMessage[] | null, created = new Date()): string {
    const d: SessionDescription = { model, created: created.toISOString(), messages };
    return JSON.stringify(d);
  }

  /**
   * Clears what interrupted saves left: temp files of processes that are gone, and format-1
   * sidecars without a state file. Run at start, before any save of this server.
   */
  async sweep(): Promise<SweepResult> {
    let files: string[];
    try { files = await readdir(this.dir); } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { removed: [], orphans: [] };
      throw e;
    }
    const present = new Set(files);
    const removed: string[] = [];
    const orphans: string[] = [];
    for (const f of files.sort()) {
      const temp = TEMP_FILE.exec(f);
      if (temp) {
        if (!(await processAlive(Number(temp[2] ?? temp[3]), this.platform))) { await rm(this.path.join(this.dir, f), { force: true }); removed.push(f); }
        continue;
      }
      const name = f.endsWith('.json') ? f.slice(0, -5) : f.endsWith('.session') ? f.slice(0, -8) : null;
      if (name === null || !SessionStore.isSafeName(name)) continue;
      if (f.endsWith('.json') && !present.has(`${name}.session`)) {
        await rm(this.path.join(this.dir, f), { force: true });
        removed.push(f);
      } else if (f.endsWith('.session') && !present.has(`${name}.json`) && (await this.formatOf(name)) === 1) {
        orphans.push(f);
      }
    }
    return { removed, orphans };
  }

  /** Removes the session. Returns false when there was no such session. */
  async remove(name: string): Promise<boolean> {
    const existed = await stat(this.statePath(name)).then(() => true, () => false);
    await rm(this.statePath(name), { force: true });
    await rm(this.legacyMetaPath(name), { force: true });
    return existed;
  }

  /** Whether a format-1 sidecar (NAME.json) is there. */
  async hasLegacyMeta(name: string): Promise<boolean> {
    return stat(this.legacyMetaPath(name)).then(() => true, () => false);
  }

  /** After a save: a format-1 sidecar of the same name no longer describes anything. */
  async dropLegacyMeta(name: string): Promise<void> {
    await rm(this.legacyMetaPath(name), { force: true });
  }

  /** The description from its JSON; SessionUnreadableError when it is not one. */
  parseDescription(name: string, text: string, where: string): SessionDescription {
    let d: unknown;
    try { d = JSON.parse(text); } catch {
      throw new SessionUnreadableError(`session '${name}' has a damaged description (${where} is not JSON)`);
    }
    const o = d as Partial<SessionDescription> | null;
    if (o === null || typeof o !== 'object' || Array.isArray(o) || typeof o.model !== 'object' || o.model === null) {
      throw new SessionUnreadableError(`session '${name}' has a damaged description (${where} is ${o === null ? 'null' : 'not a session description'})`);
    }
    const model = o.model as Partial<SessionModel>;
    return {
      model: { identity: String(model.identity ?? ''), name: String(model.name ?? ''), file: String(model.file ?? '') },
      created: typeof o.created === 'string' ? o.created : '',
      messages: Array.isArray(o.messages) ? o.messages : null,
    };
  }

  private async names(): Promise<string[]> {
    let files: string[];
    try { files = await readdir(this.dir); } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    return files.filter((f) => f.endsWith('.session')).map((f) => f.slice(0, -8)).filter((n) => SessionStore.isSafeName(n)).sort();
  }

  /** Format 1: the sidecar; without one, what the state file itself says. */
  private async legacyDescription(name: string, identity: string, mtime: Date): Promise<SessionDescription> {
    const path = this.legacyMetaPath(name);
    let text: string;
    try { text = await readFile(path, 'utf8'); } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return { model: { identity, name: '', file: '' }, created: mtime.toISOString(), messages: null };
    }
    // Format 1 kept only the number of messages, not the messages.
    return { ...this.parseDescription(name, text, path), messages: null };
  }

  private async formatOf(name: string): Promise<number | null> {
    try {
      const fh = await open(this.statePath(name), 'r');
      try {
        const buf = Buffer.alloc(12);
        const { bytesRead } = await fh.read(buf, 0, 12, 0);
        return bytesRead === 12 && buf.subarray(0, 8).toString('latin1') === MAGIC ? buf.readUInt32LE(8) : null;
      } finally {
        await fh.close();
      }
    } catch {
      return null;
    }
  }

  private checked(name: string): string {
    if (!SessionStore.isSafeName(name)) throw new Error(`unsafe session name '${name}'`);
    return name;
  }
}
