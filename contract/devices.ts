// GET /v1/devices: the server's JSON (DevicesBody, built by backend/http/routes/info.ts), its
// runtime check, and the rows the panel's Devices tab shows (DeviceMemory, one per device per
// replica, made by devicesView).
import * as z from 'zod/mini';
import type { ModelInfo } from '../native/lib/addon.js';
import { checkBody } from './check.js';
import type { EngineState } from './metrics.js';

// --- the server's JSON ---------------------------------------------------------------------

export type DeviceKind = 'cpu' | 'gpu' | 'igpu' | 'accel';

export interface DeviceBody {
  name: string;
  description: string;
  type: DeviceKind;
  backend: string;
  memory_free: number;
  memory_total: number;
}

export interface PlacementBody {
  device: string;
  layers: number;
  memory_free: number;
  memory_total: number;
}

export interface ReplicaDevicesBody {
  replica: number;
  state: EngineState;
  epoch: number;
  pid: number | null;
  /** The devices as the engine sees them now; empty while it is not ready. */
  devices: DeviceBody[];
  /** Where the model was placed when it loaded (kept while the engine restarts). */
  placement: PlacementBody[];
  cpu: { variant: string | null; repack: boolean } | null;
  /** EngineOptions.opOffload as used; null while the engine is not ready. */
  op_offload: boolean | null;
  /** Where llama.cpp put the weights, the KV cache and the compute buffers. */
  buffers: ModelInfo['buffers'];
  backends: { loaded: Array<{ name: string; path: string }>; failed: Array<{ path: string; error: string }> } | null;
}

export interface CpuPathBody {
  variant: string | null;
  repack: boolean;
  note: string | null;
  probes: Array<{ variant: string | null; repack: boolean; ok: boolean; reason: string | null; ms: number }>;
  variants: Array<{ name: string; score: number; amx: boolean }>;
}

/** The prebuilt GPU backends `strata backend install` knows. */
export type GpuBackendKind = 'vulkan' | 'cuda' | 'cuda-ext';

/** GPU backends installed by `strata backend install`, and the one to install for this machine, if any. */
export interface GpuBackendsBody {
  installed: Array<{ kind: GpuBackendKind; package: string; version: string; path: string; sha256: string }>;
  suggestion: { kind: GpuBackendKind; reason: string } | null;
}

export interface DevicesBody {
  object: 'list';
  data: ReplicaDevicesBody[];
  gpu_backends: GpuBackendsBody;
  cpu: CpuPathBody | null;
}

// --- its runtime check ---------------------------------------------------------------------

const num = z.number();
const memory = { memory_free: num, memory_total: num };
const gpuBackendKind = z.enum(['vulkan', 'cuda', 'cuda-ext']);

export const devicesBodySchema: z.ZodMiniType<DevicesBody> = z.object({
  object: z.literal('list'),
  data: z.array(z.object({
    replica: num,
    state: z.enum(['starting', 'ready', 'dead', 'failed', 'closed']),
    epoch: num,
    pid: z.nullable(num),
    devices: z.array(z.object({ name: z.string(), description: z.string(), type: z.enum(['cpu', 'gpu', 'igpu', 'accel']), backend: z.string(), ...memory })),
    placement: z.array(z.object({ device: z.string(), layers: num, ...memory })),
    cpu: z.nullable(z.object({ variant: z.nullable(z.string()), repack: z.boolean() })),
    op_offload: z.nullable(z.boolean()),
    buffers: z.array(z.object({ kind: z.enum(['model', 'kv', 'compute', 'output']), buffer: z.string(), mib: num })),
    backends: z.nullable(z.object({
      loaded: z.array(z.object({ name: z.string(), path: z.string() })),
      failed: z.array(z.object({ path: z.string(), error: z.string() })),
    })),
  })),
  gpu_backends: z.object({
    installed: z.array(z.object({ kind: gpuBackendKind, package: z.string(), version: z.string(), path: z.string(), sha256: z.string() })),
    suggestion: z.nullable(z.object({ kind: gpuBackendKind, reason: z.string() })),
  }),
  cpu: z.nullable(z.object({
    variant: z.nullable(z.string()), repack: z.boolean(), note: z.nullable(z.string()),
    probes: z.array(z.object({ variant: z.nullable(z.string()), repack: z.boolean(), ok: z.boolean(), reason: z.nullable(z.string()), ms: num })),
    variants: z.array(z.object({ name: z.string(), score: num, amx: z.boolean() })),
  })),
});

// --- what the panel shows ------------------------------------------------------------------

export interface DeviceMemory {
  name: string;
  description: string;
  type: string;
  replica: number | null;
  memoryFree: number | null;
  memoryTotal: number | null;
  layers: number | null;
}

/** One row per device per replica; a replica that is not ready shows what its model was placed on. */
export function devicesView(body: DevicesBody): DeviceMemory[] {
  const out: DeviceMemory[] = [];
  for (const rep of body.data) {
    const layersOf = (name: string): number | null => rep.placement.find((p) => p.device === name)?.layers ?? null;
    if (rep.devices.length > 0) {
      for (const d of rep.devices) out.push(row(d.name, d.description, d.type, rep.replica, d.memory_free, d.memory_total, layersOf(d.name)));
    } else {
      for (const p of rep.placement) out.push(row(p.device, '', '', rep.replica, p.memory_free, p.memory_total, p.layers));
    }
  }
  return out;
}

function row(name: string, description: string, type: string, replica: number, free: number, total: number, layers: number | null): DeviceMemory {
  // ggml's CPU backend reports the machine's RAM as both free and total: its use is unknown, not 0.
  const unknownUse = free === total && (type === 'cpu' || /^CPU\b/.test(name));
  return { name, description, type, replica, memoryFree: unknownUse ? null : free, memoryTotal: total, layers };
}

/** GET /v1/devices's body, checked against the contract, as the panel shows it. */
export function parseDevices(raw: unknown): DeviceMemory[] {
  return devicesView(checkBody(devicesBodySchema, raw, 'GET /v1/devices'));
}

/** The GPU backend GET /v1/devices suggests installing (checked against the contract), or null. */
export function parseGpuSuggestion(raw: unknown): GpuBackendsBody['suggestion'] {
  return checkBody(devicesBodySchema, raw, 'GET /v1/devices').gpu_backends.suggestion;
}
