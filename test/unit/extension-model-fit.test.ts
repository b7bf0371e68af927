// Choose Models' fit column: a file against a GPU's free memory (from the server's devices) and
// the free RAM, and for a file that does not fit, the largest one that would.
import { describe, expect, it } from 'vitest';
import type { DeviceMemory } from '../../contract/devices.js';
import { CATALOGUE, ROLE_SETTING } from '../../extension/models/catalogue.js';
import { fitChoices, fitOf, machineMemory, neededBytes } from '../../extension/models/modelFit.js';
import { parseHubRef } from '../../backend/hub/hub-ref.js';

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

describe('the catalogue', () => {
  it('offers every role a model, each a valid Hub reference with a role setting', () => {
    for (const role of Object.keys(ROLE_SETTING)) expect(CATALOGUE.some((e) => e.role === role), role).toBe(true);
    for (const e of CATALOGUE) expect(parseHubRef(`${e.repo}${e.quant ? `:${e.quant}` : ''}`).repo).toBe(e.repo);
  });
});
