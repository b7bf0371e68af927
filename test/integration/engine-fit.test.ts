// The fit to memory on the CPU (llama.cpp's fitter compiled into the addon): what it measures with
// the no-alloc load is what the real load allocates (weights, KV cache, compute buffers), it
// chooses the context the slots share when none is given (the training context when it fits, else
// what memory leaves), fitModel says the same as the load without loading, drafting contexts (MTP
// head, drafters, a draft model) count with the model, and bad fit options are refused naming the field.
import { describe, expect, it } from 'vitest';
import { loadAddon } from '../../backend/addon/loader.js';
import { ensureTestModel } from '../helpers/models.js';
import { bufferUse, closeTo, fitUse } from '../helpers/fit-buffers.js';
import { EngineDriver } from './engine-driver.js';

const round = (x: number): number => Math.round(x * 100) / 100;
/** MiB of weights the load put in buffers other than the mapped file (the CPU's extra buffer types). */
const buffersOutsideTheMap = (info: { buffers: { kind: string; buffer: string; mib: number }[] }): number =>
  info.buffers.filter((b) => b.kind === 'model' && !b.buffer.endsWith('_Mapped')).reduce((n, b) => n + b.mib, 0);

const base = { threads: 2, slots: 2, devices: [] as string[], parkBudgetMiB: 0, freeRamFloorMiB: 0 };

describe('fit to memory on the CPU', () => {
  it('measures what the load then allocates, and fitModel says the same without loading', async () => {
    const model = await ensureTestModel({ vocab: 'starcoder' });
    const eng = await EngineDriver.load({ model, ...base, ctx: 512, fit: true });
    try {
      const { fit, buffers } = eng.engine.info;
      expect(fit).toMatchObject({ status: 'fits', gpuLayers: 0, nLayer: 4, ctx: 512, slots: 2, kvType: 'f16', devices: [], reason: null, suggestions: [] });
      expect(fit!.host).toMatchObject({ device: 'Host', layers: 4 });
      expect(buffers.length).toBeGreaterThan(0);
      const measured = fitUse(fit!.host);
      const allocated = bufferUse(eng.engine.info, 'Host', []);
      // The mapped weights buffer spans the file from its first tensor to its last, so where the CPU's
      // extra buffer types (AMX, CPU_REPACK) took tensors lying between them, the span counts those
      // bytes again; the fit counts each tensor once. Exact without them (next test), bounded here.
      const extra = round(buffersOutsideTheMap(eng.engine.info));
      expect({ context: allocated.context, compute: allocated.compute }).toEqual({ context: measured.context, compute: measured.compute });
      expect(allocated.model).toBeGreaterThanOrEqual(measured.model - 0.011);
      expect(allocated.model).toBeLessThanOrEqual(measured.model + extra + 0.011);
      expect(measured.context).toBeGreaterThan(0);
      const alone = await loadAddon().fitModel({ model, ...base, ctx: 512 });
      expect(fitUse(alone.host)).toEqual(measured);
    } finally {
      await eng.close();
    }
  });

  it('measures exactly what the load allocates when the weights stay in the mapped file', async () => {
    const model = await ensureTestModel({ vocab: 'starcoder' });
    const eng = await EngineDriver.load({ model, ...base, ctx: 512, fit: true, cpuRepack: false });
    try {
      expect(eng.engine.info.buffers.map((b) => b.buffer)).not.toContain('AMX');
      const measured = fitUse(eng.engine.info.fit!.host);
      const allocated = bufferUse(eng.engine.info, 'Host', []);
      expect(closeTo(measured, allocated), `${JSON.stringify(measured)} vs ${JSON.stringify(allocated)}`).toBe(true);
    } finally {
      await eng.close();
    }
  });

  // The drafting context beside the model's: the MTP head's (an MTP context of the model, with a KV
  // cache of its own layer), a drafter's that reads the model's hidden states (made with the model's
  // context), or a draft model's (weights too).
  it.each([
    ['the MTP head', { shape: 'mtp' }, null],
    ['a hybrid model\'s MTP head and the recurrent states kept to roll drafts back', { shape: 'hybrid' }, null],
    ['an EAGLE-3 drafter', {}, 'eagle3'],
    ['a DFlash drafter', {}, 'dflash'],
    ['a draft model', {}, 'tiny'],
  ] as const)('counts %s with the model, as the load then allocates it', async (_what, target, drafter) => {
    const model = await ensureTestModel(target);
    const speculative = drafter ? { draftModel: await ensureTestModel({ shape: drafter }), draftPMin: 0 } : {};
    const alone = fitUse((await loadAddon().fitModel({ model, ...base, ctx: 512, speculative: drafter ? {} : { mtp: 'off' } })).host);
    const eng = await EngineDriver.load({ model, ...base, ctx: 512, fit: true, cpuRepack: false, speculative });
    try {
      const measured = fitUse(eng.engine.info.fit!.host);
      const allocated = bufferUse(eng.engine.info, 'Host', []);
      expect(closeTo(measured, allocated), `${JSON.stringify(measured)} vs ${JSON.stringify(allocated)}`).toBe(true);
      expect(measured.context).toBeGreaterThan(alone.context);
      expect(measured.compute).toBeGreaterThan(alone.compute);
      if (drafter) expect(measured.model).toBeGreaterThan(alone.model);
    } finally {
      await eng.close();
    }
  });

  // `--shape mtp`: GLM-4.5's architecture, 2 trunk layers and 1 NextN layer, 2 KV heads of 32 (K and
  // V in f16: 256 bytes a cell a layer). Each context keeps the KV of the layers its graph reads: the
  // model's the trunk's, the head's its NextN layer's (unpatched llama.cpp gives both every layer).
  it('gives the MTP head the KV of its own layer alone, and the model the KV of its trunk alone', async () => {
    const model = await ensureTestModel({ shape: 'mtp' });
    const layerMiB = (512 * 2 * 256) / 2 ** 20;  // ctx 512 on each of 2 slots
    const alone = fitUse((await loadAddon().fitModel({ model, ...base, ctx: 512, speculative: { mtp: 'off' } })).host);
    expect(alone.context).toBe(2 * layerMiB);
    const eng = await EngineDriver.load({ model, ...base, ctx: 512, fit: true, speculative: { mtp: 'on' } });
    try {
      expect(fitUse(eng.engine.info.fit!.host).context).toBe(3 * layerMiB);
      expect(bufferUse(eng.engine.info, 'Host', []).context).toBe(3 * layerMiB);
    } finally {
      await eng.close();
    }
  });

  it('chooses the context the slots share when none is given: the training context when it fits, said in the changes', async () => {
    const model = await ensureTestModel({ vocab: 'starcoder' });
    const r = await loadAddon().fitModel({ model, ...base });
    expect(r).toMatchObject({ status: 'fits', ctx: 4096, pool: 4096, unified: true, slots: 2 });
    expect(r.changes).toEqual(['ctx 4096 shared by the slots (the training context)']);
    // The asked plan (what the model pool budgets): an automatic pool is measured at fitCtxMin x slots.
    const asked = await loadAddon().fitModel({ model, ...base, fitCtxMin: 1024 }, { asked: true });
    expect(asked).toMatchObject({ ctx: 2048, pool: 2048, unified: true, changes: [] });
    expect(asked.host.context).toBe(r.host.context / 2);
    // A context per slot stays one.
    expect(await loadAddon().fitModel({ model, ...base, ctx: 1024 }, { asked: true })).toMatchObject({ ctx: 1024, pool: 2048, unified: false });
  });

  it('shrinks the shared context to what memory leaves, at least fitCtxMin x slots, and loads it on the CPU', async () => {
    const model = await ensureTestModel({ vocab: 'starcoder', ctxTrain: 32_768 });
    // A margin no machine has: the least pool, which loads on the CPU (weights are mapped) as an unfitted one would.
    const tight = { ...base, fitMarginMiB: 1 << 24 };
    const r = await loadAddon().fitModel({ model, ...tight });
    expect(r).toMatchObject({ status: 'adjusted', ctx: 8192, pool: 8192, unified: true });
    expect(r.changes).toEqual(['ctx 8192 shared by the slots (the most that fits; training context 32768)']);
    const eng = await EngineDriver.load({ model, ...tight, fit: 'auto' });
    try {
      expect(eng.engine.info).toMatchObject({ ctx: 8192, ctxPool: 8192, kvUnified: true, trainCtx: 32_768 });
    } finally {
      await eng.close();
    }
  });

  it('refuses bad fit options, naming them', async () => {
    const model = await ensureTestModel({ vocab: 'starcoder' });
    const fitModel = loadAddon().fitModel;
    await expect(fitModel({ model, fit: 'maybe' as never })).rejects.toThrow(/fit must be true, false or 'auto'/);
    await expect(fitModel({ model, fitMarginMiB: -1 })).rejects.toThrow(/fitMarginMiB/);
    await expect(fitModel({ model, fitCtxMin: 3 })).rejects.toThrow(/fitCtxMin/);
    await expect(fitModel({ model, fitReserved: { Vulkan0: 'a lot' as never } })).rejects.toThrow(/fitReserved\.Vulkan0/);
    await expect(fitModel({ model: '/nonexistent.gguf' })).rejects.toThrow(/model file not found/);
  });
});
