// GET /health and /v1/devices: whether the server is ready and where its engines run.
import type { DevicesBody, FitBody, ReplicaDevicesBody } from '../../../contract/devices.js';
import type { FitDeviceUse, FitReport } from '../../../native/lib/addon.js';
import { suggestBackend } from '../../gpu-backends/readiness.js';
import { latestDeath } from '../../metrics/metrics-json.js';
import type { AppContext } from '../app-context.js';
import { keyProof } from '../../../common/net/key-proof.js';
import { sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

export function health(app: AppContext, ctx: RouteContext): void {
  // `?challenge=`: with a key, every answer carries `key_proof` (common/net/key-proof.ts), so a
  // supervisor knows it reached the server it gave the key to before it sends the key.
  const challenge = ctx.url.searchParams.get('challenge');
  const proof = challenge !== null && app.config.apiKey !== null ? keyProof(app.config.apiKey, challenge) : null;
  const reply = (status: number, body: Record<string, unknown>, headers?: Record<string, string>): void =>
    sendJson(ctx.res, status, proof === null ? body : { ...body, key_proof: proof }, headers);
  if (app.stopping()) { reply(503, { status: 'stopping' }); return; }
  const model = app.model();
  // Several models, none loaded or loading (--preload none, or all unloaded idle): ready to load on demand.
  if (!model && app.models.several && app.models.rows().every((r) => r.state !== 'loading')) {
    reply(200, { status: 'ok', model: null, models_loaded: 0, queued: 0 });
    return;
  }
  if (!model || app.scheduler.isLoading()) {
    // How long a load may take here: a supervisor (the extension) waits that long, never less.
    reply(503, { status: 'loading', load_timeout_ms: app.config.engineReadyTimeoutMs }, { 'Retry-After': '1' });
    return;
  }
  const why = app.scheduler.unavailableReason();
  if (why) {
    // The last engine death as data (contract/health.ts), for a supervisor to say without parsing `reason`.
    const death = latestDeath(app.engines);
    // Every engine gave up after a crash loop: a retry will not help, so no Retry-After.
    const failed = app.engines.every((e) => e.status().state === 'failed');
    if (failed) { reply(503, { status: 'failed', reason: why, engine_death: death }); return; }
    reply(503, { status: 'unavailable', reason: why, engine_death: death }, { 'Retry-After': '1' });
    return;
  }
  const views = app.scheduler.views();
  const ready = views.filter((v) => v.state === 'ready');
  const slots = ready.reduce((n, v) => n + v.slots, 0);
  const busy = ready.reduce((n, v) => n + v.inFlight, 0);
  reply(200, {
    status: 'ok', model: model.id, demo: model.demo, ctx: model.info.ctx,
    slots, slots_idle: Math.max(0, slots - busy), slots_processing: busy,
    replicas: { ready: ready.length, total: views.length },
    queued: app.scheduler.queuedCount(),
  });
}

const fitDevice = (d: FitDeviceUse): FitBody['host'] => ({
  device: d.device, layers: d.layers, free: d.free, total: d.total, model: d.model, context: d.context, compute: d.compute,
});

function fitBody(f: FitReport): FitBody {
  return {
    status: f.status, gpu_layers: f.gpuLayers, n_layer: f.nLayer, ctx: f.ctx, slots: f.slots, kv_type: f.kvType, margin_bytes: f.marginBytes,
    devices: f.devices.map(fitDevice), host: fitDevice(f.host), changes: f.changes, reason: f.reason,
    suggestions: f.suggestions.map((s) => ({ change: s.change, slots: s.slots, ctx: s.ctx, kv_type: s.kvType, gpu_layers: s.gpuLayers })),
  };
}

export async function devices(app: AppContext, { res }: RouteContext): Promise<void> {
  // Each replica's body and the devices it answered (for the backend suggestion, not sent).
  const data = await Promise.all(app.engines.map(async (e) => {
    const s = e.status();
    let live: Awaited<ReturnType<typeof e.devices>> | null = null;
    if (s.state === 'ready') live = await e.devices().catch(() => null);
    const body: ReplicaDevicesBody = {
      replica: e.replica, state: s.state, epoch: s.epoch, pid: s.pid,
      devices: (live ?? []).map((d) => ({
        name: d.name, description: d.description, type: d.type, backend: d.backend,
        memory_free: d.memoryFree, memory_total: d.memoryTotal,
      })),
      placement: (e.info?.placement ?? []).map((p) => ({ device: p.device, layers: p.layers, memory_free: p.memoryFree, memory_total: p.memoryTotal })),
      cpu: e.info?.cpu ?? null,
      op_offload: e.info?.opOffload ?? null,
      // Where llama.cpp put the weights, the KV cache and the compute buffers.
      buffers: e.info?.buffers ?? [],
      backends: e.info ? { loaded: e.info.backends.loaded, failed: e.info.backends.failed } : null,
      fit: e.info?.fit ? fitBody(e.info.fit) : null,
    };
    return { body, live };
  }));
  const gpu = app.gpuBackends();
  const seen = data.flatMap((d) => d.live ?? []);
  const gpuBackends = {
    installed: gpu.installed.map((b) => ({ kind: b.kind, package: b.package, version: b.version, path: b.path, sha256: b.sha256 })),
    // Only when every replica answered: a replica that is down says nothing about the machine.
    suggestion: data.every((d) => d.live !== null) ? suggestBackend(gpu.machine, gpu.installed.map((b) => b.kind), seen) : null,
  };
  const cpu = await app.cpuPath()?.catch(() => null) ?? null;
  const body: DevicesBody = {
    object: 'list', data: data.map((d) => d.body), gpu_backends: gpuBackends,
    cpu: cpu && {
      variant: cpu.variant, repack: cpu.repack, note: cpu.note,
      probes: cpu.probes.map((p) => ({ variant: p.variant, repack: p.repack, ok: p.ok, reason: p.reason, ms: p.ms })),
      variants: cpu.variants,
    },
  };
  sendJson(res, 200, body);
}
