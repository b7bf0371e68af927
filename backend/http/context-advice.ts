// What a prompt that does not fit the context is told: the context per slot (--ctx) that holds it
// with room to answer (a power of two, at most the training context), checked against what memory
// can give the KV cache: with fewer slots when all of them would not fit, or the most memory holds.
import { freemem } from 'node:os';
import type { ModelInfo } from '../../native/lib/addon.js';

export interface ContextFacts {
  promptTokens: number;
  trainCtx: number;
  slots: number;
  /** KV cells the context holds now in all; a restart with other flags frees them. */
  pool: number;
  /** KV bytes per token (null: unknown). */
  kvBytesPerToken: number | null;
  /** Bytes the memory that holds the KV cache could still give it (null: unknown). */
  freeBytes: number | null;
}

export interface ContextAdvice {
  /** The --ctx (and --slots) that would hold it; null where none would. */
  ctx: number | null;
  slots: number | null;
  /** What to do, in words (after "; "). */
  text: string;
}

const MiB = 2 ** 20;
/** Room to answer besides the prompt: an eighth of it, at least this. */
const LEAST_ANSWER = 256;

export function adviseContext(f: ContextFacts): ContextAdvice {
  if (f.trainCtx > 0 && f.promptTokens >= f.trainCtx) {
    return { ctx: null, slots: null, text: `the model was trained for ${f.trainCtx} tokens, so no context holds it: shorten it` };
  }
  const need = f.promptTokens + Math.max(LEAST_ANSWER, Math.ceil(f.promptTokens / 8));
  let ctx = 2 ** Math.ceil(Math.log2(need));
  if (f.trainCtx > 0) ctx = Math.min(ctx, f.trainCtx);
  const plain: ContextAdvice = { ctx, slots: null, text: `shorten it or start the server with --ctx ${ctx}` };
  if (f.kvBytesPerToken === null || f.freeBytes === null || f.kvBytesPerToken <= 0) return plain;
  const budget = Math.max(0, f.freeBytes) + f.pool * f.kvBytesPerToken;
  const slots = Math.min(f.slots, Math.floor(budget / (ctx * f.kvBytesPerToken)));
  if (slots >= f.slots) return plain;
  if (slots >= 1) {
    return { ctx, slots, text: `shorten it or start the server with --ctx ${ctx} --slots ${slots} (memory holds ${ctx} tokens on ${slots} of the ${f.slots} slots)` };
  }
  const most = Math.floor(budget / f.kvBytesPerToken / 256) * 256;
  const mib = Math.ceil((ctx * f.kvBytesPerToken) / MiB);
  return {
    ctx: null, slots: null,
    text: `shorten it: ${ctx} tokens take ${mib} MiB of KV cache and memory holds about ${most} tokens (--kv-type q8_0 halves the KV cache)`,
  };
}

const metaNumber = (info: ModelInfo, key: string): number | null => {
  const v = Number(info.metadata[`${info.architecture}.${key}`]);
  return Number.isFinite(v) && v > 0 ? v : null;
};

/** Bytes per KV element, ggml's block sizes included (as model-pool/memory-estimate.ts counts them). */
const KV_BYTES: Record<string, number> = { f16: 2, q8_0: 34 / 32, q4_0: 18 / 32 };

/**
 * The facts of a loaded model: its KV bytes per token from the fit (what llama.cpp measured) or the
 * GGUF's shapes; what memory could give it from the fit's free device memory where the KV cache is
 * on a GPU, else the host's free RAM now.
 */
export function contextFacts(info: ModelInfo, promptTokens: number): ContextFacts {
  const base = { promptTokens, trainCtx: info.trainCtx, slots: info.slots, pool: info.ctxPool };
  const fit = info.fit;
  const kvDevices = fit ? fit.devices.filter((d) => d.context > 0) : [];
  const measured = fit ? fit.devices.reduce((n, d) => n + d.context, fit.host.context) : 0;
  let perToken: number | null = fit && fit.pool > 0 && measured > 0 ? measured / fit.pool : null;
  if (perToken === null) {
    const layers = metaNumber(info, 'block_count');
    const embd = metaNumber(info, 'embedding_length');
    const heads = metaNumber(info, 'attention.head_count');
    const kvHeads = metaNumber(info, 'attention.head_count_kv') ?? heads;
    if (layers && embd && heads && kvHeads) perToken = 2 * layers * (embd / heads) * kvHeads * (KV_BYTES[info.kvType] ?? 2);
  }
  const freeBytes = fit && kvDevices.length > 0
    ? kvDevices.reduce((n, d) => n + d.free - d.model - d.context - d.compute - fit.marginBytes, 0)
    : freemem() - (fit?.marginBytes ?? 0);
  return { ...base, kvBytesPerToken: perToken, freeBytes };
}
