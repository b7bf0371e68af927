// Whether each pinned GPU backend can run on this machine (its libraries resolve, there is a
// GPU for it), what to install when it cannot, and which backend to suggest when the machine has
// a GPU that the engine does not use. Pure functions over a MachineReport.
import type { DeviceInfo } from '../../native/lib/addon.js';
import type { MachineReport } from './machine.js';
import { GPU_BACKEND_KINDS, PIN, type GpuBackendKind, type Pin } from './pin.js';

export interface MissingLibrary { library: string; hint: string }

export interface BackendReadiness {
  kind: GpuBackendKind;
  /** Every library it needs resolves, so it loads (whether it finds a device is the device list's answer). */
  loads: boolean;
  missing: MissingLibrary[];
  /** What else stands in its way (no NVIDIA GPU, no Vulkan driver, only a software one), or null. */
  note: string | null;
}

export interface Suggestion { kind: GpuBackendKind; reason: string }

const CUDA_REPO = "NVIDIA's CUDA repository (https://developer.nvidia.com/cuda-downloads)";

/** Where to get a library a backend needs (the runtime, not the toolkit). */
export function missingLibraryHint(library: string): string {
  switch (library) {
    case 'libvulkan.so.1':
      return 'the Vulkan loader: `apt install libvulkan1` (Debian, Ubuntu), `dnf install vulkan-loader` (Fedora)';
    case 'libcuda.so.1':
      return 'the NVIDIA driver ships it: install the driver for your GPU (CUDA 13 needs driver 580 or newer, CUDA 12 driver 525 or newer)';
    case 'libcudart.so.13':
      return `the CUDA 13 runtime: \`apt install cuda-cudart-13-0\` from ${CUDA_REPO}, or \`pip install nvidia-cuda-runtime\` and add its lib folder to LD_LIBRARY_PATH`;
    case 'libcublas.so.13':
      return `cuBLAS 13: \`apt install libcublas-13-0\` from ${CUDA_REPO}, or \`pip install nvidia-cublas\` and add its lib folder to LD_LIBRARY_PATH`;
    case 'libcudart.so.12':
      return `the CUDA 12 runtime: \`apt install cuda-cudart-12-8\` (any 12.x) from ${CUDA_REPO}, or \`pip install nvidia-cuda-runtime-cu12\` and add its lib folder to LD_LIBRARY_PATH`;
    case 'libcublas.so.12':
      return `cuBLAS 12: \`apt install libcublas-12-8\` (any 12.x) from ${CUDA_REPO}, or \`pip install nvidia-cublas-cu12\` and add its lib folder to LD_LIBRARY_PATH`;
    default:
      return 'install the package that provides it and make sure the loader finds it (ldconfig or LD_LIBRARY_PATH)';
  }
}

export function backendReadiness(kind: GpuBackendKind, m: MachineReport, pin: Pin = PIN): BackendReadiness {
  const missing = pin.gpuBackends[kind].needs
    .filter((lib) => !m.libraries[lib])
    .map((library) => ({ library, hint: missingLibraryHint(library) }));
  let note: string | null = null;
  if (kind === 'vulkan') {
    if (m.vulkan.drivers.length === 0) {
      note = 'no Vulkan driver is installed (NVIDIA: its driver ships one; AMD, Intel: `apt install mesa-vulkan-drivers`)';
    } else if (m.vulkan.drivers.every((d) => d.software)) {
      note = 'only a software Vulkan driver (lavapipe) is installed: ggml uses it only with GGML_VK_VISIBLE_DEVICES=0, and it is slower than the CPU backend (for tests)';
    }
  } else if (m.nvidiaDriver === null && !m.gpus.some((g) => g.vendor === 'nvidia')) {
    note = 'no NVIDIA GPU found';
  }
  return { kind, loads: missing.length === 0, missing, note };
}

export function allReadiness(m: MachineReport, pin: Pin = PIN): BackendReadiness[] {
  return GPU_BACKEND_KINDS.map((k) => backendReadiness(k, m, pin));
}

/** GPU-type devices of a local backend (RPC devices are other machines). */
export function localGpus(devices: readonly DeviceInfo[]): DeviceInfo[] {
  return devices.filter((d) => (d.type === 'gpu' || d.type === 'igpu') && d.backend !== 'RPC');
}

/**
 * The backend to offer when the machine has a GPU and the engine sees none: CUDA where its
 * runtime is there (13, else 12), else Vulkan (every vendor's driver ships a Vulkan driver).
 * null when the engine already uses a GPU, there is none, or the right backend is installed.
 */
export function suggestBackend(m: MachineReport, installed: readonly GpuBackendKind[], devices: readonly DeviceInfo[], pin: Pin = PIN): Suggestion | null {
  if (localGpus(devices).length > 0) return null;
  const hardware = m.gpus.filter((g) => g.vendor !== 'other');
  const nvidia = m.nvidiaDriver !== null || hardware.some((g) => g.vendor === 'nvidia');
  // Not the Vulkan drivers installed: Mesa installs Intel and AMD drivers on machines without either.
  if (!nvidia && hardware.length === 0) return null;
  const ready = (k: GpuBackendKind): boolean => backendReadiness(k, m, pin).loads;
  const what = nvidia ? `an NVIDIA GPU${m.nvidiaDriver ? ` (${m.nvidiaDriver.replace(/^NVRM version:\s*/, '')})` : ''}`
    : hardware[0]?.vendor === 'amd' ? 'an AMD GPU' : hardware[0]?.vendor === 'intel' ? 'an Intel GPU' : 'a GPU';
  const order: GpuBackendKind[] = nvidia ? ['cuda', 'cuda-ext', 'vulkan'] : ['vulkan'];
  for (const kind of order) {
    if (installed.includes(kind) || !ready(kind)) continue;
    return { kind, reason: `this machine has ${what} that the engine does not use; the ${kind} backend can run on it` };
  }
  const first = order.find((k) => !installed.includes(k));
  if (!first) return null;
  const r = backendReadiness(first, m, pin);
  return {
    kind: first,
    reason: `this machine has ${what} that the engine does not use; the ${first} backend needs ${r.missing.map((x) => `${x.library} (${x.hint})`).join('; ')}`,
  };
}

const MISSING_LIBRARY = /([^\s:/]+\.so(?:\.\d+)*): cannot open shared object file/;

/** The library a dlopen error says is missing ("libcublas.so.13: cannot open shared object file…"), or null. */
export function missingFromDlerror(error: string): string | null {
  return MISSING_LIBRARY.exec(error)?.[1] ?? null;
}

/** "libggml-cuda.so (/path): <loader's reason>; libcublas.so.13 is missing: <where to get it>". */
export function describeLoadFailure(f: { path: string; error: string }): string {
  const lib = missingFromDlerror(f.error);
  const name = f.path.slice(f.path.lastIndexOf('/') + 1);
  return `${name} (${f.path}): ${f.error}${lib ? `; ${lib} is missing: ${missingLibraryHint(lib)}` : ''}`;
}

/**
 * The one line the server logs when GPU backend libraries did not load: which, why, where to get
 * what is missing, and the devices the engine runs on instead. null when everything loaded.
 */
export function fallbackLine(failed: ReadonlyArray<{ path: string; error: string }>, placement: ReadonlyArray<{ device: string; layers: number }>): string | null {
  if (failed.length === 0) return null;
  const on = placement.filter((p) => p.layers > 0).map((p) => p.device);
  return `GPU backend did not load: ${failed.map(describeLoadFailure).join(' | ')}; the engine runs on ${on.length ? on.join(' + ') : 'the CPU'} (strata gpu list shows all it needs)`;
}
