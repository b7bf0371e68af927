// POST /v1/rerank (also /rerank, /v1/reranking, /reranking, as llama-server): scores each
// document against the query with a reranker model (a GGUF with pooling 'rank': a classification
// head over the encoder's CLS token, e.g. bge-reranker). Each query-document pair is one input of
// one embedding request, laid out as llama-server does (tools/server format_prompt_rerank): the
// GGUF's "rerank" template, else the vocabulary's BOS + query + EOS/SEP + document + EOS. The
// client's texts are never parsed as control tokens; only the template's own text is.
import type { ModelInfo } from '../../../native/lib/addon.js';
import { apiError } from '../../validation/errors.js';
import { parseRerankRequest, type RerankRequest } from '../../validation/rerank-schema.js';
import type { AppContext } from '../app-context.js';
import { follow, onEngine, requireModel, settle, tokenizeParts, withRequest } from '../generation.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

type RerankLayout = NonNullable<ModelInfo['rerank']>;

/** The template split at its placeholders: literal text (parsed for special tokens) and the slots between. */
export function templateParts(template: string): Array<{ text: string } | { slot: 'query' | 'document' }> {
  const out: Array<{ text: string } | { slot: 'query' | 'document' }> = [];
  const re = /\{(query|document)\}/g;
  let at = 0;
  for (let m = re.exec(template); m; m = re.exec(template)) {
    if (m.index > at) out.push({ text: template.slice(at, m.index) });
    out.push({ slot: m[1] as 'query' | 'document' });
    at = m.index + m[0].length;
  }
  if (at < template.length) out.push({ text: template.slice(at) });
  return out;
}

/**
 * Each pair's tokens. `query` and `docs` are the client's texts tokenized without special tokens;
 * `literal` tokenizes the template's text with special-token parsing. A document that would make
 * its pair longer than `limit` is cut to fit (as Cohere and Jina truncate); a query that leaves no
 * room for a document is the client's to shorten.
 */
export async function pairInputs(
  layout: RerankLayout, query: number[], docs: number[][], limit: number, literal: (text: string) => Promise<number[]>,
): Promise<{ inputs: number[][]; truncated: number }> {
  let build: (doc: number[]) => number[];
  if (layout.template !== null) {
    const parts = await Promise.all(templateParts(layout.template).map(async (p) => ('text' in p ? { tokens: await literal(p.text) } : p)));
    build = (doc) => parts.flatMap((p) => ('tokens' in p ? p.tokens : p.slot === 'query' ? query : doc));
  } else {
    build = (doc) => [...layout.prefix, ...query, ...layout.separator, ...doc, ...layout.suffix];
  }
  const fixed = build([]).length;
  if (fixed >= limit) {
    throw apiError('context_length_exceeded', `query is ${query.length} tokens; with the pair's markup it leaves no room for a document within the ${limit} tokens an input may have (--ctx and --batch)`, { param: 'query', n_prompt_tokens: fixed, n_ctx: limit });
  }
  let truncated = 0;
  const inputs = docs.map((d) => {
    if (fixed + d.length <= limit) return build(d);
    truncated++;
    return build(d.slice(0, limit - fixed));
  });
  return { inputs, truncated };
}

/** Best first; equal scores keep the documents' order. */
export function rankResults(scores: number[], topN: number): Array<{ index: number; score: number }> {
  return scores.map((score, index) => ({ index, score })).sort((a, b) => b.score - a.score || a.index - b.index).slice(0, topN);
}

export async function rerank(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body: RerankRequest = parseRerankRequest(await readJson(req, app.bodies));
  const model = requireModel(app);
  const layout = model.info.rerank;
  if (!layout || model.info.embedding?.pooling !== 'rank') {
    const what = model.info.embedding ? `makes ${model.info.embedding.pooling}-pooled embeddings` : 'makes text';
    throw apiError('model_not_reranker', `the model '${model.id}' ${what}, not reranking scores (its GGUF's pooling type is not 'rank'); serve a reranker model such as bge-reranker`, { param: 'model' });
  }
  await withRequest(app, 'embedding', false, res, async (run) => {
    const { tokens } = await tokenizeParts(app, [body.query, ...body.documents]);
    const literal = (text: string): Promise<number[]> =>
      onEngine(app, 'tokenize', 'the engine could not tokenize the prompt', (c) => c.tokenize(text, false, true));
    const limit = Math.min(model.info.ctx, model.info.batch);
    const { inputs } = await pairInputs(layout, tokens[0]!, tokens.slice(1), limit, literal);
    const scores: Array<number | undefined> = new Array(inputs.length);
    const done = await follow(run, { prompt: inputs.flat(), maxTokens: 0, embed: { inputs } }, {
      onText() { /* rerank requests make no text */ },
      onEmbedding(index, vector) { scores[index] = vector[0]; },
    });
    if (!settle(run, done)) return;
    if (scores.some((v) => v === undefined)) throw apiError('engine_error', 'the engine ended the request without every score');
    const ranked = rankResults(scores as number[], body.topN);
    const used = inputs.reduce((n, t) => n + t.length, 0);
    if (body.tei) {
      sendJson(res, 200, ranked.map((r) => ({ index: r.index, score: r.score, ...(body.returnDocuments ? { text: body.documents[r.index] } : {}) })));
      return;
    }
    sendJson(res, 200, {
      object: 'list',
      model: model.id,
      usage: { prompt_tokens: used, total_tokens: used },
      results: ranked.map((r) => ({
        index: r.index, relevance_score: r.score, ...(body.returnDocuments ? { document: { text: body.documents[r.index] } } : {}),
      })),
    });
  });
}
