// The CPU path with the real probe child and the real engine: the best variant is made to die in
// its probe (the test-only switch kills the probe process on that variant, as a mishandled CPU
// feature would), and the server serves on the next variant, says so once in its log and in
// /v1/devices. On an AMX machine the best variant is sapphirerapids, whose AMX kernels run in
// every other test of the suite (native/patches/0001 fixes them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBE_KILL_ENV } from '../../backend/engine/cpu-path.js';
import { loadAddon } from '../../backend/addon/loader.js';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, startServer, type Running } from './server-helpers.js';

const variants = loadAddon().cpuVariants().filter((v) => v.score > 0);
let server: Running;
let saved: string | undefined;

beforeAll(async () => {
  saved = process.env[PROBE_KILL_ENV];
  process.env[PROBE_KILL_ENV] = variants[0]!.name;
  server = await startServer(await ensureTestModel({ vocab: 'starcoder' }));
});
afterAll(async () => {
  await server?.close();
  if (saved === undefined) delete process.env[PROBE_KILL_ENV];
  else process.env[PROBE_KILL_ENV] = saved;
});

describe.skipIf(variants.length < 2)('cpu path (real probe)', () => {
  it('serves on the next variant when the best one dies in its probe, and says so', async () => {
    const [best, next] = [variants[0]!.name, variants[1]!.name];
    const devices = await json(server.port, 'GET', '/v1/devices');
    expect(devices.body.cpu).toMatchObject({ variant: next, repack: true });
    expect(devices.body.cpu.probes[0]).toMatchObject({ variant: best, repack: true, ok: false, reason: 'signal SIGSEGV' });
    expect(devices.body.cpu.note).toBe(`${best} (repack on) failed its probe (signal SIGSEGV); using ${next} (repack on)`);
    expect(devices.body.data[0].cpu).toEqual({ variant: next, repack: true, deterministic: 0 });
    expect(devices.body.data[0].backends.loaded.map((b: { path: string }) => b.path.split('/').pop())).toContain(`libggml-cpu-${next}.so`);
    expect(server.logs.filter((l) => l.includes('failed its probe'))).toHaveLength(1);
    // A 60-token prompt on q8_0 (the shape that crashed on AMX) answers on that path.
    const prompt = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    const r = await server.openai.completions.create({ model: 'm', prompt, ...greedy(4) });
    expect(r.choices[0]!.finish_reason).toBe('length');
    expect(r.usage!.completion_tokens).toBe(4);
  });
});
