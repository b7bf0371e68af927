// Choose Models' fit column against a real server's devices: on the CPU (no GPU reported) a file
// fits the RAM or not, with the expected speed scaled from the decode speed the server measured;
// on Vulkan0 (the prebuilt Vulkan backend on lavapipe, 2048 MiB) a file fits the device, only the
// RAM, or nothing, and one that does not fit names the file that would. The Hub's file list is a
// stand-in's (test/helpers/fake-hub.ts); the RAM is given (16 GiB) so the verdicts do not depend
// on what else runs on the machine; the devices and the speed are the server's.
import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubAccess } from '../../common/hub/hub-ref.js';
import { formatSize } from '../../common/hub/pick.js';
import { listRepoFiles, type HubFile } from '../../common/hub/repo-files.js';
import { StrataClient } from '../../extension/client/client.js';
import { expectedTokS, fileRows, machineMemory } from '../../extension/models/model-fit.js';
import { FakeHub } from '../helpers/fake-hub.js';
import { ensureTestModel } from '../helpers/models.js';
import { setUpVulkan, skipNote } from '../helpers/vulkan.js';
import { startServer, type Running } from './server-helpers.js';

const vk = setUpVulkan();
const GIB = 2 ** 30;
const RAM = 16 * GIB;
const REPO = 'org/coder-GGUF';
let hub: FakeHub;
let files: HubFile[] = [];
let tiny = '';

beforeAll(async () => {
  hub = await FakeHub.start();
  const file = (path: string, listedSize: number) => ({ path, body: Buffer.alloc(64), listedSize });
  // Q4_K_M fits lavapipe's 2048 MiB, Q8_0 only the RAM, F16 nothing.
  hub.addRepo(REPO, [file('coder-Q4_K_M.gguf', 0.75 * GIB), file('coder-Q8_0.gguf', 3 * GIB), file('coder-F16.gguf', 40 * GIB)]);
  files = await listRepoFiles(hubAccess({ HF_ENDPOINT: hub.endpoint }), REPO, new AbortController().signal);
  tiny = await ensureTestModel({ vocab: 'starcoder' });
});
afterAll(async () => { await hub?.close(); });

const rowOf = (rows: ReturnType<typeof fileRows>, name: string) => rows.find((r) => r.path === name)!;

describe('the fit on the CPU', () => {
  let srv: Running | undefined;
  afterAll(async () => { await srv?.close(); });

  it('fits the RAM or not, with the speed scaled from what the server measured, and names what would fit', async () => {
    srv = await startServer(tiny, { ctx: 512, slots: 1, deviceGroups: [['CPU']] });
    const client = new StrataClient({ baseUrl: srv.url });
    const devices = await client.devices();
    const mem = machineMemory(RAM, devices);
    expect(mem.gpus).toEqual([]);
    // Before any text is generated the server has no speed to give.
    expect(await client.decodeSpeed()).toBeNull();
    expect(rowOf(fileRows(files, null, mem, null), 'coder-Q8_0.gguf').detail).toBe('fits in RAM on the CPU (16.0 GiB free); speed unknown until the server has generated text');

    await srv.openai.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, temperature: 0 });
    const speed = (await client.decodeSpeed())!;
    expect(speed.model).toBe((await client.models())[0]!.id);
    // The weights' bytes the engine reports (what decoding reads per token), a little under the file's.
    const listed = await (await fetch(`${srv.url}/v1/models`)).json() as { data: Array<{ meta: { size: number } }> };
    expect(speed.bytes).toBe(listed.data[0]!.meta.size);
    expect(speed.bytes).toBeLessThan(statSync(tiny).size);
    expect(speed.tokS).toBeGreaterThan(0);

    const rows = fileRows(files, 'Q8_0', mem, speed);
    expect(rows.map((r) => [r.path, r.fits])).toEqual([['coder-Q8_0.gguf', true], ['coder-Q4_K_M.gguf', true], ['coder-F16.gguf', false]]);
    const q4 = expectedTokS(0.75 * GIB, speed)!;
    expect(q4).toBeCloseTo((speed.tokS * speed.bytes) / (0.75 * GIB), 6);
    // Four times the bytes, a quarter of the speed.
    expect(expectedTokS(3 * GIB, speed)! * 4).toBeCloseTo(q4, 6);
    const shown = (t: number): string => (t >= 10 ? Math.round(t).toString() : t.toFixed(1));
    expect(rowOf(rows, 'coder-Q4_K_M.gguf').detail).toBe(
      `fits in RAM on the CPU (16.0 GiB free); about ${shown(q4)} tok/s (scaled by size from ${shown(speed.tokS)} tok/s the server measured with ${speed.model}, ${formatSize(speed.bytes)})`);
    expect(rowOf(rows, 'coder-F16.gguf').detail).toBe('too big: needs about 44.0 GiB, 16.0 GiB free in RAM; coder-Q8_0.gguf would fit');
  });
});

describe.skipIf(!vk.ok)(`the fit on Vulkan0${skipNote(vk)}`, () => {
  let srv: Running | undefined;
  afterAll(async () => { await srv?.close(); });

  it('fits the device, only the RAM, or nothing, by the free memory the server reports for Vulkan0', async () => {
    if (!vk.ok) return;
    srv = await startServer(tiny, { ctx: 512, slots: 1, deviceGroups: [['Vulkan0']], flashAttn: 'off' }, undefined, { backendDirs: [vk.dir] });
    const client = new StrataClient({ baseUrl: srv.url });
    const mem = machineMemory(RAM, await client.devices());
    expect(mem.gpus.map((g) => g.name)).toEqual(['Vulkan0']);
    const free = mem.gpus[0]!.free;
    expect(free).toBeGreaterThan(1.25 * GIB); // room for the Q4_K_M and its 512 MiB
    expect(free).toBeLessThanOrEqual(2048 * 2 ** 20);
    const gib = (n: number): string => `${(n / GIB).toFixed(1)} GiB`;
    const rows = fileRows(files, null, mem, { tokS: 100, bytes: GIB, model: 'ignored on a GPU' });
    expect(rowOf(rows, 'coder-Q4_K_M.gguf').detail).toBe(`fits Vulkan0 (${gib(free)} free)`);
    // The CPU's speed says nothing of a GPU's; a row that falls back to the RAM carries it.
    expect(rowOf(rows, 'coder-Q8_0.gguf').detail).toMatch(new RegExp(`^fits in RAM on the CPU \\(16\\.0 GiB free\\); not in Vulkan0 \\(${gib(free).replace('.', '\\.')} free\\); about `));
    expect(rowOf(rows, 'coder-F16.gguf')).toMatchObject({ fits: false, detail: 'too big: needs about 44.0 GiB, 16.0 GiB free (Vulkan0); coder-Q8_0.gguf would fit' });
  });
});
