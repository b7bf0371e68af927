// What a loaded model holds on each offload device, from the buffers llama.cpp allocated for it
// (ModelInfo.buffers: weights, KV cache, compute, output). A buffer belongs to a device when it is
// named after it ("CUDA0", "Vulkan0") or is an RPC device's ("RPC0[host:port]"); host buffers
// ("CPU", "CPU_Mapped", "CUDA_Host", "Vulkan_Host") belong to none.
import type { ModelInfo } from '../../native/lib/addon.js';
import type { DeviceBytes } from './model-pool.js';

const MIB = 2 ** 20;

export function deviceBytesOf(info: Pick<ModelInfo, 'buffers' | 'placement'>): DeviceBytes {
  const devices = info.placement.map((p) => p.device).filter((d) => d !== 'CPU');
  const out: DeviceBytes = {};
  for (const b of info.buffers) {
    const device = devices.find((d) => b.buffer === d || b.buffer.startsWith(`${d}[`));
    if (device) out[device] = (out[device] ?? 0) + Math.round(b.mib * MIB);
  }
  return out;
}

/** The sum over a model's replicas. */
export function addDeviceBytes(into: DeviceBytes, more: DeviceBytes): DeviceBytes {
  for (const [d, bytes] of Object.entries(more)) into[d] = (into[d] ?? 0) + bytes;
  return into;
}
