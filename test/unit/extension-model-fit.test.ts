// Choose Models' fit column: a file against a GPU's free memory (from the server's devices) and
// the free RAM, and for a file that does not fit, the largest one that would.
import { describe, expect, it } from 'vitest';
import type { DeviceMemory } from '../../contract/devices.js';
import { CATALOGUE, ROLE_SETTING } from '../../extension/models/catalogue.js';
import { expectedTokS, fileRows, fitChoices, fitOf, machineMemory, neededBytes, speedNote } from '../../extension/models/model-fit.js';
import { hubAccess, parseHubRef } from '../../common/hub/hub-ref.js';
import { listRepoFiles } from '../../common/hub/repo-files.js';
import { FakeHub } from '../helpers/fake-hub.js';

const GIB = 1 << 30;
const device = (name: string, type: string, free: number | null, replica: number | null = null): DeviceMemory =>
  ({ name, description: name, type, replica, memoryFree: free, memoryTotal: free, layers: null, planned: null });

describe('fitOf', () => {
  it('prefers the GPU with the most free memory, then RAM, and says when neither has room', () => {
    const mem = machineMemory(16 * GIB, [device('CPU', 'cpu', 16 * GIB), device('Vulkan0', 'gpu', 6 * GIB), device('CUDA0', 'gpu', 12 * GIB)]);
    expect(mem.gpus).toEqual([{ name: 'Vulkan0', free: 6 * GIB }, { name: 'CUDA0', free: 12 * GIB }]);
    expect(fitOf(8 * GIB, mem)).toEqual({ fits: true, where: 'CUDA0', text: 'fits CUDA0 (12.0 GiB free)' });
    expect(fitOf(13 * GIB, mem)).toEqual({ fits: true, where: 'CPU', text: 'fits in RAM on the CPU (16.0 GiB free); not in CUDA0 (12.0 GiB free)' });
    expect(fitOf(20 * GIB, mem)).toEqual({ fits: false, text: 'too big: needs about 22.0 GiB, 16.0 GiB free (CUDA0)' });
  });

  it('counts room for the KV cache and buffers beside the file: a file just under the free memory does not fit', () => {
    const mem = machineMemory(4 * GIB, []);
    expect(neededBytes(100 << 20)).toBe((100 << 20) + (512 << 20));
    expect(fitOf(3.9 * GIB, mem).fits).toBe(false);
    expect(fitOf(3 * GIB, mem)).toMatchObject({ fits: true, where: 'CPU' });
  });

  it('a device whose memory is unknown, or that is the CPU, is not a GPU to fit', () => {
    expect(machineMemory(GIB, [device('RPC0', 'gpu', null), device('CPU', 'cpu', 8 * GIB)]).gpus).toEqual([]);
  });
});

describe('fitChoices', () => {
  it('names the largest file that fits for each that does not, or says none does', () => {
    const files = [{ name: 'm-Q8_0.gguf', bytes: 8 * GIB }, { name: 'm-Q4_K_M.gguf', bytes: 4.5 * GIB }, { name: 'm-Q2_K.gguf', bytes: 3 * GIB }];
    const rows = fitChoices(files, machineMemory(6 * GIB, []));
    expect(rows.map((r) => [r.name, r.fit.fits, r.instead])).toEqual([
      ['m-Q8_0.gguf', false, 'm-Q4_K_M.gguf would fit'], ['m-Q4_K_M.gguf', true, null], ['m-Q2_K.gguf', true, null],
    ]);
    expect(fitChoices(files, machineMemory(GIB, []))[0]!.instead).toBe('no file of this model fits');
  });
});

describe('fileRows (the file list of Choose Models)', () => {
  it('lists a Hub repository\'s models with size and fit: the catalogue\'s quantisation first, then what fits, smallest first', async () => {
    const hub = await FakeHub.start();
    try {
      const file = (path: string, mib: number) => ({ path, body: Buffer.alloc(mib << 20) });
      hub.addRepo('org/m-GGUF', [
        file('m-Q8_0.gguf', 30), file('m-Q4_K_M.gguf', 20), file('m-Q2_K.gguf', 10),
        file('big/m-F16-00001-of-00002.gguf', 40), file('big/m-F16-00002-of-00002.gguf', 40), file('mmproj-m.gguf', 1),
      ]);
      const files = await listRepoFiles(hubAccess({ HF_ENDPOINT: hub.endpoint }), 'org/m-GGUF', new AbortController().signal);
      // 540 MiB of RAM: each needs its file + 512 MiB, so the 10 and 20 MiB files fit, 30 MiB and up do not.
      const rows = fileRows(files, 'Q8_0', machineMemory(540 << 20, []));
      expect(rows.map((r) => [r.path, r.description, r.fits])).toEqual([
        ['m-Q8_0.gguf', '30.0 MiB', false], ['m-Q2_K.gguf', '10.0 MiB', true], ['m-Q4_K_M.gguf', '20.0 MiB', true],
        ['big/m-F16-00001-of-00002.gguf', '80.0 MiB, 2 parts', false],
      ]);
      expect(rows[0]!.detail).toBe('too big: needs about 0.5 GiB, 0.5 GiB free in RAM; m-Q4_K_M.gguf would fit');
    } finally {
      await hub.close();
    }
  });
});

describe('the expected speed on the CPU', () => {
  it('scales the measured speed by size, and says where the number comes from', () => {
    const basis = { tokS: 40, bytes: 1.5 * GIB, model: 'coder-1.5b' };
    expect(expectedTokS(3 * GIB, basis)).toBe(20);
    expect(speedNote(6 * GIB, basis)).toBe('about 10 tok/s (scaled by size from 40 tok/s the server measured with coder-1.5b, 1.50 GiB)');
    expect(speedNote(30 * GIB, basis)).toBe('about 2.0 tok/s (scaled by size from 40 tok/s the server measured with coder-1.5b, 1.50 GiB)');
  });

  it('says it is unknown without a measurement, and never divides by nothing', () => {
    expect(speedNote(GIB, null)).toBe('speed unknown until the server has generated text');
    for (const basis of [{ tokS: 0, bytes: GIB, model: 'm' }, { tokS: 5, bytes: 0, model: 'm' }, { tokS: Number.NaN, bytes: GIB, model: 'm' }]) {
      expect(expectedTokS(GIB, basis), JSON.stringify(basis)).toBeNull();
    }
    expect(expectedTokS(0, { tokS: 5, bytes: GIB, model: 'm' })).toBeNull();
  });
});

describe('the catalogue', () => {
  it('offers every role a model, each a valid Hub reference with a role setting', () => {
    expect(Object.keys(ROLE_SETTING).sort()).toEqual(['chat', 'completion', 'embedding', 'nextEdit', 'rerank']);
    expect(ROLE_SETTING.nextEdit).toBe('nextEditModel');
    expect(CATALOGUE.filter((e) => e.role === 'nextEdit').map((e) => e.repo)).toEqual(['lmstudio-community/zeta-GGUF']);
    for (const role of Object.keys(ROLE_SETTING)) expect(CATALOGUE.some((e) => e.role === role), role).toBe(true);
    for (const e of CATALOGUE) expect(parseHubRef(`${e.repo}${e.quant ? `:${e.quant}` : ''}`).repo).toBe(e.repo);
  });
});
