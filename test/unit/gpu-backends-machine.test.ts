// What a machine offers GPU backends (fake file-system roots), what each backend is missing and
// where to get it, the suggestion when a GPU goes unused, and the server's fallback log line.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeviceInfo } from '../../native/lib/addon.js';
import { parseLdconfig, resolveLibrary, type LibrarySearch } from '../../backend/gpu-backends/library-search.js';
import { probeMachine, type MachineReport } from '../../backend/gpu-backends/machine.js';
import {
  backendReadiness, describeLoadFailure, fallbackLine, missingFromDlerror, suggestBackend,
} from '../../backend/gpu-backends/readiness.js';

const roots: string[] = [];
afterEach(() => { for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true }); });

/** A fake machine: files under a temp root. */
function machineRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'strata-machine-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** Libraries resolve in the fake root's default folder only. */
const search: LibrarySearch = { ldLibraryPath: [], cache: new Map(), defaultDirs: ['/usr/lib/x86_64-linux-gnu'] };
const libFiles = (libs: string[]): Record<string, string> => Object.fromEntries(libs.map((l) => [`/usr/lib/x86_64-linux-gnu/${l}`, '']));
const env = { HOME: '/home/u' };

function nvidiaMachine(libs: string[]): MachineReport {
  const root = machineRoot({
    '/sys/bus/pci/devices/0000:01:00.0/class': '0x030000\n',
    '/sys/bus/pci/devices/0000:01:00.0/vendor': '0x10de\n',
    '/sys/bus/pci/devices/0000:01:00.0/device': '0x2684\n',
    '/sys/bus/pci/devices/0000:00:1f.0/class': '0x060100\n',
    '/proc/driver/nvidia/version': 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 2025\nGCC version: 12\n',
    '/usr/share/vulkan/icd.d/nvidia_icd.json': JSON.stringify({ ICD: { library_path: 'libGLX_nvidia.so.0' } }),
    ...libFiles(libs),
  });
  return probeMachine({ root, env, search });
}

const cpuOnly: DeviceInfo[] = [{ name: 'CPU', description: 'cpu', type: 'cpu', backend: 'CPU', memoryFree: 1, memoryTotal: 1 }];
const rpcOnly: DeviceInfo[] = [...cpuOnly, { name: 'RPC0', description: 'h:1', type: 'gpu', backend: 'RPC', memoryFree: 1, memoryTotal: 1 }];

describe('library search', () => {
  it('reads the ld.so cache for this architecture only, first entry winning', () => {
    const cache = parseLdconfig([
      '1234 libs found in cache `/etc/ld.so.cache\'',
      '\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda-13.0/lib/libcudart.so.13',
      '\tlibcudart.so.13 (libc6,x86-64) => /opt/other/libcudart.so.13',
      '\tlibvulkan.so.1 (libc6) => /usr/lib/i386-linux-gnu/libvulkan.so.1',
    ].join('\n'));
    expect([...cache]).toEqual([['libcudart.so.13', '/usr/local/cuda-13.0/lib/libcudart.so.13']]);
  });

  it('looks in LD_LIBRARY_PATH, then the cache, then the default folders', () => {
    const s: LibrarySearch = { ldLibraryPath: ['/a'], cache: new Map([['libx.so.1', '/c/libx.so.1']]), defaultDirs: ['/d'] };
    expect(resolveLibrary('libx.so.1', s, (p) => ['/a/libx.so.1', '/c/libx.so.1'].includes(p))).toBe('/a/libx.so.1');
    expect(resolveLibrary('libx.so.1', s, (p) => ['/c/libx.so.1', '/d/libx.so.1'].includes(p))).toBe('/c/libx.so.1');
    expect(resolveLibrary('libx.so.1', s, (p) => p === '/d/libx.so.1')).toBe('/d/libx.so.1');
    // A stale cache entry (file removed) is not an answer.
    expect(resolveLibrary('libx.so.1', s, () => false)).toBeNull();
  });
});

describe('machine probe', () => {
  it('finds PCI display controllers, the NVIDIA driver, Vulkan drivers and the libraries backends need', () => {
    const m = nvidiaMachine(['libvulkan.so.1', 'libcudart.so.13', 'libcuda.so.1']);
    expect(m.gpus).toEqual([{ pci: '0000:01:00.0', vendor: 'nvidia', vendorId: '0x10de', deviceId: '0x2684' }]);
    expect(m.nvidiaDriver).toBe('NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 2025');
    expect(m.vulkan.loader).toBe('/usr/lib/x86_64-linux-gnu/libvulkan.so.1');
    expect(m.vulkan.drivers).toEqual([{ manifest: '/usr/share/vulkan/icd.d/nvidia_icd.json', library: 'libGLX_nvidia.so.0', software: false }]);
    expect(m.libraries).toMatchObject({ 'libcudart.so.13': '/usr/lib/x86_64-linux-gnu/libcudart.so.13', 'libcublas.so.13': null, 'libcuda.so.1': expect.any(String) });
  });

  it('marks lavapipe as a software driver and follows VK_DRIVER_FILES', () => {
    const root = machineRoot({
      '/usr/share/vulkan/icd.d/lvp_icd.x86_64.json': JSON.stringify({ ICD: { library_path: '/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so' } }),
      '/opt/icd/custom.json': JSON.stringify({ ICD: { library_path: 'libcustom.so' } }),
      '/opt/icd/broken.json': 'not json',
    });
    expect(probeMachine({ root, env, search }).vulkan.drivers).toEqual([
      { manifest: '/usr/share/vulkan/icd.d/lvp_icd.x86_64.json', library: '/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so', software: true },
    ]);
    const m = probeMachine({ root, env: { ...env, VK_DRIVER_FILES: '/opt/icd' }, search });
    expect(m.vulkan.drivers.map((d) => d.library)).toEqual(['libcustom.so']);
    expect(m.gpus).toEqual([]);
    expect(m.nvidiaDriver).toBeNull();
  });
});

describe('readiness and suggestions', () => {
  it('names each missing CUDA library and where to get the runtime, not the toolkit', () => {
    const m = nvidiaMachine(['libvulkan.so.1', 'libcudart.so.13', 'libcuda.so.1']);
    const cuda = backendReadiness('cuda', m);
    expect(cuda.loads).toBe(false);
    expect(cuda.missing.map((x) => x.library)).toEqual(['libcublas.so.13']);
    expect(cuda.missing[0]!.hint).toContain('apt install libcublas-13-0');
    expect(cuda.missing[0]!.hint).toContain('pip install nvidia-cublas');
    expect(backendReadiness('cuda-ext', m).missing.map((x) => x.library)).toEqual(['libcudart.so.12', 'libcublas.so.12']);
    expect(backendReadiness('vulkan', m)).toMatchObject({ loads: true, missing: [], note: null });
  });

  it('suggests CUDA where its runtime is there, CUDA 12 as the fallback, else Vulkan', () => {
    const full = nvidiaMachine(['libvulkan.so.1', 'libcudart.so.13', 'libcublas.so.13', 'libcuda.so.1']);
    expect(suggestBackend(full, [], cpuOnly)).toMatchObject({ kind: 'cuda', reason: expect.stringContaining('an NVIDIA GPU (NVIDIA UNIX x86_64 Kernel Module  580.65.06') });
    const twelve = nvidiaMachine(['libvulkan.so.1', 'libcudart.so.12', 'libcublas.so.12', 'libcuda.so.1']);
    expect(suggestBackend(twelve, [], cpuOnly)?.kind).toBe('cuda-ext');
    const driverOnly = nvidiaMachine(['libvulkan.so.1', 'libcuda.so.1']);
    expect(suggestBackend(driverOnly, [], cpuOnly)?.kind).toBe('vulkan');
    // CUDA installed but its runtime missing: Vulkan runs on the same GPU meanwhile.
    expect(suggestBackend(full, ['cuda'], cpuOnly)?.kind).toBe('vulkan');
    // Nothing would load: say what CUDA needs.
    const bare = nvidiaMachine([]);
    const s = suggestBackend(bare, [], cpuOnly)!;
    expect(s.kind).toBe('cuda');
    expect(s.reason).toContain('libcudart.so.13 (the CUDA 13 runtime');
    expect(s.reason).toContain('libcuda.so.1 (the NVIDIA driver ships it');
  });

  it('suggests nothing when the engine uses a GPU, when there is none, or when everything is installed', () => {
    const full = nvidiaMachine(['libvulkan.so.1', 'libcudart.so.13', 'libcublas.so.13', 'libcuda.so.1']);
    const withGpu: DeviceInfo[] = [...cpuOnly, { name: 'CUDA0', description: 'RTX', type: 'gpu', backend: 'CUDA', memoryFree: 1, memoryTotal: 1 }];
    expect(suggestBackend(full, [], withGpu)).toBeNull();
    expect(suggestBackend(full, ['cuda', 'cuda-ext', 'vulkan'], cpuOnly)).toBeNull();
    // No GPU, even with Mesa's Intel and AMD Vulkan drivers installed and an RPC device in use.
    const root = machineRoot({
      '/usr/share/vulkan/icd.d/intel_icd.x86_64.json': JSON.stringify({ ICD: { library_path: 'libvulkan_intel.so' } }),
      '/sys/bus/pci/devices/0000:00:02.0/class': '0x030000', '/sys/bus/pci/devices/0000:00:02.0/vendor': '0x1234',
      ...libFiles(['libvulkan.so.1']),
    });
    expect(suggestBackend(probeMachine({ root, env, search }), [], rpcOnly)).toBeNull();
  });

  it('suggests Vulkan for an AMD or Intel GPU', () => {
    const root = machineRoot({
      '/sys/bus/pci/devices/0000:03:00.0/class': '0x030000', '/sys/bus/pci/devices/0000:03:00.0/vendor': '0x1002',
      '/usr/share/vulkan/icd.d/radeon_icd.x86_64.json': JSON.stringify({ ICD: { library_path: 'libvulkan_radeon.so' } }),
      ...libFiles(['libvulkan.so.1']),
    });
    expect(suggestBackend(probeMachine({ root, env, search }), [], rpcOnly))
      .toEqual({ kind: 'vulkan', reason: 'this machine has an AMD GPU that the engine does not use; the vulkan backend can run on it' });
  });
});

describe('load failures', () => {
  const failure = {
    path: '/home/u/.cache/strata/backends/80fb11ac73e6/cuda/libggml-cuda.so',
    error: 'libcublas.so.13: cannot open shared object file: No such file or directory',
  };

  it('name the missing library and where to get it', () => {
    expect(missingFromDlerror(failure.error)).toBe('libcublas.so.13');
    expect(missingFromDlerror('undefined symbol: ggml_foo')).toBeNull();
    expect(describeLoadFailure(failure)).toBe(
      `libggml-cuda.so (${failure.path}): ${failure.error}; libcublas.so.13 is missing: cuBLAS 13: \`apt install libcublas-13-0\` from NVIDIA's CUDA repository (https://developer.nvidia.com/cuda-downloads), or \`pip install nvidia-cublas\` and add its lib folder to LD_LIBRARY_PATH`);
  });

  it('make one log line that says where the engine runs instead', () => {
    expect(fallbackLine([], [{ device: 'CPU', layers: 4 }])).toBeNull();
    const line = fallbackLine([failure], [{ device: 'Vulkan0', layers: 4 }])!;
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toMatch(/^GPU backend did not load: libggml-cuda\.so .*libcublas\.so\.13 is missing: .*; the engine runs on Vulkan0 \(strata gpu list shows all it needs\)$/);
    expect(fallbackLine([failure], [{ device: 'Vulkan0', layers: 1 }, { device: 'CPU', layers: 3 }])).toMatch(/runs on Vulkan0 \+ CPU \(/);
  });
});
