// `strata bench-engine --workload exact`: the batched == solo invariant on one device, without a
// test runner (the GPU bundle runs it on a machine that has no vitest). Each prompt set is run
// alone, prompt after prompt, on one engine, and all at once on a second engine with the same
// options (a fresh one: the first one's slots would hand the batched run its prompts from the
// KV); greedy, EOS ignored. Reports how many sequences came out token for token identical and,
// for each that did not, where they part.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadAddon, packageRoot } from '../addon/loader.js';
import { optInt, optList, optString, UsageError, type ParsedArgs } from '../args/args.js';
import type { Engine, EngineEvent, EngineOptions } from '../../native/lib/addon.js';

export interface ExactOptions {
  model: string;
  /** Devices by name (CUDA0, Vulkan0; empty: the engine's default placement). */
  devices: string[];
  gpuLayers: number;
  flashAttn: 'auto' | 'on' | 'off';
  /** Prompt sets, prompts per set (also the slots), tokens generated per prompt. */
  sets: number;
  prompts: number;
  tokens: number;
  threads?: number;
}

export interface ExactReport {
  model: string;
  devices: string[];
  /** Where the engine put the layers (from its ModelInfo). */
  placement: Array<{ device: string; layers: number }>;
  sequences: number;
  identical: number;
  /** Sequences that differ: set, prompt, the first position where batched and solo part. */
  differences: Array<{ set: number; prompt: number; position: number }>;
}

/** A small driver over one Engine: run a request to its end and collect its tokens. */
class Runner {
  private readonly waiters = new Map<number, (e: EngineEvent) => void>();
  private nextId = 1;
  private constructor(readonly engine: Engine) {}

  static async load(opts: Omit<EngineOptions, 'onEvents'>): Promise<Runner> {
    let runner: Runner | null = null;
    const engine = await loadAddon().Engine.load({
      ...opts, onEvents: (events) => { for (const e of events) runner?.waiters.get(e.id)?.(e); },
    });
    runner = new Runner(engine);
    return runner;
  }

  run(prompt: number[], maxTokens: number): Promise<number[]> {
    const id = this.nextId++;
    const ids: number[] = [];
    return new Promise((resolve, reject) => {
      this.waiters.set(id, (e) => {
        if (e.type === 'tokens') ids.push(...e.ids);
        if (e.type !== 'done') return;
        this.waiters.delete(id);
        if (e.finish === 'error' || e.finish === 'cancel') reject(new Error(`request ended with ${e.finish}: ${e.error ?? ''}`));
        else resolve(ids);
      });
      this.engine.submit({ id, prompt, maxTokens, ignoreEos: true });
    });
  }
}

/** Deterministic prompt tokens: set k, prompt i; lengths differ so batched steps mix unequal sequences. */
function promptsOf(set: number, count: number, vocab: number): number[][] {
  let seed = 7919 * (set + 1);
  const next = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return 100 + (seed % (vocab - 200)); };
  return Array.from({ length: count }, (_, i) => Array.from({ length: 8 + ((i * 37 + set * 11) % 57) }, next));
}

export async function checkBatchedEqualsSolo(o: ExactOptions): Promise<ExactReport> {
  const opts: Omit<EngineOptions, 'onEvents'> = {
    model: o.model, slots: o.prompts, ctx: 256 + o.tokens, gpuLayers: o.gpuLayers, flashAttn: o.flashAttn, parkBudgetMiB: 0,
    freeRamFloorMiB: 0, ...(o.devices.length > 0 ? { devices: o.devices } : {}), ...(o.threads ? { threads: o.threads } : {}),
  };
  const [solo, batched] = await Promise.all([Runner.load(opts), Runner.load(opts)]);
  const report: ExactReport = {
    model: o.model, devices: o.devices, sequences: 0, identical: 0, differences: [],
    placement: solo.engine.info.placement.map((p) => ({ device: p.device, layers: p.layers })),
  };
  try {
    for (let set = 0; set < o.sets; set++) {
      const prompts = promptsOf(set, o.prompts, solo.engine.info.vocabSize);
      const alone: number[][] = [];
      for (const p of prompts) alone.push(await solo.run(p, o.tokens));
      const together = await Promise.all(prompts.map((p) => batched.run(p, o.tokens)));
      for (const [i, ids] of together.entries()) {
        report.sequences++;
        const a = alone[i]!;
        const position = ids.findIndex((t, j) => t !== a[j]);
        if (position < 0 && ids.length === a.length) report.identical++;
        else report.differences.push({ set, prompt: i, position: position < 0 ? Math.min(ids.length, a.length) : position });
      }
    }
  } finally {
    await Promise.all([solo.engine.close(), batched.engine.close()]);
  }
  return report;
}

/** The CLI side: options, the run, a one-line verdict and the JSON report. */
export async function runExactness(args: ParsedArgs, standIn: () => Promise<string>): Promise<number> {
  const flash = optString(args, 'flash-attn') ?? 'auto';
  if (flash !== 'auto' && flash !== 'on' && flash !== 'off') throw new UsageError(`--flash-attn must be auto, on or off, got '${flash}'`);
  const o: ExactOptions = {
    model: optString(args, 'model') ?? await standIn(),
    devices: optList(args, 'devices') ?? [],
    gpuLayers: optInt(args, 'gpu-layers', -1, 100_000) ?? -1,
    flashAttn: flash,
    sets: optInt(args, 'sets', 1, 100) ?? 5,
    prompts: optInt(args, 'prompts', 1, 64) ?? 4,
    tokens: optInt(args, 'tokens', 1, 4096) ?? 24,
    ...(optInt(args, 'threads', 1, 1024) !== undefined ? { threads: optInt(args, 'threads', 1, 1024)! } : {}),
  };
  process.stderr.write(`batched == solo: ${o.model}, devices ${o.devices.join(',') || 'default'}, ${o.sets} sets x ${o.prompts} prompts x ${o.tokens} tokens\n`);
  const report = await checkBatchedEqualsSolo(o);
  const where = report.placement.map((p) => `${p.device} ${p.layers}`).join(', ');
  process.stdout.write(`batched == solo: ${report.identical}/${report.sequences} identical (layers: ${where})\n`);
  const out = optString(args, 'json') ?? join(packageRoot, 'test-output', 'bench', 'exact-latest.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), ...o, ...report }, null, 2)}\n`);
  process.stderr.write(`wrote ${out}\n`);
  return 0;
}
