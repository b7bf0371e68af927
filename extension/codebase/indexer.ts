// Keeps the index in step with the workspace. A sync walks the folders, chunks the files whose
// content changed (hash), drops the ones that are gone, then embeds every chunk text that has no
// vector yet, in batches, each batch waiting until no chat or completion is in flight. Watcher
// events reindex just their paths. One run at a time; pause and cancel between batches. A new
// embedding model (its identity) drops the vectors and keeps the chunks. The chunking itself
// (parse and store writes) is the FileChunker's: on this thread, or the worker's (service.ts).
// No vscode.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_CHUNK_OPTIONS, type Chunk, type ChunkOptions } from './chunker.js';
import { chunkText, InThreadChunker, type FileChunker } from './file-chunker.js';
import type { EmbedFn } from './search.js';
import type { IndexStore } from './store.js';
import type { SyntaxParsers } from './syntax.js';
import type { VectorIndex } from './vector-index.js';
import { isIndexable, walk, type WalkOptions } from './walker.js';
import type { ContextOverflow } from '../../contract/errors.js';
import type { ErrorCode } from '../../contract/error-codes.js';

export interface IndexRoot { name: string; path: string }

export interface IndexProgress {
  phase: 'idle' | 'scanning' | 'chunking' | 'embedding';
  paused: boolean;
  filesDone: number;
  filesTotal: number;
  chunksDone: number;
  chunksTotal: number;
  /** Seconds left for the embedding phase, from its rate so far; null before it is known. */
  etaSeconds: number | null;
  /** Why the last run stopped short (no embedding model, the server's error, cancelled), else null. */
  message: string | null;
}

export interface Embedder {
  /** Changes when vectors from before are no longer comparable (another model, or another size). */
  identity: string;
  embed: EmbedFn;
}

export interface IndexerHooks {
  /** The embedding model now, or null when none is served (chunks and full text still index). */
  embedder(): Promise<Embedder | null>;
  /** Resolves when chats and completions leave the machine to the index. */
  foreground(): Promise<void>;
  onProgress(p: IndexProgress): void;
  log(message: string): void;
  now?: () => number;
}

export interface IndexerOptions {
  walk: WalkOptions;
  chunk: ChunkOptions;
  /** Chunk texts per embedding request. */
  batch: number;
}

export const DEFAULT_INDEXER: IndexerOptions = { walk: { exclude: [], maxFileBytes: 1 << 20 }, chunk: DEFAULT_CHUNK_OPTIONS, batch: 8 };

export class CancelledError extends Error {
  constructor() { super('indexing was cancelled'); this.name = 'CancelledError'; }
}

/**
 * Files chunked per transaction: a crash loses at most this much work. Small, because the parse
 * and the SQLite writes take a core: 8 files are ~100 ms on a slow one, the longest a chat's
 * first token may wait behind them when they run on its thread (25 made chat TTFT p95 4.7x idle).
 */
const FILES_PER_COMMIT = 8;

export class Indexer {
  private progress: IndexProgress = { phase: 'idle', paused: false, filesDone: 0, filesTotal: 0, chunksDone: 0, chunksTotal: 0, etaSeconds: null, message: null };
  private chain: Promise<void> = Promise.resolve();
  private pending = new Set<string>();
  private fullPending = false;
  private abort: AbortController | null = null;
  private resumeWaiters: Array<() => void> = [];
  private readonly now: () => number;
  /** When the last run finished (ms since epoch, the store's meta). */
  lastUpdated: number | null;
  private readonly chunker: FileChunker;

  constructor(
    private readonly roots: readonly IndexRoot[],
    private readonly store: IndexStore,
    private readonly vectors: VectorIndex,
    private readonly parsers: SyntaxParsers | null,
    private readonly hooks: IndexerHooks,
    private readonly opts: IndexerOptions = DEFAULT_INDEXER,
    /** Where files are parsed and written (default: this thread, into `store`). */
    chunker?: FileChunker,
  ) {
    this.chunker = chunker ?? new InThreadChunker(store, parsers, { chunk: opts.chunk, maxFileBytes: opts.walk.maxFileBytes });
    this.now = hooks.now ?? Date.now;
    const last = store.meta('updated');
    this.lastUpdated = last === null ? null : Number(last);
    vectors.clear();
    vectors.add(store.vectors());
  }

  get state(): IndexProgress { return { ...this.progress }; }

  /** Stored path of a file: relative to its folder, under the folder's name when there are several. */
  storedPath(root: IndexRoot, rel: string): string {
    return this.roots.length > 1 ? `${root.name}/${rel}` : rel;
  }

  /** Absolute path of a stored path. */
  absolute(stored: string): string | null {
    if (this.roots.length === 1) return join(this.roots[0]!.path, stored);
    const slash = stored.indexOf('/');
    const root = this.roots.find((r) => r.name === stored.slice(0, slash));
    return root ? join(root.path, stored.slice(slash + 1)) : null;
  }

  /** Walks everything again (start-up, a settings change, "Rebuild"). Resolves when that run ends. */
  sync(): Promise<void> {
    this.fullPending = true;
    return this.schedule();
  }

  /** Reindexes these stored paths (saved, created, renamed or deleted files). */
  update(paths: Iterable<string>): Promise<void> {
    for (const p of paths) this.pending.add(p);
    return this.schedule();
  }

  pause(): void {
    if (this.progress.paused) return;
    this.set({ paused: true });
  }

  resume(): void {
    if (!this.progress.paused) return;
    this.set({ paused: false });
    for (const w of this.resumeWaiters.splice(0)) w();
  }

  /** Stops the running pass after its current batch; what was committed stays. */
  cancel(): void {
    this.abort?.abort();
    this.resume();
  }

  private schedule(): Promise<void> {
    const run = this.chain.then(() => this.run());
    this.chain = run.catch(() => {});
    return run;
  }

  private set(p: Partial<IndexProgress>): void {
    this.progress = { ...this.progress, ...p };
    this.hooks.onProgress(this.state);
  }

  private async checkpoint(signal: AbortSignal): Promise<void> {
    while (this.progress.paused && !signal.aborted) await new Promise<void>((r) => this.resumeWaiters.push(r));
    if (signal.aborted) throw new CancelledError();
    await new Promise<void>((r) => setImmediate(r));
  }

  private async run(): Promise<void> {
    const full = this.fullPending;
    const paths = [...this.pending];
    this.fullPending = false;
    this.pending.clear();
    if (!full && paths.length === 0) return;
    const ac = new AbortController();
    this.abort = ac;
    let message: string | null = null;
    try {
      this.set({ phase: 'scanning', filesDone: 0, filesTotal: 0, chunksDone: 0, chunksTotal: 0, etaSeconds: null, message: null });
      const work = full ? await this.scanAll(ac.signal) : await this.scanPaths(paths);
      await this.chunkFiles(work, ac.signal);
      message = await this.embedMissing(ac.signal);
    } catch (e) {
      message = e instanceof CancelledError ? 'cancelled' : `indexing stopped: ${(e as Error).message}`;
      if (!(e instanceof CancelledError)) this.hooks.log(message);
    } finally {
      this.abort = null;
    }
    this.lastUpdated = this.now();
    this.store.setMeta('updated', String(this.lastUpdated));
    this.set({ phase: 'idle', etaSeconds: null, message });
  }

  /** Every indexable file (with size and time) and every stored file that is gone. */
  private async scanAll(signal: AbortSignal): Promise<{ seen: Array<{ stored: string; abs: string; size: number; mtimeMs: number }>; gone: string[] }> {
    const seen: Array<{ stored: string; abs: string; size: number; mtimeMs: number }> = [];
    for (const root of this.roots) {
      const r = await walk(root.path, this.opts.walk, signal);
      for (const f of r.files) seen.push({ stored: this.storedPath(root, f.path), abs: join(root.path, f.path), size: f.size, mtimeMs: f.mtimeMs });
    }
    const keep = new Set(seen.map((s) => s.stored));
    const gone = [...this.store.files().keys()].filter((p) => !keep.has(p));
    return { seen, gone };
  }

  private async scanPaths(paths: readonly string[]): Promise<{ seen: Array<{ stored: string; abs: string; size: number; mtimeMs: number }>; gone: string[] }> {
    const seen: Array<{ stored: string; abs: string; size: number; mtimeMs: number }> = [];
    const gone: string[] = [];
    for (const stored of paths) {
      const abs = this.absolute(stored);
      const root = this.roots.find((r) => abs?.startsWith(`${r.path}/`));
      const st = abs ? await stat(abs).catch(() => null) : null;
      const rel = abs && root ? abs.slice(root.path.length + 1) : null;
      if (!abs || !st?.isFile() || st.size > this.opts.walk.maxFileBytes || !rel || !(await isIndexable(root!.path, rel, this.opts.walk))) {
        gone.push(stored);
        continue;
      }
      seen.push({ stored, abs, size: st.size, mtimeMs: Math.floor(st.mtimeMs) });
    }
    return { seen, gone };
  }

  chunk(path: string, text: string): Promise<Chunk[]> {
    return chunkText(this.parsers, path, text, this.opts.chunk);
  }

  private async chunkFiles(work: { seen: Array<{ stored: string; abs: string; size: number; mtimeMs: number }>; gone: string[] }, signal: AbortSignal): Promise<void> {
    const known = this.store.files();
    const changed = work.seen.filter((f) => {
      const k = known.get(f.stored);
      return !k || k.size !== f.size || k.mtimeMs !== f.mtimeMs;
    });
    this.set({ phase: 'chunking', filesDone: 0, filesTotal: changed.length + work.gone.length });
    let done = 0;
    if (work.gone.length) {
      await this.chunker.deleteFiles(work.gone);
      done += work.gone.length;
    }
    for (let i = 0; i < changed.length; i += FILES_PER_COMMIT) {
      await this.checkpoint(signal);
      // Like the embedding batches: a group starts only while no chat or completion is in flight.
      await this.hooks.foreground();
      const group = changed.slice(i, i + FILES_PER_COMMIT);
      await this.chunker.chunkFiles(group.map((f) => ({ ...f, knownHash: known.get(f.stored)?.hash ?? null })));
      done += group.length;
      this.set({ filesDone: done });
    }
    this.store.transaction(() => this.store.dropUnusedVectors());
    const used = this.store.usedHashes();
    this.vectors.retain((h) => used.has(h));
  }

  /** Returns why embedding stopped short (no model, an error), or null when every chunk has a vector. */
  private async embedMissing(signal: AbortSignal): Promise<string | null> {
    const embedder = await this.hooks.embedder();
    if (!embedder) return 'no embedding model is served: full-text search only (set strata.embeddingModel)';
    if (this.store.meta('model') !== embedder.identity) {
      if (this.store.meta('model') !== null) this.hooks.log(`embedding model changed (${this.store.meta('model')} -> ${embedder.identity}): vectors are rebuilt, chunks kept`);
      this.store.transaction(() => { this.store.clearVectors(); this.store.setMeta('model', embedder.identity); });
      this.vectors.clear();
    }
    const total = this.store.stats().missingVectors;
    this.set({ phase: 'embedding', chunksDone: 0, chunksTotal: total, etaSeconds: null });
    let done = 0;
    const started = this.now();
    for (;;) {
      await this.checkpoint(signal);
      await this.hooks.foreground();
      const rows = this.store.missingVectors(this.opts.batch);
      if (!rows.length) return null;
      const vecs = await this.embedBatch(embedder, rows.map((r) => r.text), signal);
      const put = rows.map((r, i) => ({ hash: r.hash, vector: vecs[i]! }));
      this.store.transaction(() => this.store.putVectors(put));
      this.vectors.add(put);
      done += rows.length;
      const rate = done / Math.max(1, this.now() - started);
      this.set({ chunksDone: done, etaSeconds: Math.round(Math.max(0, total - done) / rate / 1000) });
    }
  }

  /**
   * One request. A text too long for the model is cut (its vector is of its start) and the batch
   * asked again: the server names the input and its token count before any of it is embedded, so
   * a refused batch costs only its tokenizing, never one request per text. A refusal that names
   * no input falls back to one text at a time.
   */
  private async embedBatch(embedder: Embedder, texts: string[], signal: AbortSignal): Promise<Float32Array[]> {
    const work = [...texts];
    for (let tries = 0; tries < 4 * work.length; tries++) {
      try {
        return await embedder.embed(work, signal);
      } catch (e) {
        const at = tooLongInput(e, work.length);
        if (at === null) throw e;
        if (at < 0) break;
        work[at] = shorten(work[at]!, e);
        if (!work[at]) throw e;
      }
    }
    const out: Float32Array[] = [];
    for (let t of work) {
      for (let tries = 0; ; tries++) {
        try {
          out.push((await embedder.embed([t], signal))[0]!);
          break;
        } catch (e) {
          if (tooLongInput(e, 1) === null || tries >= 6 || t.length < 2) throw e;
          t = shorten(t, e);
        }
      }
    }
    return out;
  }
}

/**
 * Which input a refusal says is too long: its index (the error's param, `input[i]`, or `input`
 * for a single one), -1 when too long but unnamed, null for any other error.
 */
export function tooLongInput(e: unknown, count: number): number | null {
  const err = e as { code?: string | null; param?: string | null };
  const overflow: ErrorCode = 'context_length_exceeded';
  if (err?.code !== overflow) return null;
  if (err.param === 'input' && count === 1) return 0;
  const m = /^input\[(\d+)\]$/.exec(err.param ?? '');
  const i = m ? Number(m[1]) : -1;
  return i < count ? i : -1;
}

/** The text cut to fit: by the token counts the refusal carries (what it needed, what it may have), with a margin, else halved. */
export function shorten(text: string, e: unknown): string {
  const overflow = (e as { overflow?: ContextOverflow | null } | null)?.overflow;
  const ratio = overflow && overflow.n_prompt_tokens > 0 ? (0.9 * overflow.n_ctx) / overflow.n_prompt_tokens : 0.5;
  return text.slice(0, Math.floor(text.length * Math.min(0.9, ratio)));
}
