// Measures the native engine the way llama-batched-bench does: npl sequences of pp random
// prompt tokens read together, then tg tokens each decoded together (EOS ignored).
import { loadAddon } from '../addon/loader.js';
import type { EngineEvent } from '../../native/lib/addon.js';

export interface BatchFigures { npl: number; prefillTps: number; decodeTps: number }

export async function measureEngine(o: {
  model: string; threads: number; pp: number; tg: number; batch: number; npl: number[]; ctx: number; slots: number;
  /** The CPU path (default: ggml's best variant, repacking on). */
  cpuVariant?: string; cpuRepack?: boolean;
  /** Batch-invariant CPU math (EngineOptions.deterministic). */
  deterministic?: boolean;
}): Promise<BatchFigures[]> {
  const { Engine } = loadAddon();
  const waiters = new Map<number, (e: EngineEvent) => void>();
  const engine = await Engine.load({
    model: o.model, threads: o.threads, threadsBatch: o.threads, ctx: o.ctx, slots: o.slots,
    // Throughput configuration, as llama-batched-bench: prompt chunks get the whole batch.
    batch: o.batch, ubatch: o.batch, decodePromptBudget: o.batch, parkBudgetMiB: 0,
    cpuVariant: o.cpuVariant ?? 'auto', cpuRepack: o.cpuRepack ?? true, deterministic: o.deterministic ?? false,
    onEvents: (events) => { for (const e of events) waiters.get(e.id)?.(e); },
  });
  const results: BatchFigures[] = [];
  let nextId = 1;
  let seed = 12345;
  const vocab = engine.info.vocabSize;
  const randomToken = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return 100 + (seed % (vocab - 200)); };
  try {
    for (const npl of o.npl) {
      let firstTokens = 0;
      let tFirstAll = 0;
      const t0 = performance.now();
      const done = Array.from({ length: npl }, () => new Promise<number>((resolve) => {
        const id = nextId++;
        let sawFirst = false;
        waiters.set(id, (e) => {
          if (e.type === 'tokens' && !sawFirst) {
            sawFirst = true;
            if (++firstTokens === npl) tFirstAll = performance.now();
          } else if (e.type === 'done') {
            waiters.delete(id);
            if (e.finish !== 'length') throw new Error(`bench request ended with ${e.finish}: ${e.error ?? ''}`);
            resolve(e.generated);
          }
        });
        engine.submit({ id, prompt: Array.from({ length: o.pp }, randomToken), maxTokens: o.tg, ignoreEos: true });
      }));
      const generated = await Promise.all(done);
      const t2 = performance.now();
      // The first token of each sequence comes from the prompt step; the rest from decode steps.
      const decoded = generated.reduce((a, b) => a + b, 0) - npl;
      results.push({ npl, prefillTps: (npl * o.pp) / ((tFirstAll - t0) / 1000), decodeTps: decoded / ((t2 - tFirstAll) / 1000) });
    }
  } finally {
    await engine.close();
  }
  return results;
}
