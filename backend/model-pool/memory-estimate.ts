// What a model needs in host RAM, estimated before it loads (the budget is checked before a load
// starts): the file (weights are mapped and read in) plus its KV cache for ctx x slots per
// replica, or without a ctx the least context the slots share (the fit may give it more where
// memory allows), from the GGUF's layer count and attention shape. A file whose header cannot be
// read counts its size only.
import { stat } from 'node:fs/promises';
import type { KvType } from '../../contract/kv-types.js';
import { readGgufHeader, type GgufValue } from '../models/gguf.js';

export interface KvShape {
  /** Context tokens per slot (null: one context the slots share, min(4096 x slots, training context)). */
  ctx: number | null;
  slots: number;
  replicas: number;
  kvType: KvType | null;
}

/** Bytes per KV element, ggml's block sizes included (q8_0: 34 bytes per 32, q4_0: 18 per 32). */
const KV_BYTES: Record<KvType, number> = { f16: 2, q8_0: 34 / 32, q4_0: 18 / 32 };
/** Per slot, the least context the engine shares among the slots when none is set. */
const DEFAULT_CTX_CAP = 4096;

const num = (v: GgufValue | undefined): number | null => {
  const x = Array.isArray(v) ? v[0] : v;
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
};

export async function estimateModelBytes(path: string, kv: KvShape): Promise<number> {
  let fileBytes = 0;
  try { fileBytes = (await stat(path)).size; } catch { return 0; }
  try {
    const h = await readGgufHeader(path);
    const arch = h.metadata.get('general.architecture');
    if (typeof arch !== 'string') return fileBytes;
    const layers = num(h.metadata.get(`${arch}.block_count`)) ?? 0;
    const embd = num(h.metadata.get(`${arch}.embedding_length`)) ?? 0;
    const heads = num(h.metadata.get(`${arch}.attention.head_count`)) ?? 0;
    const kvHeads = num(h.metadata.get(`${arch}.attention.head_count_kv`)) ?? heads;
    const trainCtx = num(h.metadata.get(`${arch}.context_length`)) ?? DEFAULT_CTX_CAP;
    if (layers <= 0 || embd <= 0 || heads <= 0) return fileBytes;
    const cells = kv.ctx !== null ? kv.ctx * kv.slots : Math.min(trainCtx, DEFAULT_CTX_CAP * kv.slots);
    const perToken = 2 * layers * (embd / heads) * kvHeads * KV_BYTES[kv.kvType ?? 'f16'];
    return Math.round(fileBytes * kv.replicas + perToken * cells * kv.replicas);
  } catch {
    return fileBytes;
  }
}
