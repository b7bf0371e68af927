// What this machine offers a GPU backend, read from the file system only (no library is loaded):
// display controllers on the PCI bus, the NVIDIA driver, the Vulkan loader and its drivers (ICD
// manifests), and which of the libraries each pinned backend needs resolve. `root` prefixes every
// absolute path so that tests can hand in a fake machine.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { resolveLibrary, systemLibrarySearch, type LibrarySearch } from './library-search.js';
import { GPU_BACKEND_KINDS, PIN, type Pin } from './pin.js';

export type GpuVendor = 'nvidia' | 'amd' | 'intel' | 'other';

export interface MachineGpu {
  /** PCI address, e.g. "0000:01:00.0". */
  pci: string;
  vendor: GpuVendor;
  vendorId: string;
  deviceId: string;
}

export interface VulkanDriver {
  /** The ICD manifest. */
  manifest: string;
  /** Its library_path. */
  library: string;
  /** A driver that runs on the CPU (lavapipe, SwiftShader): ggml hides it unless GGML_VK_VISIBLE_DEVICES names it. */
  software: boolean;
}

export interface MachineReport {
  gpus: MachineGpu[];
  /** First line of /proc/driver/nvidia/version, or null without the NVIDIA kernel driver. */
  nvidiaDriver: string | null;
  vulkan: { loader: string | null; drivers: VulkanDriver[] };
  /** Every library a pinned backend needs -> the path the loader would use, or null. */
  libraries: Record<string, string | null>;
}

export interface MachineProbeOptions {
  /** Prefix of every absolute path read (default: the real root). */
  root?: string;
  env?: NodeJS.ProcessEnv;
  search?: LibrarySearch;
  pin?: Pin;
}

const VENDORS: Record<string, GpuVendor> = { '0x10de': 'nvidia', '0x1002': 'amd', '0x1022': 'amd', '0x8086': 'intel' };
const SOFTWARE_ICD = /lvp|llvmpipe|swiftshader/i;

function read(root: string, path: string): string | null {
  try { return readFileSync(join(root, path), 'utf8'); } catch { return null; }
}

function list(root: string, dir: string): string[] {
  try { return readdirSync(join(root, dir)).sort(); } catch { return []; }
}

/** PCI functions of class 0x03 (display controllers: VGA, 3D, other). */
function pciGpus(root: string): MachineGpu[] {
  const out: MachineGpu[] = [];
  for (const pci of list(root, '/sys/bus/pci/devices')) {
    const dir = `/sys/bus/pci/devices/${pci}`;
    const cls = read(root, `${dir}/class`)?.trim() ?? '';
    if (!cls.startsWith('0x03')) continue;
    const vendorId = read(root, `${dir}/vendor`)?.trim() ?? '';
    out.push({ pci, vendor: VENDORS[vendorId] ?? 'other', vendorId, deviceId: read(root, `${dir}/device`)?.trim() ?? '' });
  }
  return out;
}

/** The Vulkan loader's ICD search on Linux (VK_DRIVER_FILES / VK_ICD_FILENAMES replace it). */
function icdManifests(root: string, env: NodeJS.ProcessEnv): string[] {
  const explicit = env.VK_DRIVER_FILES ?? env.VK_ICD_FILENAMES;
  const candidates = (dirs: string[]): string[] =>
    dirs.flatMap((d) => (d.endsWith('.json') ? [d] : list(root, d).filter((f) => f.endsWith('.json')).map((f) => join(d, f))));
  if (explicit) return candidates(explicit.split(':').filter(Boolean));
  const home = env.HOME ?? homedir();
  const configDirs = [env.XDG_CONFIG_HOME ?? join(home, '.config'), ...(env.XDG_CONFIG_DIRS ?? '/etc/xdg').split(':'), '/etc'];
  const dataDirs = [env.XDG_DATA_HOME ?? join(home, '.local/share'), ...(env.XDG_DATA_DIRS ?? '/usr/local/share:/usr/share').split(':')];
  return candidates([...configDirs, ...dataDirs].filter(Boolean).map((d) => join(d, 'vulkan', 'icd.d')));
}

function vulkanDrivers(root: string, env: NodeJS.ProcessEnv): VulkanDriver[] {
  const out: VulkanDriver[] = [];
  for (const manifest of icdManifests(root, env)) {
    let library = '';
    try {
      const json = JSON.parse(read(root, manifest) ?? '') as { ICD?: { library_path?: unknown } };
      library = typeof json.ICD?.library_path === 'string' ? json.ICD.library_path : '';
    } catch { continue; }
    if (library) out.push({ manifest, library, software: SOFTWARE_ICD.test(library) });
  }
  return out;
}

export function probeMachine(opts: MachineProbeOptions = {}): MachineReport {
  const root = opts.root ?? '/';
  const env = opts.env ?? process.env;
  const pin = opts.pin ?? PIN;
  const search = opts.search ?? systemLibrarySearch(env);
  const exists = (p: string): boolean => existsSync(join(root, p));
  const libraries: Record<string, string | null> = {};
  for (const kind of GPU_BACKEND_KINDS) {
    for (const lib of pin.gpuBackends[kind].needs) libraries[lib] ??= resolveLibrary(lib, search, exists);
  }
  return {
    gpus: pciGpus(root),
    nvidiaDriver: read(root, '/proc/driver/nvidia/version')?.split('\n')[0]?.trim() || null,
    vulkan: { loader: libraries['libvulkan.so.1'] ?? resolveLibrary('libvulkan.so.1', search, exists), drivers: vulkanDrivers(root, env) },
    libraries,
  };
}
