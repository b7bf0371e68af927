// POST /v1/rerank on a real generated reranker (rerank-bert: a BERT encoder with a classification
// head, pooling 'rank', WordPiece vocab): the Jina/Cohere shape and TEI's, every alias path,
// results best first with top_n, scores deterministic and the same alone as in a batch, the pair
// laid out as llama-server does ([CLS] query [SEP] document for this vocab), client text never
// parsed as control tokens, long documents cut to fit, and 400s naming the field. Models that are
// not rerankers answer a clear 400. Random weights: the scores mean nothing, their plumbing does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, metrics, startServer, type Running } from './server-helpers.js';

const docs = ['def add(a, b): return a + b', 'The weather in Paris is mild.', 'SELECT * FROM users;', 'hello world', 'int main() { return 0; }'];

interface RerankBody {
  object: string; model: string; usage: { prompt_tokens: number; total_tokens: number };
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
}

describe('a reranker model', () => {
  let srv: Running;
  beforeAll(async () => {
    srv = await startServer(await ensureTestModel({ vocab: 'bert-bge', shape: 'rerank-bert' }), { ctx: 256, slots: 4, batch: 256 });
  });
  afterAll(async () => { await srv?.close(); });

  const tokens = async (text: string): Promise<number> => (await json<{ tokens: number[] }>(srv.port, 'POST', '/tokenize', { content: text, add_special: false, parse_special: false })).body.tokens.length;

  it('describes itself as a reranker: pooling rank, one score per input', async () => {
    const info = (await metrics(srv.port)).model;
    expect(info.embedding).toEqual({ pooling: 'rank', dimensions: 1 });
    const models = (await json(srv.port, 'GET', '/v1/models')).body;
    expect(models.data[0].meta.embedding.pooling).toBe('rank');
  });

  it('ranks every document best first, deterministic, alone == in a batch, with usage of the pairs as llama-server lays them out', async () => {
    const r = await json<RerankBody>(srv.port, 'POST', '/v1/rerank', { model: 'any', query: 'how to add two numbers', documents: docs });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.object).toBe('list');
    const { results } = r.body;
    expect(results.map((x) => x.index).sort()).toEqual([0, 1, 2, 3, 4]);
    const scores = results.map((x) => x.relevance_score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(new Set(scores).size).toBe(docs.length);
    // [CLS] query [SEP] document: the vocabulary adds BOS (CLS) and SEP, not EOS.
    const q = await tokens('how to add two numbers');
    const pairTokens = (await Promise.all(docs.map(tokens))).reduce((n, d) => n + q + d + 2, 0);
    expect(r.body.usage).toEqual({ prompt_tokens: pairTokens, total_tokens: pairTokens });
    const again = await json<RerankBody>(srv.port, 'POST', '/v1/rerank', { query: 'how to add two numbers', documents: docs });
    expect(again.body.results).toEqual(results);
    for (const res of results) {
      const one = await json<RerankBody>(srv.port, 'POST', '/v1/rerank', { query: 'how to add two numbers', documents: [docs[res.index]] });
      expect(Math.abs(one.body.results[0]!.relevance_score - res.relevance_score)).toBeLessThan(1e-5);
    }
  });

  it('top_n, return_documents, documents as {text}, and the alias paths', async () => {
    const full = (await json<RerankBody>(srv.port, 'POST', '/v1/rerank', { query: 'q', documents: docs })).body.results;
    const top = await json<RerankBody>(srv.port, 'POST', '/rerank', { query: 'q', documents: docs.map((text) => ({ text })), top_n: 2, return_documents: true });
    expect(top.body.results).toEqual(full.slice(0, 2).map((x) => ({ ...x, document: { text: docs[x.index] } })));
    for (const path of ['/v1/reranking', '/reranking']) {
      expect((await json<RerankBody>(srv.port, 'POST', path, { query: 'q', documents: docs, top_n: 99 })).body.results).toEqual(full);
    }
  });

  it("TEI's shape: texts in, an array of {index, score, text} out", async () => {
    const full = (await json<RerankBody>(srv.port, 'POST', '/v1/rerank', { query: 'q', documents: docs })).body.results;
    const tei = await json<Array<{ index: number; score: number; text?: string }>>(srv.port, 'POST', '/rerank', { query: 'q', texts: docs, return_text: true });
    expect(tei.status).toBe(200);
    expect(tei.body).toEqual(full.map((x) => ({ index: x.index, score: x.relevance_score, text: docs[x.index] })));
  });

  it("a client's text is never parsed as control tokens; a document too long for one input is cut to fit", async () => {
    const plain = await json<RerankBody>(srv.port, 'POST', '/v1/rerank', { query: 'q', documents: ['[SEP] [CLS]'] });
    expect(plain.body.usage.prompt_tokens).toBe(await tokens('q') + await tokens('[SEP] [CLS]') + 2);
    expect(await tokens('[SEP] [CLS]')).toBeGreaterThan(2);
    const long = await json<RerankBody>(srv.port, 'POST', '/v1/rerank', { query: 'q', documents: ['word '.repeat(600), 'short'] });
    expect(long.status, JSON.stringify(long.body)).toBe(200);
    expect(long.body.results).toHaveLength(2);
    expect(long.body.usage.prompt_tokens).toBe(256 + await tokens('q') + await tokens('short') + 2);
  });

  it('refuses bad input with a 400 naming the field, and is not an embedding model', async () => {
    const cases: Array<[unknown, string]> = [
      [{ documents: docs }, 'query'],
      [{ query: '', documents: docs }, 'query'],
      [{ query: 7, documents: docs }, 'query'],
      [{ query: 'q' }, 'documents'],
      [{ query: 'q', documents: [] }, 'documents'],
      [{ query: 'q', documents: 'one' }, 'documents'],
      [{ query: 'q', documents: ['a', 3] }, 'documents[1]'],
      [{ query: 'q', documents: ['a', ''] }, 'documents[1]'],
      [{ query: 'q', documents: [{ txt: 'a' }] }, 'documents[0].text'],
      [{ query: 'q', documents: docs, top_n: 0 }, 'top_n'],
      [{ query: 'q', documents: docs, top_n: 1.5 }, 'top_n'],
      [{ query: 'q', documents: docs, return_documents: 'yes' }, 'return_documents'],
      [{ query: 'q', texts: [{ text: 'a' }] }, 'texts[0]'],
      [{ query: 'word '.repeat(600), documents: docs }, 'query'],
    ];
    for (const [body, param] of cases) {
      const r = await json(srv.port, 'POST', '/v1/rerank', body);
      expect(r.status, `${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.error.param).toBe(param);
    }
    const emb = await json(srv.port, 'POST', '/v1/embeddings', { input: 'hello' });
    expect(emb.status).toBe(400);
    expect(emb.body.error.message).toMatch(/reranker/);
    // Nothing above left a request behind.
    const live = (await metrics(srv.port)).live;
    expect([live.queued, live.admitting, live.running]).toEqual([0, 0, 0]);
  });
});

describe('models that are not rerankers', () => {
  it.each([
    { name: 'an embedding model', vocab: 'bert-bge', shape: 'embed-bert' as const, says: /mean-pooled embeddings/ },
    { name: 'a text model', vocab: 'qwen2', shape: 'tiny' as const, says: /makes text/ },
  ])('$name answers /v1/rerank with a 400 model_not_reranker', async ({ vocab, shape, says }) => {
    const srv = await startServer(await ensureTestModel({ vocab, shape }), { ctx: 256 });
    try {
      const r = await json(srv.port, 'POST', '/v1/rerank', { query: 'q', documents: ['a'] });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'model_not_reranker', param: 'model' });
      expect(r.body.error.message).toMatch(says);
    } finally { await srv.close(); }
  });
});
