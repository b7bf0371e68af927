// The engine on a real GPU-type device: Vulkan0 through the prebuilt Vulkan backend, on lavapipe
// (Mesa's CPU Vulkan driver) in CI. Placement and offload, KV on the device, the exactness
// invariants within Vulkan0 (batched == solo, parked == never parked, a session saved from device
// memory), layer splits CPU + Vulkan0 and Vulkan0 + RPC0, the step plan with offload, and drafters
// that read the model's hidden states (EAGLE-3, DFlash) on the device.
//
// Two settings, and why:
// - flashAttn 'off': lavapipe (Mesa 22.3.6) segfaults inside libvulkan_lvp.so with flash attention.
// - GGML_VK_DISABLE_F16=1: with fp16, a conversation continued from its slot while other slots
//   take a step with it (each re-reads its last prompt token in one 4-token step) decoded
//   differently from the same conversation alone (1 of 4, measured); with fp16 off it is exact,
//   as fresh prompts batched or alone and prompts read in other chunks are either way. What ships
//   keeps fp16 (speed); the exactness tests here need it off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineOptions } from '../../native/lib/addon.js';
import { teacherForced } from '../helpers/agreement.js';
import { ensureTestModel } from '../helpers/models.js';
import { startRpcServer, type RpcServer } from '../helpers/rpc-servers.js';
import { setUpVulkan, skipNote } from '../helpers/vulkan.js';
import { EngineDriver, longReadBesideDecoder, promptText } from './engine-driver.js';

const vk = setUpVulkan({ GGML_VK_DISABLE_F16: '1' });
const base: Omit<EngineOptions, 'onEvents' | 'model'> = { ctx: 512, threads: 2, flashAttn: 'off', freeRamFloorMiB: 0 };
const N_LAYER = 4;  // the tiny test model

let model = '';
beforeAll(async () => {
  if (vk.ok) model = await ensureTestModel({ vocab: 'starcoder' });
});

async function load(opts: Omit<EngineOptions, 'onEvents' | 'model'>): Promise<EngineDriver> {
  return EngineDriver.load({ model, ...base, ...opts });
}

/** Four prompts of different lengths (so batched steps mix sequences of unequal length). */
function prompts(eng: EngineDriver, words: number[]): number[][] {
  return words.map((w, i) => eng.tokens(promptText(`prompt ${i}`, w)));
}

/**
 * Each prompt alone on one engine, and all at once on another with the same options (a second
 * engine: the first one's slots would hand the batched run its prompts from the KV).
 */
async function soloAndBatched(opts: Omit<EngineOptions, 'onEvents' | 'model'>, words: number[], maxTokens: number): Promise<{ solo: number[][]; batched: number[][] }> {
  const [a, b] = await Promise.all([load(opts), load(opts)]);
  try {
    const ps = prompts(a, words);
    const solo: number[][] = [];
    for (const prompt of ps) solo.push((await a.run({ prompt, maxTokens, ignoreEos: true })).ids);
    const batched = (await Promise.all(ps.map((prompt) => b.run({ prompt, maxTokens, ignoreEos: true })))).map((r) => r.ids);
    return { solo, batched };
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

describe.skipIf(!vk.ok)(`on Vulkan0${skipNote(vk)}`, () => {
  it('lists Vulkan0 as a GPU-type device of the installed backend', () => {
    if (!vk.ok) return;
    expect(vk.device).toMatchObject({ name: 'Vulkan0', type: 'gpu', backend: 'Vulkan' });
    expect(vk.device.memoryTotal).toBeGreaterThan(0);
    expect(vk.report.loaded.map((l) => l.name)).toContain('Vulkan');
    expect(vk.report.loaded.find((l) => l.name === 'Vulkan')!.path.startsWith(vk.dir)).toBe(true);
  });

  it('full offload: every layer, the KV cache and the compute buffer on Vulkan0', async () => {
    const eng = await load({ slots: 1, devices: ['Vulkan0'], gpuLayers: 99 });
    try {
      const info = eng.engine.info;
      expect(info.placement).toEqual([expect.objectContaining({ device: 'Vulkan0', layers: N_LAYER })]);
      expect(info.decodePromptBudget).toBe(512);  // offload: the CPU step budget is off
      const kv = info.buffers.filter((b) => b.kind === 'kv');
      expect(kv.map((b) => b.buffer)).toEqual(['Vulkan0']);
      expect(info.buffers.find((b) => b.kind === 'model' && b.buffer === 'Vulkan0')!.mib).toBeGreaterThan(0.5);
      expect(info.buffers.some((b) => b.kind === 'compute' && b.buffer === 'Vulkan0')).toBe(true);
      const r = await eng.run({ prompt: eng.tokens(promptText('offloaded', 12)), maxTokens: 8, ignoreEos: true });
      expect(r.done.finish).toBe('length');
      expect(r.ids).toHaveLength(8);
    } finally {
      await eng.close();
    }
  });

  it('partial offload (gpuLayers 2): the last layer on Vulkan0, the others and their KV on the CPU', async () => {
    const eng = await load({ slots: 1, devices: ['Vulkan0'], gpuLayers: 2 });
    try {
      const info = eng.engine.info;
      // llama counts the output layer among gpuLayers: 2 = the output and one repeating layer.
      expect(info.placement).toEqual([
        expect.objectContaining({ device: 'Vulkan0', layers: 1 }), expect.objectContaining({ device: 'CPU', layers: N_LAYER - 1 }),
      ]);
      const kv = new Map(info.buffers.filter((b) => b.kind === 'kv').map((b) => [b.buffer, b.mib]));
      expect([...kv.keys()].sort()).toEqual(['CPU', 'Vulkan0']);
      // KV in proportion to the layers: three on the CPU, one on Vulkan0 (sizes come rounded to 0.01 MiB).
      const ratio = kv.get('CPU')! / kv.get('Vulkan0')!;
      expect(ratio).toBeGreaterThan(2.5);
      expect(ratio).toBeLessThan(3.5);
      const r = await eng.run({ prompt: eng.tokens(promptText('split', 12)), maxTokens: 8, ignoreEos: true });
      expect(r.ids).toHaveLength(8);
    } finally {
      await eng.close();
    }
  });

  it('batched == solo within Vulkan0', async () => {
    const { solo, batched } = await soloAndBatched({ slots: 4, devices: ['Vulkan0'], gpuLayers: 99, parkBudgetMiB: 0 }, [40, 47, 44, 8], 24);
    expect(new Set(solo.map((s) => s.join(','))).size).toBe(4);
    expect(batched).toEqual(solo);
  });

  it('EAGLE-3 and DFlash drafters on Vulkan0: drafts verified, greedy answers as without drafts, two sequences at once', async () => {
    for (const shape of ['eagle3', 'dflash'] as const) {
      const draftModel = await ensureTestModel({ vocab: 'starcoder', shape });
      const eng = await load({ slots: 2, devices: ['Vulkan0'], gpuLayers: 99, parkBudgetMiB: 0, speculative: { draftModel, draftMax: 3, draftPMin: 0 } });
      try {
        expect(eng.engine.info.speculative.draftKind).toBe(shape);
        const ps = prompts(eng, [30, 12]);
        const plain: number[][] = [];
        for (const prompt of ps) plain.push((await eng.run({ prompt, maxTokens: 16, ignoreEos: true, draftMax: 0 })).ids);
        const drafted = await Promise.all(ps.map((prompt) => eng.run({ prompt, maxTokens: 16, ignoreEos: true })));
        expect(drafted.map((r) => r.ids), shape).toEqual(plain);
        expect(drafted.every((r) => (r.done.drafted ?? 0) > 0), shape).toBe(true);
      } finally {
        await eng.close();
      }
    }
  });

  // With the model's first decode before the drafter's load, the model's output buffer grew after
  // it (the hidden states the drafter reads), and lavapipe's heap broke in about a load of three
  // with a 152K vocabulary (a crash of the process: the file fails). Eight loads miss that 2% of the time.
  it('EAGLE-3 and DFlash drafters of a 152K-vocabulary model load on Vulkan0 and answer, four times each', async () => {
    const target = await ensureTestModel({ vocab: 'qwen2' });
    for (const shape of ['eagle3', 'dflash'] as const) {
      const draftModel = await ensureTestModel({ vocab: 'qwen2', shape });
      for (let round = 0; round < 4; round++) {
        const eng = await EngineDriver.load({ model: target, ...base, slots: 2, devices: ['Vulkan0'], gpuLayers: 99, parkBudgetMiB: 0, speculative: { draftModel, draftMax: 3, draftPMin: 0 } });
        try {
          const r = await eng.run({ prompt: eng.tokens(promptText(`round ${round}`, 8)), maxTokens: 8, ignoreEos: true });
          expect(r.ids, `${shape} round ${round}`).toHaveLength(8);
        } finally {
          await eng.close();
        }
      }
    }
  });

  it('conversations continued from their slots together decode as each did alone', async () => {
    const eng = await load({ slots: 4, devices: ['Vulkan0'], gpuLayers: 99, parkBudgetMiB: 0 });
    try {
      const ps = prompts(eng, [40, 47, 44, 8]);
      const alone: number[][] = [];
      for (const prompt of ps) alone.push((await eng.run({ prompt, maxTokens: 32, ignoreEos: true })).ids);
      const together = await Promise.all(ps.map((prompt) => eng.run({ prompt, maxTokens: 32, ignoreEos: true })));
      // Each found its own slot and re-read only its last prompt token, in one step with the others.
      for (const [i, r] of together.entries()) expect(r.admitted).toMatchObject({ reused: ps[i]!.length - 1, restored: false });
      expect(together.map((r) => r.ids)).toEqual(alone);
    } finally {
      await eng.close();
    }
  });

  it('a conversation parked to host RAM and restored continues as if never parked', async () => {
    const eng = await load({ slots: 1, devices: ['Vulkan0'], gpuLayers: 99, parkBudgetMiB: 64 });
    const ref = await load({ slots: 1, devices: ['Vulkan0'], gpuLayers: 99, parkBudgetMiB: 64 });
    try {
      const first = eng.tokens(promptText('kept on the device', 20));
      const a = await eng.run({ prompt: first, maxTokens: 10, ignoreEos: true });
      await eng.run({ prompt: eng.tokens(promptText('pushes it out', 20)), maxTokens: 4, ignoreEos: true });
      expect(eng.engine.snapshot().park.entries).toHaveLength(1);
      const followup = [...first, ...a.ids, ...eng.tokens(' and then')];
      const restored = await eng.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      expect(restored.admitted).toMatchObject({ restored: true, reused: first.length + a.ids.length - 1 });

      const refFirst = await ref.run({ prompt: first, maxTokens: 10, ignoreEos: true });
      expect(refFirst.ids).toEqual(a.ids);
      const never = await ref.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
      expect(never.admitted!.restored).toBe(false);
      expect(restored.ids).toEqual(never.ids);
    } finally {
      await Promise.all([eng.close(), ref.close()]);
    }
  });

  it('a session saved from device memory loads into a fresh engine and continues identically', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'strata-vk-session-'));
    const src = await load({ slots: 2, devices: ['Vulkan0'], gpuLayers: 99 });
    try {
      const prompt = src.tokens(promptText('a conversation on the GPU', 30));
      const first = await src.run({ prompt, maxTokens: 12, ignoreEos: true });
      const followup = [...prompt, ...first.ids, ...src.tokens(' next question')];
      const path = join(dir, 'vk.session');
      const saved = await src.engine.saveSession(path, followup, 'vk-test');
      expect(saved.tokens).toBe(prompt.length + first.ids.length - 1);
      const expected = (await src.run({ prompt: followup, maxTokens: 16, ignoreEos: true })).ids;

      const fresh = await load({ slots: 2, devices: ['Vulkan0'], gpuLayers: 99 });
      try {
        expect(await fresh.engine.loadSession(path, 'vk-test')).toMatchObject({ tokens: saved.tokens, into: 'slot' });
        const cont = await fresh.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
        expect(cont.admitted).toMatchObject({ restored: false, reused: saved.tokens });
        expect(cont.ids).toEqual(expected);
      } finally {
        await fresh.close();
      }
    } finally {
      await src.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('CPU + Vulkan0 layer split: batched == solo with opOffload off', async () => {
    // With op offload on, ubatches of 32+ tokens run the CPU layers' matmuls and attention on
    // Vulkan0 and smaller ones on the CPU, so a token's numbers depend on its step's size
    // (llama.cpp splits a step into ubatches per sequence set): batched != solo. Off: exact.
    const opts = { slots: 4, devices: ['Vulkan0'], gpuLayers: 3, opOffload: false, parkBudgetMiB: 0 };
    const eng = await load(opts);
    try {
      expect(eng.engine.info.opOffload).toBe(false);
      expect(eng.engine.info.placement.map((p) => [p.device, p.layers])).toEqual([['Vulkan0', 2], ['CPU', N_LAYER - 2]]);
    } finally {
      await eng.close();
    }
    // Measured with op offload on: batched != solo in 5 of 5 prompt sets (this one included).
    const { solo, batched } = await soloAndBatched(opts, [8, 60, 12, 30], 24);
    expect(batched).toEqual(solo);
  });

  describe('Vulkan0 + RPC0 layer split', () => {
    let rpc: RpcServer;
    beforeAll(async () => { rpc = await startRpcServer(); });
    afterAll(async () => { await rpc?.stop(); });

    it('places layers on both and decodes; batched agrees with solo on ≥ 99% of teacher-forced tokens', async () => {
      // Not exact: measured batched != solo in 1 of 20 runs here (fp16 off, op offload off), and in
      // 1 of 20 with RPC0 before Vulkan0, while CPU + RPC0, RPC0 + RPC1 and each device alone are
      // exact (docs/design.md, On a GPU). The difference is rounding, not wrong numbers: every batched token
      // is the solo engine's own top-1 after the same tokens at ≥ 99% of positions.
      const peaked = await ensureTestModel({ vocab: 'starcoder', logitScale: 8 });
      const opts: Omit<EngineOptions, 'onEvents'> = {
        model: peaked, ...base, slots: 4, rpc: [rpc.endpoint], devices: ['Vulkan0', 'RPC0'], gpuLayers: 99,
        tensorSplit: [1, 1], opOffload: false, parkBudgetMiB: 0,
      };
      const [eng, solo] = await Promise.all([EngineDriver.load(opts), EngineDriver.load(opts)]);
      try {
        const placed = new Map(eng.engine.info.placement.map((p) => [p.device, p.layers]));
        expect(placed.get('Vulkan0')).toBeGreaterThan(0);
        expect(placed.get('RPC0')).toBeGreaterThan(0);
        expect(eng.engine.info.buffers.filter((b) => b.kind === 'kv').map((b) => b.buffer.replace(/\[.*\]$/, '')).sort()).toEqual(['RPC0', 'Vulkan0']);
        const ps = prompts(eng, [40, 47, 44, 8]);
        const batched = (await Promise.all(ps.map((prompt) => eng.run({ prompt, maxTokens: 24, ignoreEos: true })))).map((r) => r.ids);
        // The other engine, one request at a time: the solo run's top-1 after each batched prefix.
        const a = await teacherForced(solo, ps.map((prompt, i) => ({ prompt, continuation: batched[i]! })));
        expect(a.total).toBe(4 * 24);
        expect(a.agree / a.total, `misses at ${JSON.stringify(a.misses)}`).toBeGreaterThanOrEqual(0.99);
      } finally {
        await Promise.all([eng.close(), solo.close()]);
      }
    });
  });

  it('with offload a long prompt still gives way to a decoder and to a short prompt (trace)', async () => {
    const BATCH = 64;
    const eng = await load({ slots: 3, ctx: 2048, batch: BATCH, devices: ['Vulkan0'], gpuLayers: 99, traceSteps: 100_000 });
    try {
      // Offload turns the CPU budget off: prompts may take the whole batch beside decoders.
      expect(eng.engine.info.decodePromptBudget).toBe(BATCH);
      const longPrompt = eng.tokens(promptText('a long document read on the GPU', 500));
      expect(longPrompt.length).toBeGreaterThan(8 * BATCH);
      const shortPrompt = eng.tokens(promptText('short', 20));
      const { long: longRun, short: shortRun, traces: t } = await longReadBesideDecoder(eng, longPrompt, shortPrompt);
      const long = { id: longRun.done.id };
      const short = { id: shortRun.done.id };

      const rec = (id: number) => t.requests.find((r) => r.id === id)!;
      const l = rec(long.id);
      const s = rec(short.id);
      const reading = t.steps.filter((st) => st.t >= l.admitted! && st.t < l.promptDone!);
      expect(reading.length).toBeGreaterThanOrEqual(Math.floor(longPrompt.length / BATCH));
      for (const st of reading) {
        expect(st.decodeTokens).toBeGreaterThanOrEqual(1);            // the decoder got its token every step
        expect(st.decodeTokens + st.promptTokens).toBeLessThanOrEqual(BATCH);
      }
      // The short prompt went first in the step after it arrived (shortest remaining prompt first).
      expect(s.promptLegs).toHaveLength(1);
      expect(s.promptLegs[0]!.tokens).toBe(shortPrompt.length);
      expect(s.promptDone!).toBeLessThan(l.promptDone!);
    } finally {
      await eng.close();
    }
  });
});
