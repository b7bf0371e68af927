// Chunking a group of files into the store: read, hash, parse (tree-sitter), cut, then one
// transaction. The same code runs on the indexer's thread (InThreadChunker: tests, and the
// fallback when the worker cannot start) and in the worker (chunk-worker.ts), which keeps the
// extension host's event loop free while it parses and writes. No vscode.
import { DEFAULT_CHUNK_OPTIONS, splitLines, syntaxChunks, windowChunks, type Chunk, type ChunkOptions } from './chunker.js';
import { contentHash } from './hashing.js';
import type { FileRow, IndexStore, NewChunk } from './store.js';
import type { SyntaxParsers } from './syntax.js';
import { readText } from './walker.js';

/** A file to (re)chunk: where it is stored and read, what the walk saw, and the hash the store has for it. */
export interface FileToChunk { stored: string; abs: string; size: number; mtimeMs: number; knownHash: string | null }

export interface FileChunker {
  /** Reads and chunks these files and stores them in one transaction (a file now binary or gone is dropped). */
  chunkFiles(files: readonly FileToChunk[]): Promise<void>;
  /** Drops these stored files, in one transaction. */
  deleteFiles(paths: readonly string[]): Promise<void>;
  /**
   * While held (a chat or completion is in flight), a group that has begun starts no new file and
   * does not commit: the parse of the file at hand finishes, then it waits for release.
   */
  hold(held: boolean): void;
  dispose(): Promise<void>;
}

/** A file's chunks: by syntax where a grammar covers it, else 40-line windows. */
export async function chunkText(parsers: SyntaxParsers | null, path: string, text: string, opts: ChunkOptions = DEFAULT_CHUNK_OPTIONS, pause?: () => void): Promise<Chunk[]> {
  const lines = splitLines(text);
  const tree = await parsers?.parse(path, text, pause ? { pause } : {}).catch(() => null);
  if (!tree) return windowChunks(lines, opts);
  try {
    return syntaxChunks(lines, tree.root, opts);
  } finally {
    tree.dispose();
  }
}

/**
 * What chunkFiles and the worker share: `between` runs before each file and before the commit (a
 * hold waits there); `pause`, where blocking is allowed (the worker), also inside each parse.
 */
export async function storeFiles(
  store: IndexStore, parsers: SyntaxParsers | null, opts: { chunk: ChunkOptions; maxFileBytes: number },
  files: readonly FileToChunk[], between: () => Promise<void> = async () => {}, pause?: () => void,
): Promise<void> {
  const batch: Array<{ file: FileRow; chunks: NewChunk[] | null; unchanged: boolean }> = [];
  for (const f of files) {
    await between();
    const text = await readText(f.abs, opts.maxFileBytes);
    const file: FileRow = { path: f.stored, size: f.size, mtimeMs: f.mtimeMs, hash: text === null ? '' : contentHash(text) };
    if (text === null) { batch.push({ file, chunks: null, unchanged: false }); continue; }
    if (f.knownHash === file.hash) { batch.push({ file, chunks: [], unchanged: true }); continue; }
    const chunks = (await chunkText(parsers, f.stored, text, opts.chunk, pause)).map((c) => ({ ...c, hash: contentHash(c.text) }));
    batch.push({ file, chunks, unchanged: false });
  }
  await between();
  store.transaction(() => {
    for (const b of batch) {
      if (b.chunks === null) store.deleteFile(b.file.path); // binary now, or gone since the walk
      else if (b.unchanged) store.touchFile(b.file);
      else store.putFile(b.file, b.chunks);
    }
  });
}

/** Chunking on the caller's thread, into the caller's store. */
export class InThreadChunker implements FileChunker {
  private held = false;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly store: IndexStore,
    private readonly parsers: SyntaxParsers | null,
    private readonly opts: { chunk: ChunkOptions; maxFileBytes: number },
  ) {}

  chunkFiles(files: readonly FileToChunk[]): Promise<void> {
    // A request's events get their turn between files: the parse runs on this thread.
    return storeFiles(this.store, this.parsers, this.opts, files, async () => {
      await new Promise<void>((r) => setImmediate(r));
      while (this.held) await new Promise<void>((r) => this.waiters.push(r));
    });
  }

  hold(held: boolean): void {
    this.held = held;
    if (!held) for (const w of this.waiters.splice(0)) w();
  }

  async deleteFiles(paths: readonly string[]): Promise<void> {
    this.store.transaction(() => { for (const p of paths) this.store.deleteFile(p); });
  }

  async dispose(): Promise<void> {}
}
