// Hybrid search over the index: BM25 full-text matches and vector nearest neighbours, fused by
// reciprocal rank, then (when a reranker is served) the best `rerankTop` reordered by the
// reranker's score of each (query, chunk) pair. Every hit carries each stage's score and rank,
// so the Index tab can show why a chunk was chosen. No vscode.
import { reciprocalRankFusion } from './fusion.js';
import type { ChunkRow, IndexStore } from './store.js';
import type { VectorIndex } from './vector-index.js';

/** Embeds texts (the embedding model through /v1/embeddings). */
export type EmbedFn = (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>;
/** Scores documents against a query (a reranker through /v1/rerank): one score per document, in order. */
export type RerankFn = (query: string, documents: string[], signal?: AbortSignal) => Promise<number[]>;

export interface SearchOptions {
  /** Hits returned. */
  limit: number;
  /** Candidates each list contributes before fusion. */
  candidates: number;
  /** Fused hits the reranker reorders (0: none). */
  rerankTop: number;
  /** false: full text only, no query embedding (inline completions: no request to the server). Default true. */
  vectors?: boolean;
}

export const DEFAULT_SEARCH: SearchOptions = { limit: 10, candidates: 50, rerankTop: 50, vectors: true };

export interface SearchHit {
  chunk: ChunkRow;
  /** BM25 (SQLite's bm25(): lower is better) and rank among the full-text matches; null: not matched. */
  fullText: { score: number; rank: number } | null;
  /** Cosine similarity and rank among the nearest neighbours; null: not among them. */
  vector: { score: number; rank: number } | null;
  /** The reciprocal-rank-fusion score. */
  fused: number;
  /** The reranker's score; null when no reranker ran. */
  rerank: number | null;
}

export interface SearchResult {
  hits: SearchHit[];
  /** Which stages ran ('vector' needs an embedding model and vectors; 'rerank' a reranker). */
  stages: Array<'fullText' | 'vector' | 'rerank'>;
  ms: number;
}

/** English function words: they match most chunks, so BM25 must score nearly all of them for little. */
const STOPWORDS = new Set(['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'has', 'have', 'how', 'in', 'is', 'it', 'its',
  'of', 'on', 'or', 'that', 'the', 'this', 'to', 'was', 'what', 'when', 'where', 'which', 'who', 'why', 'will', 'with', 'does', 'do']);

/**
 * An FTS5 query from free text: each word and identifier (and the parts of snake_case and
 * camelCase ones) as a quoted term, ORed, so BM25 ranks chunks by how many and how rare.
 * English function words are left out (unless nothing else is left): at 50,000 chunks "the"
 * alone makes BM25 score most of the index, several times the cost of the rest of the query.
 */
export function fullTextQuery(text: string): string {
  const terms = new Set<string>();
  for (const m of text.matchAll(/[\p{L}\p{N}_]+/gu)) {
    const w = m[0];
    if (w.length < 2) continue;
    terms.add(w.toLowerCase());
    for (const part of w.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[_\s]+/)) if (part.length > 1) terms.add(part.toLowerCase());
  }
  const content = [...terms].filter((t) => !STOPWORDS.has(t));
  return (content.length ? content : [...terms]).slice(0, 64).map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
}

export interface SearchDeps {
  store: IndexStore;
  vectors: VectorIndex;
  /** null: no embedding model (full text only). */
  embed: EmbedFn | null;
  /** null: no reranker. */
  rerank: RerankFn | null;
  now?: () => number;
}

export async function searchIndex(deps: SearchDeps, query: string, opts: SearchOptions = DEFAULT_SEARCH, signal?: AbortSignal): Promise<SearchResult> {
  const now = deps.now ?? (() => performance.now());
  const started = now();
  const stages: SearchResult['stages'] = ['fullText'];
  const ft = deps.store.fullText(fullTextQuery(query), opts.candidates);
  const ftById = new Map(ft.map((r, i) => [r.id, { score: r.score, rank: i + 1 }]));

  const vecById = new Map<number, { score: number; rank: number }>();
  const vecIds: number[] = [];
  if (deps.embed && deps.vectors.size > 0 && opts.vectors !== false) {
    const [q] = await deps.embed([query], signal);
    if (q) {
      stages.push('vector');
      const near = deps.vectors.search(q, opts.candidates);
      const ids = deps.store.chunkIdsByHash(near.map((n) => n.hash));
      for (const n of near) {
        for (const id of ids.get(n.hash) ?? []) {
          if (vecById.has(id)) continue;
          vecIds.push(id);
          vecById.set(id, { score: n.score, rank: vecIds.length });
        }
      }
    }
  }
  const fused = reciprocalRankFusion([ft.map((r) => r.id), vecIds]);
  const rerank = opts.rerankTop > 0 ? deps.rerank : null;
  const keep = fused.slice(0, Math.max(opts.limit, rerank ? opts.rerankTop : 0));
  const rows = new Map(deps.store.chunks(keep.map((f) => f.key)).map((c) => [c.id, c]));
  let hits: SearchHit[] = keep.filter((f) => rows.has(f.key)).map((f) => ({
    chunk: rows.get(f.key)!, fullText: ftById.get(f.key) ?? null, vector: vecById.get(f.key) ?? null, fused: f.score, rerank: null,
  }));
  if (rerank && hits.length > 0) {
    const top = hits.slice(0, opts.rerankTop);
    const scores = await rerank(query, top.map((h) => h.chunk.text), signal);
    if (scores.length !== top.length) throw new Error(`the reranker gave ${scores.length} scores for ${top.length} documents`);
    top.forEach((h, i) => { h.rerank = scores[i]!; });
    // Reranked first (best score first, fused order on ties); the rest keep their fused order.
    hits = [...top.map((h, i) => ({ h, i })).sort((a, b) => b.h.rerank! - a.h.rerank! || a.i - b.i).map((x) => x.h), ...hits.slice(opts.rerankTop)];
    stages.push('rerank');
  }
  return { hits: hits.slice(0, opts.limit), stages, ms: now() - started };
}
