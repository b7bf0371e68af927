// `strata make-test-model`: a GGUF with seeded random weights and a real llama.cpp tokenizer,
// for tests (tiny) and as a performance stand-in (0.5b).
import { resolve } from 'node:path';
import type { TestModelQuant, TestModelShape } from '../../native/lib/addon.js';
import { generateModel, TEST_MODEL_QUANTS, TEST_MODEL_SHAPES, type StandInOptions } from '../models/stand-in.js';
import { VocabNotFoundError } from '../models/vocab.js';
import { optInt, optString, UsageError, type ParsedArgs } from '../args/args.js';
import { rejectUnknownOptions, runCommand } from '../args/command-usage.js';

const USAGE = `usage: strata make-test-model --out FILE [--vocab NAME|PATH] [--shape tiny|0.5b|embed-bert|embed-causal|rerank-bert|copy|copy-0.5b]
                                [--quant f16|q8_0|q4_0|f32] [--seed N] [--pooling mean|cls|last]
  --vocab   a llama.cpp tokenizer (qwen2, starcoder, deepseek-coder, llama-bpe, ...), qwen2.5-coder
            (qwen2 + Qwen2.5's added FIM and tool-call tokens), or a tokenizer GGUF path (default qwen2)
  --shape   tiny: tests, seconds to make; 0.5b: Qwen2-0.5B shapes, performance stand-in (default tiny);
            embed-bert: a BERT encoder embedding model (mean pooling; use a WordPiece vocab: bert-bge);
            embed-causal: a decoder embedding model with last-token pooling (Qwen3-Embedding-like);
            rerank-bert: a BERT encoder reranker (a classification head on CLS, pooling rank; bge-reranker-like),
            served at /v1/rerank;
            copy, copy-0.5b: hand-set weights whose greedy answer copies its context (an induction head),
            the speculative-decoding workload; copy-0.5b decodes at a 0.5B model's speed
  --pooling the pooling written to the GGUF (embedding shapes' default, or makes a text shape an embedding model)
  --quant   weight type; norms stay f32 (default f16)
  --seed    weights' seed, a non-negative integer (default 1)`;

export interface MakeTestModelArgs extends StandInOptions { out: string }

export function parseMakeTestModelArgs(args: ParsedArgs): MakeTestModelArgs {
  rejectUnknownOptions(args, ['out', 'vocab', 'shape', 'quant', 'seed', 'pooling', 'help']);
  const out = optString(args, 'out');
  if (out === undefined || out === 'true' || out === '') throw new UsageError('--out FILE is required');
  const vocab = optString(args, 'vocab') ?? 'qwen2';
  if (vocab === 'true' || vocab === '') throw new UsageError('--vocab needs a name or a path');
  const shape = optString(args, 'shape') ?? 'tiny';
  if (!TEST_MODEL_SHAPES.includes(shape as TestModelShape)) {
    throw new UsageError(`--shape must be one of ${TEST_MODEL_SHAPES.join(', ')}, got '${shape}'`);
  }
  const quant = optString(args, 'quant') ?? 'f16';
  if (!TEST_MODEL_QUANTS.includes(quant as TestModelQuant)) {
    throw new UsageError(`--quant must be one of ${TEST_MODEL_QUANTS.join(', ')}, got '${quant}'`);
  }
  const seed = optInt(args, 'seed', 0, Number.MAX_SAFE_INTEGER) ?? 1;
  const pooling = optString(args, 'pooling');
  if (pooling !== undefined && !['mean', 'cls', 'last'].includes(pooling)) throw new UsageError(`--pooling must be mean, cls or last, got '${pooling}'`);
  return {
    out: resolve(out), vocab, shape: shape as TestModelShape, quant: quant as TestModelQuant, seed,
    ...(pooling !== undefined ? { pooling: pooling as 'mean' | 'cls' | 'last' } : {}),
  };
}

function formatBytes(n: number): string {
  return n >= 1 << 30 ? `${(n / (1 << 30)).toFixed(2)} GiB` : `${(n / (1 << 20)).toFixed(1)} MiB`;
}

export const command = {
  summary: 'write a random-weight GGUF with a real tokenizer (test models, 0.5b stand-in)',
  run: (args: ParsedArgs): Promise<number> => runCommand('make-test-model', USAGE, args, async () => {
    const o = parseMakeTestModelArgs(args);
    const started = performance.now();
    let r;
    try {
      r = generateModel(o.out, o);
    } catch (e) {
      if (e instanceof VocabNotFoundError) throw new UsageError(e.message);
      throw e;
    }
    const fim = r.fim ? `prefix ${r.fim.prefix}, suffix ${r.fim.suffix}, middle ${r.fim.middle}` : 'none';
    process.stdout.write([
      `wrote ${r.path}`,
      `  size    ${formatBytes(r.bytes)} (${r.bytes} bytes)`,
      `  params  ${(r.params / 1e6).toFixed(2)}M (shape ${o.shape}, ${o.quant}, seed ${o.seed})`,
      `  vocab   ${o.vocab}: ${r.vocabSize} tokens`,
      `  FIM     ${fim}`,
      `  took    ${((performance.now() - started) / 1000).toFixed(1)} s`,
    ].join('\n') + '\n');
    return 0;
  }),
};
