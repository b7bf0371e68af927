// The index on disk: one SQLite database (node-sqlite3-wasm: SQLite 3.53 compiled to WebAssembly
// with a Node file-system VFS, so it loads in Electron's Node, Node 24 and any x86-64 Linux, and
// ships as one 1.3 MB .wasm). Files, chunks with an FTS5 index (BM25), and one vector per chunk
// text (keyed by its hash: duplicates and renamed files keep theirs). Every change is one
// transaction with a rollback journal and synchronous=FULL: a crash mid-write leaves the last
// committed state, which SQLite restores on the next open. The wasm VFS locks with a
// `<file>.lock` folder, which a killed process leaves behind; the store records its owner's pid
// beside it and clears a lock whose owner is gone (one extension host owns a workspace's index).
// The chunking worker (chunk-worker.ts) writes through a second connection of the same process
// (attach()); that VFS's lock is one folder whatever the lock level, so a connection that finds
// the other mid-transaction waits for it (waitBusy) instead of failing.
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Database, type Statement } from 'node-sqlite3-wasm';
import { processExists } from '../../common/os/process.js';

/** Bump when the schema changes: an older index is dropped and rebuilt. */
export const SCHEMA_VERSION = 1;

export interface FileRow { path: string; size: number; mtimeMs: number; hash: string }

export interface NewChunk { startLine: number; endLine: number; text: string; hash: string; kind: 'syntax' | 'window' }

export interface ChunkRow { id: number; path: string; startLine: number; endLine: number; hash: string; text: string }

export interface StoreStats { files: number; chunks: number; vectors: number; missingVectors: number; bytes: number }

/** identifiers split for full-text search: llama_decode -> "llama decode", loadModel -> "load model". */
export function identifierWords(text: string): string {
  const out: string[] = [];
  for (const m of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const id = m[0];
    if (!/[_]|[a-z][A-Z]/.test(id)) continue;
    const parts = id.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[_\s]+/).filter((p) => p.length > 1);
    if (parts.length > 1) out.push(parts.join(' ').toLowerCase());
  }
  return out.join(' ');
}

type Row = Record<string, unknown>;

/** The longest a statement waits for the other connection's transaction (the worker's: ~100 ms), ms. */
const BUSY_WAIT_MS = 10_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Runs `f` again while SQLite answers "database is locked" (the other connection holds the lock). */
function waitBusy<T>(f: () => T): T {
  const until = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    try {
      return f();
    } catch (e) {
      if (!/database is locked/.test((e as Error)?.message ?? '') || Date.now() > until) throw e;
      Atomics.wait(sleeper, 0, 0, 2);
    }
  }
}

export class IndexStore {
  private readonly db: Database;
  private readonly stmts = new Map<string, Statement>();

  private constructor(readonly path: string, private readonly owner = true) {
    this.db = new Database(path);
  }

  /**
   * A second connection of this process to a store open() opened (the chunking worker): no
   * ownership claimed or released, no schema work.
   */
  static attach(path: string): IndexStore {
    const s = new IndexStore(path, false);
    try {
      waitBusy(() => s.db.exec('PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;'));
    } catch (e) {
      s.close();
      throw e;
    }
    return s;
  }

  /**
   * Opens (or creates) the index; a database of another schema version is emptied first. Throws
   * when a live process (another window) has it open.
   */
  static open(path: string): IndexStore {
    claimOwnership(path);
    let s: IndexStore;
    try {
      s = new IndexStore(path);
    } catch (e) {
      releaseOwnership(path);
      throw e;
    }
    try {
      s.init();
    } catch (e) {
      s.close();
      throw e;
    }
    return s;
  }

  private init(): void {
    this.db.exec('PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;');
    this.db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    const version = this.meta('schema');
    if (version !== null && Number(version) !== SCHEMA_VERSION) {
      this.db.exec('DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS vectors; DROP TABLE IF EXISTS fts; DELETE FROM meta;');
    }
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL, hash TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS chunks (
        id INTEGER PRIMARY KEY, path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
        start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL, kind TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
      CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash);
      CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vec BLOB NOT NULL);
      CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(text, words, tokenize="unicode61 tokenchars '_'");
    `);
    this.setMeta('schema', String(SCHEMA_VERSION));
  }

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  private all(sql: string, values: unknown[] = []): Row[] {
    return waitBusy(() => this.stmt(sql).all(values as never) as Row[]);
  }

  /** Runs `f` in one transaction: all of it lands, or (an exception, a crash) none of it. */
  transaction<T>(f: () => T): T {
    waitBusy(() => this.db.exec('BEGIN IMMEDIATE'));
    try {
      const r = f();
      this.db.exec('COMMIT');
      return r;
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
  }

  meta(key: string): string | null {
    const r = this.all('SELECT value FROM meta WHERE key = ?', [key])[0];
    return r ? String(r.value) : null;
  }

  setMeta(key: string, value: string): void {
    waitBusy(() => this.stmt('INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run([key, value]));
  }

  files(): Map<string, FileRow> {
    const out = new Map<string, FileRow>();
    for (const r of this.all('SELECT path, size, mtime, hash FROM files')) {
      out.set(String(r.path), { path: String(r.path), size: Number(r.size), mtimeMs: Number(r.mtime), hash: String(r.hash) });
    }
    return out;
  }

  /** Replaces a file's chunks (call inside transaction()). */
  putFile(file: FileRow, chunks: readonly NewChunk[]): void {
    this.deleteFile(file.path);
    this.stmt('INSERT INTO files(path, size, mtime, hash) VALUES (?, ?, ?, ?)').run([file.path, file.size, file.mtimeMs, file.hash]);
    const ins = this.stmt('INSERT INTO chunks(path, start_line, end_line, hash, kind) VALUES (?, ?, ?, ?, ?) RETURNING id');
    const fts = this.stmt('INSERT INTO fts(rowid, text, words) VALUES (?, ?, ?)');
    for (const c of chunks) {
      const id = Number((ins.all([file.path, c.startLine, c.endLine, c.hash, c.kind]) as Row[])[0]!.id);
      fts.run([id, c.text, identifierWords(c.text)]);
    }
  }

  /** A file whose content is unchanged but whose size or time moved (touched, checked out again). */
  touchFile(file: FileRow): void {
    this.stmt('UPDATE files SET size = ?, mtime = ? WHERE path = ?').run([file.size, file.mtimeMs, file.path]);
  }

  deleteFile(path: string): void {
    this.stmt('DELETE FROM fts WHERE rowid IN (SELECT id FROM chunks WHERE path = ?)').run([path]);
    this.stmt('DELETE FROM chunks WHERE path = ?').run([path]);
    this.stmt('DELETE FROM files WHERE path = ?').run([path]);
  }

  /** Vectors no chunk uses any more (after edits and deletions). */
  dropUnusedVectors(): number {
    return this.stmt('DELETE FROM vectors WHERE hash NOT IN (SELECT hash FROM chunks)').run().changes;
  }

  usedHashes(): Set<string> {
    return new Set(this.all('SELECT DISTINCT hash FROM chunks').map((r) => String(r.hash)));
  }

  /** Chunk texts that have no vector yet: one per distinct hash, in file order. */
  missingVectors(limit: number): Array<{ hash: string; text: string }> {
    return this.all(`SELECT c.hash AS hash, f.text AS text FROM chunks c JOIN fts f ON f.rowid = c.id
      WHERE c.hash NOT IN (SELECT hash FROM vectors) GROUP BY c.hash ORDER BY MIN(c.id) LIMIT ?`, [limit])
      .map((r) => ({ hash: String(r.hash), text: String(r.text) }));
  }

  putVectors(rows: ReadonlyArray<{ hash: string; vector: Float32Array }>): void {
    const ins = this.stmt('INSERT OR REPLACE INTO vectors(hash, vec) VALUES (?, ?)');
    for (const r of rows) ins.run([r.hash, new Uint8Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength)]);
  }

  /** A model change: every vector goes, the chunks stay. */
  clearVectors(): void {
    this.db.exec('DELETE FROM vectors');
  }

  *vectors(): Generator<{ hash: string; vector: Float32Array }> {
    for (const r of this.stmt('SELECT hash, vec FROM vectors').iterate() as IterableIterator<Row>) {
      const b = r.vec as Uint8Array;
      // Copied: the row's bytes live in WebAssembly memory that the next step may reuse.
      yield { hash: String(r.hash), vector: new Float32Array(b.slice().buffer) };
    }
  }

  /** BM25 full-text matches (best first) with their score (lower is better in SQLite's bm25()). */
  fullText(match: string, limit: number): Array<{ id: number; score: number }> {
    if (!match) return [];
    return this.all('SELECT rowid AS id, bm25(fts, 1.0, 0.5) AS score FROM fts WHERE fts MATCH ? ORDER BY score LIMIT ?', [match, limit])
      .map((r) => ({ id: Number(r.id), score: Number(r.score) }));
  }

  chunks(ids: readonly number[]): ChunkRow[] {
    if (!ids.length) return [];
    const rows = this.all(`SELECT c.id AS id, c.path AS path, c.start_line AS s, c.end_line AS e, c.hash AS hash, f.text AS text
      FROM chunks c JOIN fts f ON f.rowid = c.id WHERE c.id IN (${ids.map(() => '?').join(',')})`, [...ids]);
    const byId = new Map(rows.map((r) => [Number(r.id), { id: Number(r.id), path: String(r.path), startLine: Number(r.s), endLine: Number(r.e), hash: String(r.hash), text: String(r.text) }]));
    return ids.map((id) => byId.get(id)).filter((c): c is ChunkRow => c !== undefined);
  }

  /** Chunk ids per vector hash (a hash may stand for several chunks with the same text). */
  chunkIdsByHash(hashes: readonly string[]): Map<string, number[]> {
    const out = new Map<string, number[]>();
    if (!hashes.length) return out;
    for (const r of this.all(`SELECT id, hash FROM chunks WHERE hash IN (${hashes.map(() => '?').join(',')}) ORDER BY id`, [...hashes])) {
      const h = String(r.hash);
      out.set(h, [...(out.get(h) ?? []), Number(r.id)]);
    }
    return out;
  }

  chunksOfFile(path: string): Array<{ startLine: number; endLine: number; hash: string }> {
    return this.all('SELECT start_line AS s, end_line AS e, hash FROM chunks WHERE path = ? ORDER BY start_line', [path])
      .map((r) => ({ startLine: Number(r.s), endLine: Number(r.e), hash: String(r.hash) }));
  }

  stats(): StoreStats {
    const n = (sql: string): number => Number(this.all(sql)[0]!.n);
    let bytes = 0;
    for (const p of [this.path, `${this.path}-journal`]) {
      try { bytes += statSync(p).size; } catch { /* no journal: nothing in flight */ }
    }
    return {
      files: n('SELECT COUNT(*) AS n FROM files'),
      chunks: n('SELECT COUNT(*) AS n FROM chunks'),
      vectors: n('SELECT COUNT(*) AS n FROM vectors'),
      missingVectors: n('SELECT COUNT(DISTINCT hash) AS n FROM chunks WHERE hash NOT IN (SELECT hash FROM vectors)'),
      bytes,
    };
  }

  integrity(): string {
    return String(this.all('PRAGMA integrity_check')[0]!.integrity_check);
  }

  close(): void {
    for (const s of this.stmts.values()) if (!s.isFinalized) s.finalize();
    this.stmts.clear();
    if (this.db.isOpen) this.db.close();
    if (this.owner) releaseOwnership(this.path);
  }
}

function claimOwnership(path: string): void {
  const owner = `${path}.owner`;
  let pid = NaN;
  try { pid = Number(readFileSync(owner, 'utf8').trim()); } catch { /* no owner: never opened, or closed cleanly */ }
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processExists(pid)) {
    throw new Error(`the codebase index ${path} is open in another process (pid ${pid})`);
  }
  // The owner is gone (or is us): a lock folder left behind is stale.
  rmSync(`${path}.lock`, { recursive: true, force: true });
  writeFileSync(owner, String(process.pid), { mode: 0o600 });
}

function releaseOwnership(path: string): void {
  rmSync(`${path}.owner`, { force: true });
}
