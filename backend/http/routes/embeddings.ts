// POST /v1/embeddings: every input is tokenized (BOS/CLS/SEP as the vocabulary adds them, user
// text never parsed as control tokens) and the whole list goes to the engine as one request, whose
// steps pool many inputs at once; vectors come back L2-normalised, as float arrays or base64.
import { apiError } from '../../validation/errors.js';
import { parseEmbeddingsRequest } from '../../validation/embeddings-schema.js';
import type { AppContext } from '../app-context.js';
import { follow, requireModel, settle, tokenizeInputs, withRequest } from '../generation.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

/** Little-endian float32 bytes, base64 (what OpenAI's encoding_format "base64" carries). */
export function base64Floats(v: Float32Array): string {
  const buf = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i]!, i * 4);
  return buf.toString('base64');
}

export async function embeddings(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseEmbeddingsRequest(await readJson(req, app.bodies));
  const model = requireModel(app);
  const emb = model.info.embedding;
  if (!emb) {
    throw apiError('model_not_embedding', `the model '${model.id}' makes text, not embeddings (its GGUF declares no pooling type); serve an embedding model`, { param: 'model' });
  }
  if (emb.pooling === 'rank') {
    throw apiError('model_not_embedding', `the model '${model.id}' is a reranker (pooling 'rank'): it scores query-document pairs at /v1/rerank, it makes no embeddings`, { param: 'model' });
  }
  if (body.dimensions !== null && body.dimensions !== emb.dimensions) {
    throw apiError('unsupported_value', `dimensions: the model '${model.id}' makes ${emb.dimensions}-dimensional embeddings and cannot shorten them to ${body.dimensions}`, { param: 'dimensions' });
  }
  body.inputs.forEach((x, i) => {
    if (typeof x === 'string') return;
    const bad = x.findIndex((t) => t >= model.info.vocabSize);
    if (bad >= 0) throw apiError('invalid_value', `input[${i}][${bad}] is token id ${x[bad]}, outside the vocabulary of ${model.info.vocabSize}`, { param: `input[${i}]` });
  });

  await withRequest(app, 'embedding', false, res, async (run) => {
    // Every text input in one tokenizer call; token-id inputs as given.
    const texts = body.inputs.filter((x): x is string => typeof x === 'string');
    const tokenized = texts.length > 0 ? await tokenizeInputs(app, texts) : [];
    let next = 0;
    const inputs = body.inputs.map((x) => (typeof x === 'string' ? tokenized[next++]! : x));
    // An input is read in one engine step: at most a slot's context and one batch.
    const limit = Math.min(model.info.ctx, model.info.batch);
    inputs.forEach((toks, i) => {
      const param = body.inputs.length === 1 ? 'input' : `input[${i}]`;
      if (toks.length === 0) throw apiError('empty_input', `${param} is empty after tokenization`, { param });
      if (toks.length > limit) {
        throw apiError('context_length_exceeded', `${param} is ${toks.length} tokens; an input may have at most ${limit} (the context per slot and the batch, --ctx and --batch)`, { param, n_prompt_tokens: toks.length, n_ctx: limit });
      }
    });
    const vectors: Array<Float32Array | undefined> = new Array(inputs.length);
    const done = await follow(run, { prompt: inputs.flat(), maxTokens: 0, embed: { inputs } }, {
      onText() { /* embedding requests make no text */ },
      onEmbedding(index, vector) { vectors[index] = vector; },
    });
    if (!settle(run, done)) return;
    if (vectors.some((v) => v === undefined)) throw apiError('engine_error', 'the engine ended the request without every embedding');
    const tokens = inputs.reduce((n, t) => n + t.length, 0);
    sendJson(res, 200, {
      object: 'list',
      data: vectors.map((v, index) => ({
        object: 'embedding', index, embedding: body.encodingFormat === 'base64' ? base64Floats(v!) : Array.from(v!),
      })),
      model: model.id,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  });
}
