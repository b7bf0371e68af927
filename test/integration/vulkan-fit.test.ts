// The fit to memory on a GPU-type device: Vulkan0 through the prebuilt Vulkan backend on lavapipe
// (2048 MiB reported, flash attention off: lavapipe segfaults with it). What the fit measures per
// device is what the load allocates there (an EAGLE-3 drafter's too); a plan that does not fit is refused at load with the
// single changes that would fit (each of which then fits); the fitter moves layers off the device
// when it must and says what would keep them all; in a server, /v1/devices carries the fit, and a
// model that does not fit beside another unloads it (the pool's budget per device, from the fit
// probe, with lavapipe's "all free" report corrected by what our models hold).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAddon } from '../../backend/addon/loader.js';
import { parseDevicesAndFit } from '../../contract/devices.js';
import type { EngineOptions } from '../../native/lib/addon.js';
import { bufferUse, closeTo, fitUse } from '../helpers/fit-buffers.js';
import { ensureTestModel } from '../helpers/models.js';
import { setUpVulkan, skipNote } from '../helpers/vulkan.js';
import { EngineDriver } from './engine-driver.js';
import { json, startServer } from './server-helpers.js';

const vk = setUpVulkan();
const MiB = 2 ** 20;
const base: Omit<EngineOptions, 'onEvents' | 'model'> = { threads: 2, flashAttn: 'off', freeRamFloorMiB: 0, parkBudgetMiB: 0, devices: ['Vulkan0'] };

let tiny = '';
let half = '';  // the 0.5B stand-in: 988 MB of f16 weights, 12 KiB of KV per token
beforeAll(async () => {
  if (!vk.ok) return;
  tiny = await ensureTestModel({ vocab: 'starcoder' });
  half = await ensureTestModel({ vocab: 'qwen2.5-coder', shape: '0.5b', quant: 'f16' });
});

describe.skipIf(!vk.ok)(`fit to memory on Vulkan0${skipNote(vk)}`, () => {
  it('measures per device what the load then allocates there (weights, KV, compute), the layers as placed', async () => {
    if (!vk.ok) return;
    const eng = await EngineDriver.load({ model: tiny, ...base, backendDirs: [vk.dir], slots: 2, ctx: 512, fit: true });
    try {
      const { fit, placement } = eng.engine.info;
      expect(fit).toMatchObject({ status: 'fits', gpuLayers: 5, nLayer: 4 });
      expect(fit!.devices.map((d) => [d.device, d.layers, d.free, d.total])).toEqual([['Vulkan0', 4, 2048 * MiB, 2048 * MiB]]);
      expect(placement).toEqual([expect.objectContaining({ device: 'Vulkan0', layers: 4 })]);
      for (const [measured, device] of [[fit!.devices[0]!, 'Vulkan0'], [fit!.host, 'Host']] as const) {
        const a = fitUse(measured);
        const b = bufferUse(eng.engine.info, device, ['Vulkan0']);
        expect(closeTo(a, b), `${device}: fit ${JSON.stringify(a)}, buffers ${JSON.stringify(b)}`).toBe(true);
      }
      expect(fitUse(fit!.devices[0]!).context).toBeGreaterThan(0); // the KV cache is on the device
    } finally {
      await eng.close();
    }
  });

  it('counts an EAGLE-3 drafter with the model on the device (its context measured beside the model\'s), as the load then allocates it', async () => {
    if (!vk.ok) return;
    const speculative = { draftModel: await ensureTestModel({ vocab: 'starcoder', shape: 'eagle3' }), draftPMin: 0 };
    const alone = await loadAddon().fitModel({ model: tiny, ...base, backendDirs: [vk.dir], slots: 2, ctx: 512 });
    const eng = await EngineDriver.load({ model: tiny, ...base, backendDirs: [vk.dir], slots: 2, ctx: 512, fit: true, speculative });
    try {
      const { fit } = eng.engine.info;
      for (const [measured, device] of [[fit!.devices[0]!, 'Vulkan0'], [fit!.host, 'Host']] as const) {
        const a = fitUse(measured);
        const b = bufferUse(eng.engine.info, device, ['Vulkan0']);
        expect(closeTo(a, b), `${device}: fit ${JSON.stringify(a)}, buffers ${JSON.stringify(b)}`).toBe(true);
      }
      const [withDrafter, without] = [fitUse(fit!.devices[0]!), fitUse(alone.devices[0]!)];
      expect(withDrafter.model).toBeGreaterThan(without.model);
      expect(withDrafter.context).toBeGreaterThan(without.context);
    } finally {
      await eng.close();
    }
  });

  it('a plan that does not fit is refused at load with the single changes that would fit, and each of them fits', async () => {
    if (!vk.ok) return;
    const asked = { model: half, ...base, backendDirs: [vk.dir], slots: 4, ctx: 32768, gpuLayers: 99, fitMarginMiB: 256 };
    await expect(EngineDriver.load({ ...asked, fit: true })).rejects.toThrow(
      /does not fit in memory: Vulkan0 needs 2252 MiB of its 2048 MiB free; it would fit with slots 2, ctx 16384 or gpuLayers 19$/);
    for (const change of [{ slots: 2 }, { ctx: 16384 }, { gpuLayers: 19 }]) {
      const again = await loadAddon().fitModel({ ...asked, ...change }, { asked: true });
      expect(again.status, JSON.stringify(change)).toBe('fits');
    }
  });

  it('without --gpu-layers the fitter moves layers off the device, says so, and what would keep them all there', async () => {
    if (!vk.ok) return;
    const report = await loadAddon().fitModel({ model: half, ...base, backendDirs: [vk.dir], slots: 4, ctx: 32768, fitMarginMiB: 256 });
    expect(report).toMatchObject({ status: 'adjusted', gpuLayers: 19, nLayer: 24 });
    expect(report.changes).toEqual(['gpuLayers 25 -> 19 (of 25; the rest on the CPU)']);
    expect(report.devices[0]!.layers + report.host.layers).toBe(24);
    expect(report.devices[0]!.free - (report.devices[0]!.model + report.devices[0]!.context + report.devices[0]!.compute)).toBeGreaterThanOrEqual(256 * MiB);
    expect(report.suggestions.map((s) => s.change)).toEqual(['slots 2', 'ctx 16384']);
  });

  it('memory other models hold that lavapipe does not report counts against the device', async () => {
    if (!vk.ok) return;
    const free = await loadAddon().fitModel({ model: tiny, ...base, backendDirs: [vk.dir], slots: 2, ctx: 512 }, { asked: true });
    const held = await loadAddon().fitModel({ model: tiny, ...base, backendDirs: [vk.dir], slots: 2, ctx: 512, fitReserved: { Vulkan0: 2000 * MiB } }, { asked: true });
    expect(free.devices[0]!.free).toBe(2048 * MiB);
    expect(held.devices[0]!.free).toBe(48 * MiB);
    expect(held.status).toBe('does_not_fit');
    expect(held.reason).toMatch(/^Vulkan0 needs \d+ MiB of its 48 MiB free$/);
  });
});

describe.skipIf(!vk.ok)(`a server fitting models to Vulkan0${skipNote(vk)}`, () => {
  let srv: Awaited<ReturnType<typeof startServer>> | null = null;
  afterAll(async () => { await srv?.close(); });

  it('shows the fit in /v1/devices and unloads the model holding Vulkan0 when the next one does not fit beside it', { timeout: 300_000 }, async () => {
    if (!vk.ok) return;
    const models = [
      { name: 'a', path: tiny, role: null, settings: {} },
      { name: 'b', path: await ensureTestModel({ vocab: 'starcoder', seed: 3 }), role: null, settings: {} },
    ];
    // A margin that leaves room on lavapipe's 2048 MiB for one of the two models, not both.
    const need = await loadAddon().fitModel({ model: tiny, ...base, backendDirs: [vk.dir], slots: 2, ctx: 512, batch: 64, threads: 2 }, { asked: true });
    const bytes = need.devices[0]!.model + need.devices[0]!.context + need.devices[0]!.compute;
    const margin = Math.floor((2048 * MiB - 1.5 * bytes) / MiB);
    srv = await startServer(tiny, {
      models, model: tiny, ctx: 512, slots: 2, deviceGroups: [['Vulkan0']], flashAttn: 'off', fit: 'on', fitMarginMib: margin,
    }, undefined, { backendDirs: [vk.dir] });
    const devicesOf = async () => parseDevicesAndFit((await json(srv!.port, 'GET', '/v1/devices')).body);
    const a = await devicesOf();
    expect(a.fit).toEqual([expect.objectContaining({ replica: 0, status: 'fits', summary: '5 of 5 layers on Vulkan0 · ctx 512 × 2 slots · f16 KV' })]);
    const row = a.devices.find((d) => d.name === 'Vulkan0')!;
    expect(row.planned!.bytes).toBe(bytes);
    expect(row.planned!.margin).toBe(2048 * MiB - bytes);
    const held = srv.server.pool.rows().find((r) => r.name === 'a')!.device_memory;
    expect(Object.keys(held)).toEqual(['Vulkan0']);

    const answer = await srv.openai.chat.completions.create({ model: 'b', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, temperature: 0 });
    expect(answer.model).toBe('b');
    const rows = srv.server.pool.rows();
    expect(rows.map((r) => [r.name, r.state])).toEqual([['a', 'unloaded'], ['b', 'loaded']]);
    expect(srv.logs.join('\n')).toMatch(/model unloaded.*to make room on Vulkan0 for b/);
    const metrics = (await json(srv.port, 'GET', '/metrics')).body;
    expect(metrics.models.device_margin).toBe(margin * MiB);
    expect(Object.keys(metrics.models.data[1].device_memory)).toEqual(['Vulkan0']);
  });
});
