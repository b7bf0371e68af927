// Test models the tests generate themselves (see backend/models/stand-in.ts).
//
// Default quant is q8_0, not f16: on CPU, q8_0 (and q4_0) weights give bit-identical logits
// whatever a sequence is batched with for prompts under 64 tokens, so greedy parity tests (solo vs
// batched, parked vs not, one device vs an RPC split) with short prompts are exact. With f16
// weights one-row and many-row matmuls round differently and ~5% of 32-token greedy runs diverge
// (measured: 3 of 64); prompts of 64+ tokens read alone take flash attention's tiled kernel. The
// engine's `deterministic` option removes both (docs/design.md, Exactness on the CPU).
import type { TestModelQuant, TestModelShape } from '../../native/lib/addon.js';
import { ensureModel, ensureProjector } from '../../backend/models/stand-in.js';

export interface TestModelOptions {
  /** Vocabulary name (qwen2, starcoder, deepseek-coder, llama-bpe, …) or a tokenizer GGUF path. */
  vocab?: string;
  shape?: TestModelShape;
  quant?: TestModelQuant;
  seed?: number;
  /** Peaked logits for cross-backend checks (see makeTestModel). */
  logitScale?: number;
  /** Embedding models: the pooling written to the GGUF (default: the shape's). */
  pooling?: 'mean' | 'cls' | 'last';
  /** A chat template by name (llama.cpp's models/templates) or path, instead of the vocab's. */
  chatTemplate?: string;
  /** The training context written instead of the shape's (tiny: 4096). */
  ctxTrain?: number;
}

/**
 * Path of a generated model, made once into
 * ${STRATA_CACHE_DIR or ~/.cache/strata}/test-models/<vocab>-<shape>-<quant>-<seed>-v<generator version>.gguf.
 */
export async function ensureTestModel({ vocab = 'qwen2', shape = 'tiny', quant = 'q8_0', seed = 1, logitScale, pooling, chatTemplate, ctxTrain }: TestModelOptions = {}): Promise<string> {
  return ensureModel({
    vocab, shape, quant, seed, ...(logitScale !== undefined ? { logitScale } : {}), ...(pooling ? { pooling } : {}),
    ...(chatTemplate ? { chatTemplate } : {}), ...(ctxTrain !== undefined ? { ctxTrain } : {}),
  });
}

/** A generated model and its random-weight projector (for images through the real engine). */
export async function ensureTestModelWithProjector(o: TestModelOptions = {}): Promise<{ model: string; mmproj: string }> {
  const model = await ensureTestModel(o);
  return { model, mmproj: await ensureProjector(model) };
}
