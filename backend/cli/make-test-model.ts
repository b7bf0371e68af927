// `strata make-test-model`: a GGUF with seeded random weights and a real llama.cpp tokenizer,
// for tests (tiny) and as a performance stand-in (0.5b).
import { resolve } from 'node:path';
import type { TestModelQuant, TestModelShape } from '../../native/lib/addon.js';
import { generateModel, generateProjector, TEST_MODEL_QUANTS, TEST_MODEL_SHAPES, type StandInOptions } from '../models/stand-in.js';
import { VocabNotFoundError } from '../models/vocab.js';
import { optInt, optString, UsageError, type ParsedArgs } from '../args/args.js';
import { rejectUnknownOptions, runCommand } from '../args/command-usage.js';

const USAGE = `usage: strata make-test-model --out FILE [--vocab NAME|PATH] [--shape tiny|0.5b|7b|embed-bert|embed-causal|rerank-bert|copy|copy-0.5b|mtp|copy-mtp|hybrid|eagle3|dflash|dspark]
                                [--quant f16|q8_0|q4_0|f32] [--seed N] [--pooling mean|cls|last]
                                [--chat-template NAME|PATH] [--mmproj FILE] [--ctx-train N]
  --vocab   a llama.cpp tokenizer (qwen2, starcoder, deepseek-coder, llama-bpe, ...), qwen2.5-coder
            (qwen2 + Qwen2.5's added FIM and tool-call tokens), or a tokenizer GGUF path (default qwen2)
  --shape   tiny: tests, seconds to make; 0.5b: Qwen2-0.5B shapes, performance stand-in (default tiny);
            7b: Qwen2.5-7B shapes (untied output, 4 KV heads; ~4.2 GB in q4_0), a GPU's chat-model stand-in;
            embed-bert: a BERT encoder embedding model (mean pooling; use a WordPiece vocab: bert-bge);
            embed-causal: a decoder embedding model with last-token pooling (Qwen3-Embedding-like);
            rerank-bert: a BERT encoder reranker (a classification head on CLS, pooling rank; bge-reranker-like),
            served at /v1/rerank;
            copy, copy-0.5b: hand-set weights whose greedy answer copies its context (an induction head),
            the speculative-decoding workload; copy-0.5b decodes at a 0.5B model's speed
            mtp: tiny's size in GLM-4.5's architecture with a multi-token-prediction (MTP) head (hand-set
            to predict by the embedding path; random trunk), which strata serve drafts with (--spec auto|mtp)
            copy-mtp: copy-0.5b in GLM-4.5's architecture with an MTP head that copies one token ahead (its
            drafts are accepted where the answer repeats the context), the MTP speed-up workload
            hybrid: tiny's size in Qwen3.5's architecture (three recurrent gated delta net layers and a full
            attention one) with a random MTP head: drafts the engine must roll back in a recurrent state
            eagle3, dflash, dspark: random-weight drafters made for tiny (same --vocab): an EAGLE-3 head, a DFlash
            block drafter and a DSpark one (no confidence head: --draft-p-min 0), given to strata serve as --draft-model
  --pooling the pooling written to the GGUF (embedding shapes' default, or makes a text shape an embedding model)
  --quant   weight type; norms stay f32 (default f16)
  --seed    weights' seed, a non-negative integer (default 1)
  --chat-template  a chat template written instead of the vocab's: a name from llama.cpp's
            models/templates (Qwen-Qwen2.5-7B-Instruct, meta-llama-Llama-3.2-3B-Instruct,
            mistralai-Mistral-Nemo-Instruct-2407, ...) or a .jinja path (tool-call tests and benchmark)
  --ctx-train  the training context written (<arch>.context_length) instead of the shape's (tiny: 4096),
            e.g. 32768 for a model whose whole context a server gives by default
  --mmproj  also write a random-weight vision projector for the model to FILE (llama.cpp's "mlp" kind:
            32x32 images, 16 tokens each), so images run through the real engine: serve with --mmproj FILE`;

export interface MakeTestModelArgs extends StandInOptions { out: string; mmproj?: string }

export function parseMakeTestModelArgs(args: ParsedArgs): MakeTestModelArgs {
  rejectUnknownOptions(args, ['out', 'vocab', 'shape', 'quant', 'seed', 'pooling', 'chat-template', 'mmproj', 'ctx-train', 'help']);
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
  const chatTemplate = optString(args, 'chat-template');
  if (chatTemplate === 'true' || chatTemplate === '') throw new UsageError('--chat-template needs a name or a path');
  const mmproj = optString(args, 'mmproj');
  if (mmproj === 'true' || mmproj === '') throw new UsageError('--mmproj needs a file path');
  const ctxTrain = optInt(args, 'ctx-train', 16, 1 << 24);
  return {
    out: resolve(out), vocab, shape: shape as TestModelShape, quant: quant as TestModelQuant, seed,
    ...(pooling !== undefined ? { pooling: pooling as 'mean' | 'cls' | 'last' } : {}),
    ...(chatTemplate !== undefined ? { chatTemplate } : {}),
    ...(mmproj !== undefined ? { mmproj: resolve(mmproj) } : {}),
    ...(ctxTrain !== undefined ? { ctxTrain } : {}),
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
    const projector = o.mmproj !== undefined ? generateProjector(o.mmproj, o.out, o.seed) : null;
    const fim = r.fim ? `prefix ${r.fim.prefix}, suffix ${r.fim.suffix}, middle ${r.fim.middle}` : 'none';
    process.stdout.write([
      `wrote ${r.path}`,
      `  size    ${formatBytes(r.bytes)} (${r.bytes} bytes)`,
      `  params  ${(r.params / 1e6).toFixed(2)}M (shape ${o.shape}, ${o.quant}, seed ${o.seed})`,
      `  vocab   ${o.vocab}: ${r.vocabSize} tokens`,
      ...(o.ctxTrain !== undefined ? [`  context ${o.ctxTrain} tokens (trained)`] : []),
      `  FIM     ${fim}`,
      ...(projector ? [`  mmproj  ${projector.path} (${formatBytes(projector.bytes)}; ${projector.imageTokens} tokens an image)`] : []),
      `  took    ${((performance.now() - started) / 1000).toFixed(1)} s`,
    ].join('\n') + '\n');
    return 0;
  }),
};
