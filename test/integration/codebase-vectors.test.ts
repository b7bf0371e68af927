// The codebase index's vector path on real servers (a generated BERT embedding model and a
// generated reranker, through the extension's own client): random weights make the vectors'
// meaning noise, so what is tested is what noise cannot fake. Indexing in batches gives the same
// vectors as one text per request (batch == single); the same query gives the same hits and
// scores (deterministic); every hit's fused score is the reciprocal-rank sum of the ranks it
// shows, in fused order; with the reranker the reranked hits are in the reranker's own order for
// those documents (its scores, asked again one by one).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrataClient } from '../../extension/client/client.js';
import { RRF_K } from '../../extension/codebase/fusion.js';
import { Indexer, type Embedder } from '../../extension/codebase/indexer.js';
import { searchIndex } from '../../extension/codebase/search.js';
import { IndexStore } from '../../extension/codebase/store.js';
import { SyntaxParsers } from '../../extension/codebase/syntax.js';
import { VectorIndex } from '../../extension/codebase/vector-index.js';
import { ensureTestModel } from '../helpers/models.js';
import { startServer, type Running } from './server-helpers.js';

const WASM = join(import.meta.dirname, '../../node_modules/@vscode/tree-sitter-wasm/wasm');
const fn = (name: string, doc: string, body: string): string => `/** ${doc} */\nexport function ${name}(x: number): number {\n  ${body}\n}\n`;

let dir: string;
let embedSrv: Running;
let rerankSrv: Running;
let client: StrataClient;
let reranker: StrataClient;
let parsers: SyntaxParsers;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-codebase-vectors-'));
  const root = join(dir, 'ws');
  mkdirSync(join(root, 'src'), { recursive: true });
  for (let i = 0; i < 6; i++) {
    writeFileSync(join(root, 'src', `m${i}.ts`), fn(`loadModel${i}`, `Loads model number ${i} from a file`, `return x * ${i};`)
      + fn(`decodeBatch${i}`, `Decodes a batch of ${i} tokens`, `return x + ${i};`) + fn(`sampleToken${i}`, 'Samples the next token', `return x - ${i};`));
  }
  [embedSrv, rerankSrv] = await Promise.all([
    ensureTestModel({ vocab: 'bert-bge', shape: 'embed-bert' }).then((m) => startServer(m, { ctx: 256, slots: 4, batch: 512 })),
    ensureTestModel({ vocab: 'bert-bge', shape: 'rerank-bert' }).then((m) => startServer(m, { ctx: 256, slots: 4, batch: 512 })),
  ]);
  client = new StrataClient({ baseUrl: embedSrv.url, timeoutMs: 120_000 });
  reranker = new StrataClient({ baseUrl: rerankSrv.url, timeoutMs: 120_000 });
  parsers = new SyntaxParsers(WASM);
}, 180_000);
afterAll(async () => {
  parsers?.dispose();
  await Promise.all([embedSrv?.close(), rerankSrv?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

async function buildIndex(name: string, batch: number): Promise<{ store: IndexStore; vectors: VectorIndex; requests: number[] }> {
  const store = IndexStore.open(join(dir, `${name}.sqlite`));
  const vectors = new VectorIndex();
  const requests: number[] = [];
  const embedder: Embedder = { identity: 'embed|128', embed: async (t, s) => { requests.push(t.length); return client.embeddings(t, s); } };
  const ix = new Indexer([{ name: 'ws', path: join(dir, 'ws') }], store, vectors, parsers, {
    embedder: async () => embedder, foreground: async () => {}, onProgress: () => {}, log: () => {},
  }, { walk: { exclude: [], maxFileBytes: 100_000 }, chunk: { maxChars: 200, maxLines: 20, overlapLines: 4 }, batch });
  await ix.sync();
  return { store, vectors, requests };
}

describe('the codebase vector path on a real embedding model and reranker', () => {
  it('batch == single: the index built 8 texts a request holds the vectors of one text a request', async () => {
    const batched = await buildIndex('batched', 8);
    const single = await buildIndex('single', 1);
    try {
      expect(batched.requests.some((n) => n > 1)).toBe(true);
      expect(single.requests.every((n) => n === 1)).toBe(true);
      const a = new Map([...batched.store.vectors()].map((r) => [r.hash, r.vector]));
      const b = new Map([...single.store.vectors()].map((r) => [r.hash, r.vector]));
      expect(a.size).toBeGreaterThanOrEqual(10);
      expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
      for (const [hash, v] of a) {
        const w = b.get(hash)!;
        // ggml's CPU flash attention read short steps with another kernel (1.5e-3 apart) until the
        // engine padded them; what is left comes from where an input sits among the attention tiles.
        expect(Math.max(...v.map((x, i) => Math.abs(x - w[i]!)))).toBeLessThan(5e-4);
      }
      const q = 'decode a batch of tokens';
      const deps = (ix: typeof batched) => ({ store: ix.store, vectors: ix.vectors, embed: (t: string[], s?: AbortSignal) => client.embeddings(t, s), rerank: null });
      const ra = await searchIndex(deps(batched), q);
      const rb = await searchIndex(deps(single), q);
      expect(ra.stages).toEqual(['fullText', 'vector']);
      expect(ra.hits.map((h) => [h.chunk.hash, h.vector?.rank ?? null])).toEqual(rb.hits.map((h) => [h.chunk.hash, h.vector?.rank ?? null]));
    } finally {
      batched.store.close();
      single.store.close();
    }
  });

  it('deterministic and fused correctly; the reranker orders the top by its own scores', async () => {
    const ix = await buildIndex('fused', 8);
    try {
      const deps = { store: ix.store, vectors: ix.vectors, embed: (t: string[], s?: AbortSignal) => client.embeddings(t, s), rerank: null };
      const q = 'loadModel3 loads a model from a file';
      const first = await searchIndex(deps, q, { limit: 10, candidates: 20, rerankTop: 0 });
      const again = await searchIndex(deps, q, { limit: 10, candidates: 20, rerankTop: 0 });
      expect(again.hits.map((h) => [h.chunk.id, h.fused, h.vector?.score])).toEqual(first.hits.map((h) => [h.chunk.id, h.fused, h.vector?.score]));
      // Both lists voted, and each hit's fused score is what its ranks give, best first.
      expect(first.hits.some((h) => h.fullText && h.vector)).toBe(true);
      for (const h of first.hits) {
        const want = (h.fullText ? 1 / (RRF_K + h.fullText.rank) : 0) + (h.vector ? 1 / (RRF_K + h.vector.rank) : 0);
        expect(h.fused).toBeCloseTo(want, 12);
      }
      const fused = first.hits.map((h) => h.fused);
      expect(fused).toEqual([...fused].sort((a, b) => b - a));
      expect(first.hits[0]!.chunk.text).toContain('loadModel3');

      const reranked = await searchIndex({ ...deps, rerank: (qq, d, s) => reranker.rerank(qq, d, s) }, q, { limit: 10, candidates: 20, rerankTop: 10 });
      expect(reranked.stages).toEqual(['fullText', 'vector', 'rerank']);
      const scores = reranked.hits.map((h) => h.rerank!);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(new Set(reranked.hits.map((h) => h.chunk.id))).toEqual(new Set(first.hits.map((h) => h.chunk.id)));
      for (const h of reranked.hits.slice(0, 3)) {
        const [alone] = await reranker.rerank(q, [h.chunk.text]);
        expect(Math.abs(alone! - h.rerank!)).toBeLessThan(1e-4);
      }
    } finally {
      ix.store.close();
    }
  });
});
