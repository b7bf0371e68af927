// Saved sessions on disk: <dir>/<name>.session (the engine writes the KV state, tokens,
// model identity and checksum, mode 0600) and <name>.json beside it, the sidecar the server
// lists and checks before asking an engine (model identity, tokens, bytes, created).
// The folder is 0700 and every file 0600; names reaching this layer are already sanitised,
// and anything that could leave the folder is refused again here.
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface SessionModel {
  /** What the engine checks: sessions only load into the same model and KV layout. */
  identity: string;
  /** For people: the model's name and file. */
  name: string;
  file: string;
}

export interface SessionMeta {
  name: string;
  model: SessionModel;
  tokens: number;
  bytes: number;
  /** ISO time of the save. */
  created: string;
  /** Messages the session was saved from. */
  messages: number;
  save_ms: number;
}

// No separators, no leading dot: the name cannot leave the folder or hide a file.
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export class SessionStore {
  constructor(readonly dir: string) {}

  static isSafeName(name: string): boolean {
    return SAFE_NAME.test(name);
  }

  statePath(name: string): string { return join(this.dir, `${this.checked(name)}.session`); }
  metaPath(name: string): string { return join(this.dir, `${this.checked(name)}.json`); }

  async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  async list(): Promise<SessionMeta[]> {
    let names: string[];
    try { names = await readdir(this.dir); } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: SessionMeta[] = [];
    for (const f of names.sort()) {
      if (!f.endsWith('.json')) continue;
      const name = f.slice(0, -5);
      if (!SessionStore.isSafeName(name)) continue;
      const meta = await this.get(name).catch(() => null);
      if (meta) out.push(meta);
    }
    return out;
  }

  /** The sidecar, or null when there is no such session (both files are needed). */
  async get(name: string): Promise<SessionMeta | null> {
    let text: string;
    try {
      text = await readFile(this.metaPath(name), 'utf8');
      await stat(this.statePath(name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    const meta = JSON.parse(text) as SessionMeta;
    if (typeof meta?.model?.identity !== 'string' || typeof meta.tokens !== 'number') {
      throw new Error(`session '${name}' has a damaged description file (${this.metaPath(name)})`);
    }
    return { ...meta, name };
  }

  /** Writes the sidecar atomically, mode 0600; also makes sure the state file is 0600. */
  async writeMeta(meta: SessionMeta): Promise<void> {
    const path = this.metaPath(meta.name);
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, path);
    await chmod(this.statePath(meta.name), 0o600).catch(() => {});
  }

  /** Removes both files. Returns false when there was no such session. */
  async remove(name: string): Promise<boolean> {
    const existed = (await this.get(name).catch(() => null)) !== null;
    await rm(this.metaPath(name), { force: true });
    await rm(this.statePath(name), { force: true });
    return existed;
  }

  private checked(name: string): string {
    if (!SessionStore.isSafeName(name)) throw new Error(`unsafe session name '${name}'`);
    return name;
  }
}
