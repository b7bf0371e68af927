// Vulkan0 as shipped (fp16 on) against the CPU, and `strata serve` / `strata devices` on it.
// Greedy tokens of two backends part at the first near-tie (random models have many), so the
// cross-backend check is teacher-forced on a peaked-logit model (makeTestModel's logitScale 8):
// the top-1 of Vulkan0 after the CPU's own continuation must be the CPU's token at ≥ 99% of
// positions (measured 99.6%: 255 of 256; the default scale gives 94.9%).
// flashAttn 'off' everywhere: lavapipe (Mesa 22.3.6) segfaults with flash attention on.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../backend/addon/loader.js';
import { teacherForced } from '../helpers/agreement.js';
import { ensureTestModel } from '../helpers/models.js';
import { setUpVulkan, skipNote } from '../helpers/vulkan.js';
import { EngineDriver, promptText } from './engine-driver.js';
import { json, startServer, type Running } from './server-helpers.js';

const vk = setUpVulkan();

describe.skipIf(!vk.ok)(`CPU vs Vulkan0${skipNote(vk)}`, () => {
  it('agree on the teacher-forced top-1 token at ≥ 99% of positions (peaked model)', async () => {
    const model = await ensureTestModel({ vocab: 'starcoder', logitScale: 8 });
    const base = { model, ctx: 256, slots: 1, threads: 2, flashAttn: 'off' as const, parkBudgetMiB: 0 };
    const cpu = await EngineDriver.load({ ...base, devices: ['CPU'] });
    const cases = [];
    try {
      for (let i = 0; i < 4; i++) {
        const prompt = cpu.tokens(promptText(`p${i}`, 16));
        cases.push({ prompt, continuation: (await cpu.run({ prompt, maxTokens: 64, ignoreEos: true })).ids });
      }
      // The CPU agrees with itself: the teacher-forced path reproduces greedy decoding.
      expect((await teacherForced(cpu, cases.slice(0, 1))).misses).toEqual([]);
    } finally {
      await cpu.close();
    }
    // Prompt-sensitive still: four prompts, four continuations.
    expect(new Set(cases.map((c) => c.continuation.join(','))).size).toBe(4);
    const gpu = await EngineDriver.load({ ...base, devices: ['Vulkan0'], gpuLayers: 99 });
    try {
      expect(gpu.engine.info.placement.map((p) => p.device)).toEqual(['Vulkan0']);
      const a = await teacherForced(gpu, cases);
      expect(a.total).toBe(256);
      expect(a.agree / a.total, `disagreements at [case, position] ${JSON.stringify(a.misses)}`).toBeGreaterThanOrEqual(0.99);
    } finally {
      await gpu.close();
    }
  });
});

describe.skipIf(!vk.ok)(`strata serve --devices Vulkan0 --gpu-layers 99 --flash-attn off${skipNote(vk)}`, () => {
  let s: Running;
  beforeAll(async () => {
    s = await startServer(await ensureTestModel({ vocab: 'starcoder' }), { deviceGroups: [['Vulkan0']], gpuLayers: 99, flashAttn: 'off' });
  });
  afterAll(async () => { await s?.close(); });

  it('/v1/devices places every layer and the KV cache on Vulkan0, from the installed backend', async () => {
    const r = await json(s.port, 'GET', '/v1/devices');
    expect(r.status).toBe(200);
    const rep = r.body.data[0];
    expect(rep.devices.map((d: { name: string }) => d.name)).toContain('Vulkan0');
    expect(rep.placement).toEqual([expect.objectContaining({ device: 'Vulkan0', layers: 4 })]);
    expect(rep.buffers.filter((b: { kind: string }) => b.kind === 'kv').map((b: { buffer: string }) => b.buffer)).toEqual(['Vulkan0']);
    expect(rep.backends.loaded).toContainEqual({ name: 'Vulkan', path: join(vk.ok ? vk.dir : '', 'libggml-vulkan.so') });
    expect(r.body.gpu_backends.installed.map((b: { kind: string }) => b.kind)).toContain('vulkan');
    // The engine uses a GPU-type device: nothing to suggest.
    expect(r.body.gpu_backends.suggestion).toBeNull();
  });

  it('answers a chat completion on the device', async () => {
    const c = await s.openai.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 });
    expect(c.choices[0]!.finish_reason).toBe('length');
    expect(c.usage!.completion_tokens).toBe(8);
  });
});

describe.skipIf(!vk.ok)(`strata devices${skipNote(vk)}`, () => {
  it('lists Vulkan0 with no flag once the backend is installed', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(packageRoot, 'dist', 'strata.mjs'), 'devices', '--json'], { env: process.env });
    const devices = JSON.parse(stdout) as Array<{ name: string; type: string; backend: string }>;
    expect(devices).toContainEqual(expect.objectContaining({ name: 'Vulkan0', type: 'gpu', backend: 'Vulkan' }));
  });
});
