// The codebase index as the rest of the extension sees it: the indexer, the store and the vector
// index of one workspace, searched through the server's embedding model and reranker when they
// are served. The panel, the chat participant, the agent's search_codebase tool and inline
// completions all call search() here. No vscode (register-codebase.ts wires it).
import type { IndexSearchView, IndexView } from '../../contract/panel.js';
import { InThreadChunker, type FileChunker } from './file-chunker.js';
import { Indexer, type Embedder, type IndexProgress, type IndexRoot, type IndexerOptions } from './indexer.js';
import { DEFAULT_SEARCH, searchIndex, type EmbedFn, type RerankFn, type SearchOptions, type SearchResult } from './search.js';
import { IndexStore } from './store.js';
import { SyntaxParsers } from './syntax.js';
import { VectorIndex } from './vector-index.js';
import { workerOrInThread } from './worker-chunker.js';

/** What the service needs from the server: embeddings and rerank scores, when those models are served. */
export interface CodebaseModels {
  /** The embedding model's name (strata.embeddingModel) and a way to embed; null: none set or no server. */
  embedding(): { name: string; embed: EmbedFn } | null;
  reranker(): { name: string; rerank: RerankFn } | null;
}

export interface CodebaseDeps {
  roots: IndexRoot[];
  storePath: string;
  wasmDir: string;
  models: CodebaseModels;
  /** Resolves when no chat or completion is in flight. */
  foreground(): Promise<void>;
  /** Says when chats and completions start and stop being in flight (chunking holds meanwhile); returns the unsubscribe. */
  onForeground?(listener: (busy: boolean) => void): () => void;
  log(message: string): void;
  options: IndexerOptions;
  /** The chunking worker's bundle (dist/codebase-worker.cjs): parses and chunk writes run there, off this thread. Absent: here. */
  workerScript?: string;
}

export class CodebaseService {
  readonly store: IndexStore;
  readonly vectors = new VectorIndex();
  readonly indexer: Indexer;
  private readonly parsers: SyntaxParsers;
  private readonly chunker: FileChunker;
  private readonly unwatch: () => void;
  private readonly listeners = new Set<(v: IndexView) => void>();
  private statsCache: { at: number; stats: ReturnType<IndexStore['stats']> } | null = null;

  constructor(private readonly deps: CodebaseDeps) {
    this.store = IndexStore.open(deps.storePath);
    this.parsers = new SyntaxParsers(deps.wasmDir, deps.log);
    const inThread = new InThreadChunker(this.store, this.parsers, { chunk: deps.options.chunk, maxFileBytes: deps.options.walk.maxFileBytes });
    this.chunker = deps.workerScript
      ? workerOrInThread(deps.workerScript, { storePath: deps.storePath, wasmDir: deps.wasmDir, chunk: deps.options.chunk, maxFileBytes: deps.options.walk.maxFileBytes }, inThread, deps.log)
      : inThread;
    this.unwatch = deps.onForeground?.((busy) => this.chunker.hold(busy)) ?? (() => {});
    this.indexer = new Indexer(deps.roots, this.store, this.vectors, this.parsers, {
      embedder: () => this.embedder(),
      foreground: () => deps.foreground(),
      onProgress: (p) => this.changed(p),
      log: deps.log,
    }, deps.options, this.chunker);
  }

  private async embedder(): Promise<Embedder | null> {
    const m = this.deps.models.embedding();
    if (!m) return null;
    // The identity pins the model and its size: a probe says how long its vectors are.
    const [probe] = await m.embed(['codebase index probe']);
    return { identity: `${m.name}|${probe!.length}`, embed: m.embed };
  }

  onChange(listener: (v: IndexView) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private changed(p: IndexProgress): void {
    // Counting rows costs a few ms at 50K chunks: not more than twice a second while a pass runs.
    if (p.phase === 'idle' || !this.statsCache || Date.now() - this.statsCache.at > 500) this.statsCache = null;
    const v = this.view(p);
    for (const l of this.listeners) l(v);
  }

  view(p: IndexProgress = this.indexer.state): IndexView {
    this.statsCache ??= { at: Date.now(), stats: this.store.stats() };
    const st = this.statsCache.stats;
    const model = this.store.meta('model');
    return {
      enabled: true, ...p, files: st.files, chunks: st.chunks, vectors: st.vectors, bytes: st.bytes,
      model: model && st.vectors > 0 ? model : this.deps.models.embedding()?.name ?? null,
      reranker: this.deps.models.reranker()?.name ?? null,
      lastUpdated: this.indexer.lastUpdated,
    };
  }

  /** Hybrid search (full text + vectors when an embedding model is served, reranked when a reranker is). */
  async search(query: string, opts: Partial<SearchOptions> = {}, signal?: AbortSignal): Promise<SearchResult> {
    const embedding = this.vectors.size > 0 ? this.deps.models.embedding() : null;
    const reranker = this.deps.models.reranker();
    return searchIndex({ store: this.store, vectors: this.vectors, embed: embedding?.embed ?? null, rerank: reranker?.rerank ?? null },
      query, { ...DEFAULT_SEARCH, ...opts }, signal);
  }

  /** The search as the Index tab shows it. */
  async searchView(query: string): Promise<IndexSearchView> {
    try {
      const r = await this.search(query);
      return {
        query, stages: r.stages, ms: r.ms, error: null,
        hits: r.hits.map((h) => ({ path: h.chunk.path, startLine: h.chunk.startLine, endLine: h.chunk.endLine, text: h.chunk.text, fullText: h.fullText, vector: h.vector, fused: h.fused, rerank: h.rerank })),
      };
    } catch (e) {
      return { query, hits: [], stages: [], ms: 0, error: `search failed: ${(e as Error).message}` };
    }
  }

  /** Ends the pass, the worker (its connection first) and the store. */
  async dispose(): Promise<void> {
    this.unwatch();
    this.indexer.cancel();
    await this.chunker.dispose().catch(() => {});
    this.parsers.dispose();
    this.store.close();
  }
}
