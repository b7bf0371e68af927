// The model pool's per-device budget and pinned models, over scripted runtimes and scripted
// devices (no engine): a load that does not fit a device unloads the least recently used idle model
// holding memory on that device (not one that holds nothing there), a device that reports its whole
// memory as free (lavapipe) still counts what our models hold, a pinned model is never unloaded by
// LRU pressure or idle time, and each runtime is made knowing what the others hold.
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../backend/http/app-context.js';
import type { Logger } from '../../backend/log/logger.js';
import { silentLogger } from '../../backend/log/logger.js';
import { deviceBytesOf } from '../../backend/model-pool/device-use.js';
import { ModelPool, type DeviceBytes, type MeasuredNeeds, type PoolModelSpec, type PoolRuntime } from '../../backend/model-pool/model-pool.js';

const GiB = 2 ** 30;

class ScriptedRuntime implements PoolRuntime {
  started = false;
  closed = false;
  readonly app = {} as AppContext;
  constructor(readonly name: string, private readonly use: DeviceBytes, readonly held: DeviceBytes) {}
  async start(): Promise<void> { this.started = true; }
  async close(): Promise<void> { this.closed = true; }
  deviceUse(): DeviceBytes { return this.started && !this.closed ? this.use : {}; }
}

interface Model { name: string; needs: DeviceBytes; pinned?: boolean }

/**
 * A pool over scripted models and devices. `reportsUse`: the devices report our models' memory as
 * used (CUDA); false: they report their whole memory as free (lavapipe).
 */
function harness(models: Model[], totals: DeviceBytes, o: { reportsUse?: boolean; maxLoaded?: number; idleMs?: number; margin?: number } = {}) {
  const clock = { t: 1000 };
  const made: ScriptedRuntime[] = [];
  const warnings: string[] = [];
  const log = { ...silentLogger, warn: (msg: string) => { warnings.push(msg); } } as Logger;
  const specs: PoolModelSpec[] = models.map((m) => ({ name: m.name, path: `/models/${m.name}.gguf`, role: null, ...(m.pinned ? { pinned: true } : {}) }));
  const live = () => made.filter((r) => r.started && !r.closed);
  const pool = new ModelPool<PoolModelSpec>({
    specs, log, maxLoaded: o.maxLoaded ?? null, ramBudgetBytes: 1e15, idleMs: o.idleMs ?? 0, now: () => clock.t,
    deviceMarginBytes: o.margin ?? 0,
    estimate: async () => 5 * GiB,
    make: (spec, held) => {
      const r = new ScriptedRuntime(spec.name, models.find((m) => m.name === spec.name)!.needs, held);
      made.push(r);
      return r;
    },
    deviceNeeds: async (spec): Promise<MeasuredNeeds> => ({
      hostBytes: 300 * 2 ** 20,
      devices: Object.entries(models.find((m) => m.name === spec.name)!.needs).map(([device, bytes]) => {
        const used = live().reduce((n, r) => n + (r.deviceUse()[device] ?? 0), 0);
        return { device, bytes, total: totals[device]!, free: o.reportsUse === false ? totals[device]! : totals[device]! - used };
      }),
    }),
  });
  const loaded = () => pool.rows().filter((r) => r.state === 'loaded').map((r) => r.name).sort();
  const use = async (name: string) => { clock.t += 1000; (await pool.acquire(name)).release(); };
  return { pool, clock, made, warnings, loaded, use };
}

describe('the model pool budgets each device', () => {
  for (const reportsUse of [true, false]) {
    it(`unloads the least recently used model holding memory on the device that is short, not one elsewhere (device ${reportsUse ? 'reports' : 'does not report'} our use)`, async () => {
      const h = harness([
        { name: 'a', needs: { CUDA0: 6 * GiB } }, { name: 'b', needs: { CUDA1: 6 * GiB } }, { name: 'c', needs: { CUDA0: 6 * GiB } },
      ], { CUDA0: 10 * GiB, CUDA1: 10 * GiB }, { reportsUse });
      await h.use('b'); // b is the least recently used model, but on CUDA1
      await h.use('a');
      expect(h.loaded()).toEqual(['a', 'b']);
      await h.use('c');
      expect(h.loaded()).toEqual(['b', 'c']);
      expect(h.made.find((r) => r.name === 'a')!.closed).toBe(true);
      // The new model's engines were told what the others hold (b on CUDA1), a's memory no longer among it.
      expect(h.made.find((r) => r.name === 'c')!.held).toEqual({ CUDA1: 6 * GiB });
      expect(h.pool.rows().find((r) => r.name === 'c')!.device_memory).toEqual({ CUDA0: 6 * GiB });
      // The host RAM it is budgeted with is the measured host part, not the file-based estimate.
      expect(h.pool.rows().find((r) => r.name === 'c')!.memory_estimate).toBe(300 * 2 ** 20);
    });
  }

  it('counts the margin: two models that fit only without it do not share a device', async () => {
    const h = harness([{ name: 'a', needs: { Vulkan0: 900 * 2 ** 20 } }, { name: 'b', needs: { Vulkan0: 900 * 2 ** 20 } }],
      { Vulkan0: 2 * GiB }, { reportsUse: false, margin: 256 * 2 ** 20 });
    await h.use('a');
    await h.use('b');
    expect(h.loaded()).toEqual(['b']);
    const loose = harness([{ name: 'a', needs: { Vulkan0: 900 * 2 ** 20 } }, { name: 'b', needs: { Vulkan0: 900 * 2 ** 20 } }],
      { Vulkan0: 2 * GiB }, { reportsUse: false, margin: 64 * 2 ** 20 });
    await loose.use('a');
    await loose.use('b');
    expect(loose.loaded()).toEqual(['a', 'b']);
  });

  it('unloads as many as the device needs, least recently used first', async () => {
    const h = harness([
      { name: 'a', needs: { CUDA0: 3 * GiB } }, { name: 'b', needs: { CUDA0: 3 * GiB } }, { name: 'c', needs: { CUDA0: 3 * GiB } },
      { name: 'big', needs: { CUDA0: 7 * GiB } },
    ], { CUDA0: 10 * GiB });
    await h.use('a');
    await h.use('b');
    await h.use('c');
    await h.use('big');
    // 1 GiB free: a goes (4), then b (7); c, the most recently used, stays.
    expect(h.loaded()).toEqual(['big', 'c']);
    expect(h.made.filter((r) => r.closed).map((r) => r.name)).toEqual(['a', 'b']);
  });
});

describe('pinned models', () => {
  it('are never unloaded to make room on a device: the new model loads beside them and the log says why it gets less', async () => {
    const h = harness([{ name: 'coder', needs: { CUDA0: 6 * GiB }, pinned: true }, { name: 'chat', needs: { CUDA0: 6 * GiB } }], { CUDA0: 10 * GiB });
    await h.use('coder');
    await h.use('chat');
    expect(h.loaded()).toEqual(['chat', 'coder']);
    expect(h.warnings.join('\n')).toMatch(/chat needs 6144 MiB on CUDA0, 4096 MiB is free beside the margin and coder \(pinned or busy\) hold the rest; its fit places fewer layers there/);
    expect(h.made.find((r) => r.name === 'chat')!.held).toEqual({ CUDA0: 6 * GiB });
  });

  it('are never the LRU victim under --models-max, even when least recently used', async () => {
    const h = harness([{ name: 'coder', needs: {}, pinned: true }, { name: 'chat', needs: {} }, { name: 'other', needs: {} }], {}, { maxLoaded: 2 });
    await h.use('coder');
    await h.use('chat');
    await h.use('other');
    expect(h.loaded()).toEqual(['coder', 'other']);
    await h.use('chat');
    expect(h.loaded()).toEqual(['chat', 'coder']);
    // Only pinned models left to unload: the load is refused, saying so.
    const only = harness([{ name: 'coder', needs: {}, pinned: true }, { name: 'chat', needs: {} }], {}, { maxLoaded: 1 });
    await only.use('coder');
    await expect(only.use('chat')).rejects.toMatchObject({ status: 503, code: 'models_busy', message: expect.stringContaining('coder (pinned)') });
    expect(only.pool.rows().find((r) => r.name === 'coder')).toMatchObject({ state: 'loaded', pinned: true });
  });

  it('are never unloaded for idling (injected clock); an explicit unload still unloads them', async () => {
    const h = harness([{ name: 'coder', needs: {}, pinned: true }, { name: 'chat', needs: {} }], {}, { idleMs: 60_000 });
    await h.use('coder');
    await h.use('chat');
    h.clock.t += 10 * 60_000;
    expect(await h.pool.sweepIdle()).toEqual(['chat']);
    h.clock.t += 24 * 3_600_000;
    expect(await h.pool.sweepIdle()).toEqual([]);
    expect(h.loaded()).toEqual(['coder']);
    expect(await h.pool.unload('coder')).toEqual({ model: 'coder', state: 'unloaded' });
  });
});

describe('runtimes made before other models held device memory', () => {
  it('a prepared, never started runtime is made anew once others hold memory, so its fit knows', async () => {
    const h = harness([{ name: 'a', needs: { Vulkan0: GiB } }, { name: 'b', needs: { Vulkan0: GiB } }], { Vulkan0: 4 * GiB }, { reportsUse: false });
    const prepared = h.pool.prepare('b') as ScriptedRuntime;
    await h.use('a');
    await h.use('b');
    expect(prepared.closed).toBe(true);
    expect(prepared.started).toBe(false);
    const b = h.made.filter((r) => r.name === 'b');
    expect(b).toHaveLength(2);
    expect(b[1]!.held).toEqual({ Vulkan0: GiB });
    expect(h.loaded()).toEqual(['a', 'b']);
  });
});

describe('what a loaded model holds per device', () => {
  it('sums llama.cpp\'s buffers named after each offload device (RPC ones by their prefix); host buffers belong to none', () => {
    const MiB = 2 ** 20;
    const use = deviceBytesOf({
      placement: [
        { device: 'CUDA0', layers: 10, memoryFree: 0, memoryTotal: 0 }, { device: 'RPC0', layers: 10, memoryFree: 0, memoryTotal: 0 },
        { device: 'CPU', layers: 4, memoryFree: 0, memoryTotal: 0 },
      ],
      buffers: [
        { kind: 'model', buffer: 'CUDA0', mib: 1000 }, { kind: 'kv', buffer: 'CUDA0', mib: 96 }, { kind: 'compute', buffer: 'CUDA0', mib: 300.5 },
        { kind: 'model', buffer: 'RPC0[127.0.0.1:50052]', mib: 800 }, { kind: 'kv', buffer: 'RPC0[127.0.0.1:50052]', mib: 64 },
        { kind: 'model', buffer: 'CPU_Mapped', mib: 260 }, { kind: 'output', buffer: 'CUDA_Host', mib: 0.6 }, { kind: 'compute', buffer: 'CUDA_Host', mib: 12 },
      ],
    });
    expect(use).toEqual({ CUDA0: Math.round(1396.5 * MiB), RPC0: 864 * MiB });
    expect(deviceBytesOf({ placement: [{ device: 'CPU', layers: 4, memoryFree: 0, memoryTotal: 0 }], buffers: [{ kind: 'model', buffer: 'CPU', mib: 7 }] })).toEqual({});
  });
});
