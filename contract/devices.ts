// GET /v1/devices: the server's JSON (DevicesBody, built by backend/http/routes/info.ts), its
// runtime check, and what the panel's Devices tab shows (DeviceMemory, one per device per replica,
// made by devicesView; FitView, what each replica's fit to memory decided, made by fitView).
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
  /** What fitting the model to free memory decided (--fit); null when it loaded without fitting. */
  fit: FitBody | null;
}

/** One device in a fit ("Host" for the CPU's memory), bytes as llama.cpp's no-alloc load measures them. */
export interface FitDeviceBody {
  device: string;
  layers: number;
  /** Free and total memory when measured (the host: MemAvailable, MemTotal). */
  free: number;
  total: number;
  model: number;
  /** The KV cache (and recurrent state) of every slot. */
  context: number;
  compute: number;
}

export interface FitBody {
  /** fits: as asked; adjusted: layers moved off the GPU or the context chosen; does_not_fit. */
  status: 'fits' | 'adjusted' | 'does_not_fit';
  /** Layers on offload devices, of n_layer + 1 (the output layer counts). */
  gpu_layers: number;
  n_layer: number;
  ctx: number;
  slots: number;
  kv_type: string;
  /** Memory the fit keeps free on every device (bytes). */
  margin_bytes: number;
  devices: FitDeviceBody[];
  host: FitDeviceBody;
  changes: string[];
  reason: string | null;
  /** Single changes that fit with every asked layer offloaded (when it did not, or only with layers on the CPU). */
  suggestions: Array<{ change: string; slots: number; ctx: number; kv_type: string; gpu_layers: number }>;
}

export interface CpuPathBody {
  variant: string | null;
  repack: boolean;
  note: string | null;
  probes: Array<{ variant: string | null; repack: boolean; ok: boolean; reason: string | null; ms: number }>;
  variants: Array<{ name: string; score: number; amx: boolean }>;
}

/** The prebuilt GPU backends `strata gpu install` knows. */
export type GpuBackendKind = 'vulkan' | 'cuda' | 'cuda-ext';

/** GPU backends installed by `strata gpu install`, and the one to install for this machine, if any. */
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
const fitDevice = z.object({ device: z.string(), layers: num, free: num, total: num, model: num, context: num, compute: num });
const fitSchema = z.object({
  status: z.enum(['fits', 'adjusted', 'does_not_fit']), gpu_layers: num, n_layer: num, ctx: num, slots: num, kv_type: z.string(),
  margin_bytes: num, devices: z.array(fitDevice), host: fitDevice, changes: z.array(z.string()), reason: z.nullable(z.string()),
  suggestions: z.array(z.object({ change: z.string(), slots: num, ctx: num, kv_type: z.string(), gpu_layers: num })),
});
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
    fit: z.nullable(fitSchema),
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
  /** From the replica's fit: what the plan puts on this device, its KV cache per slot, and what stays free; null without a fit. */
  planned: { bytes: number; kvPerSlot: number; margin: number } | null;
}

/** What one replica's fit decided, in the panel's words. */
export interface FitView {
  replica: number;
  status: FitBody['status'];
  /** "25 of 25 layers on Vulkan0 · ctx 4096 × 4 slots · f16 KV". */
  summary: string;
  changes: string[];
  reason: string | null;
  /** The single changes that would fit with every layer offloaded, in the panel's words ("slots 2", "context 2048", "KV q8_0"). */
  suggestions: string[];
}

/** One row per device per replica; a replica that is not ready shows what its model was placed on. */
export function devicesView(body: DevicesBody): DeviceMemory[] {
  const out: DeviceMemory[] = [];
  for (const rep of body.data) {
    const layersOf = (name: string): number | null => rep.placement.find((p) => p.device === name)?.layers ?? null;
    const planned = (name: string): DeviceMemory['planned'] => {
      const f = rep.fit;
      const d = f?.devices.find((x) => x.device === name) ?? (f && /^CPU\b/.test(name) ? f.host : undefined);
      if (!f || !d) return null;
      const bytes = d.model + d.context + d.compute;
      return { bytes, kvPerSlot: Math.round(d.context / Math.max(1, f.slots)), margin: d.free - bytes };
    };
    if (rep.devices.length > 0) {
      for (const d of rep.devices) out.push(row(d.name, d.description, d.type, rep.replica, d.memory_free, d.memory_total, layersOf(d.name), planned(d.name)));
    } else {
      for (const p of rep.placement) out.push(row(p.device, '', '', rep.replica, p.memory_free, p.memory_total, p.layers, planned(p.device)));
    }
  }
  return out;
}

function row(name: string, description: string, type: string, replica: number, free: number, total: number, layers: number | null, planned: DeviceMemory['planned']): DeviceMemory {
  // ggml's CPU backend reports the machine's RAM as both free and total: its use is unknown, not 0.
  const unknownUse = free === total && (type === 'cpu' || /^CPU\b/.test(name));
  return { name, description, type, replica, memoryFree: unknownUse ? null : free, memoryTotal: total, layers, planned };
}

/** The suggestion in the panel's words (the server's are EngineOptions'). */
function suggestionWords(s: FitBody['suggestions'][number]): string {
  const [what, value] = s.change.split(' ');
  const word: Record<string, string> = { slots: 'slots', ctx: 'context', kvType: 'KV', gpuLayers: 'GPU layers' };
  return `${word[what ?? ''] ?? what} ${value ?? ''}`.trim();
}

/** What each replica's fit decided (replicas that loaded without fitting have none). */
export function fitView(body: DevicesBody): FitView[] {
  return body.data.flatMap((rep) => {
    const f = rep.fit;
    if (!f) return [];
    const where = f.devices.filter((d) => d.layers > 0).map((d) => d.device).join(' + ') || 'the CPU';
    const layers = f.devices.length > 0 ? `${f.gpu_layers} of ${f.n_layer + 1} layers on ${where}` : `${f.n_layer} layers on the CPU`;
    return [{
      replica: rep.replica, status: f.status, summary: `${layers} · ctx ${f.ctx} × ${f.slots} slots · ${f.kv_type} KV`,
      changes: f.changes, reason: f.reason, suggestions: f.suggestions.map(suggestionWords),
    }];
  });
}

/** GET /v1/devices's body, checked against the contract, as the panel shows it. */
export function parseDevices(raw: unknown): DeviceMemory[] {
  return devicesView(checkBody(devicesBodySchema, raw, 'GET /v1/devices'));
}

/** GET /v1/devices's body, checked against the contract: the rows and the fits the Devices tab shows. */
export function parseDevicesAndFit(raw: unknown): { devices: DeviceMemory[]; fit: FitView[] } {
  const body = checkBody(devicesBodySchema, raw, 'GET /v1/devices');
  return { devices: devicesView(body), fit: fitView(body) };
}

/** The GPU backend GET /v1/devices suggests installing (checked against the contract), or null. */
export function parseGpuSuggestion(raw: unknown): GpuBackendsBody['suggestion'] {
  return checkBody(devicesBodySchema, raw, 'GET /v1/devices').gpu_backends.suggestion;
}
