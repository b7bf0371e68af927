// The GPU-type device of the Vulkan test files: Vulkan0 through the installed prebuilt backend
// (`strata gpu install vulkan`), on lavapipe (Debian's mesa-vulkan-drivers) in CI or on a
// real GPU. ggml-vulkan hides CPU-type devices such as lavapipe unless GGML_VK_VISIBLE_DEVICES
// names them, so this sets it (per process: each test file runs in its own) before the backend
// loads. Files skip, saying why, when there is no such device.
import type { BackendReport, DeviceInfo } from '../../native/lib/addon.js';
import { installedBackend } from '../../backend/gpu-backends/install.js';
import { loadAddon } from '../../backend/addon/loader.js';

export type VulkanSetup =
  | { ok: true; dir: string; device: DeviceInfo; report: BackendReport }
  | { ok: false; reason: string };

/**
 * Loads the CPU backend and the installed Vulkan backend into this process (once), with `env`
 * set first (e.g. GGML_VK_DISABLE_F16), and finds Vulkan0.
 */
export function setUpVulkan(env: Record<string, string> = {}): VulkanSetup {
  process.env.GGML_VK_VISIBLE_DEVICES ??= '0';
  for (const [k, v] of Object.entries(env)) process.env[k] = v;
  const installed = installedBackend('vulkan');
  if (!installed) return { ok: false, reason: 'the Vulkan backend is not installed (strata gpu install vulkan)' };
  const addon = loadAddon();
  const report = addon.loadBackends({ dirs: [installed.dir] });
  const failed = report.failed.find((f) => f.path === installed.path);
  if (failed) return { ok: false, reason: `libggml-vulkan.so does not load here: ${failed.error}` };
  const device = addon.listDevices().find((d) => d.name === 'Vulkan0');
  if (!device) return { ok: false, reason: 'no Vulkan device (CI: apt install mesa-vulkan-drivers for lavapipe)' };
  return { ok: true, dir: installed.dir, device, report };
}

/** Title suffix of a suite that may be skipped: the reason shows in the test report. */
export function skipNote(v: VulkanSetup): string {
  return v.ok ? '' : ` (skipped: ${v.reason})`;
}
