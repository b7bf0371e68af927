// Composition of `strata serve`: the served models (a pool of model runtimes, each with its
// engines, request ledger, scheduler, traces and sessions: model-runtime.ts), the HTTP server,
// and the order things start and stop in. Tests build it in-process with their own engine
// factory or the real one.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freemem } from 'node:os';
import { installedBackendDirs, listInstalled, type InstalledBackend } from '../gpu-backends/install.js';
import { probeMachine, type MachineReport } from '../gpu-backends/machine.js';
import type { EngineClient, EngineConfig } from '../engine/client.js';
import { memoCpuPath, type CpuPath } from '../engine/cpu-path.js';
import { builtGpuBackends, probeFit } from '../engine/fit-probe.js';
import { createProcessEngineClient } from '../engine/process-client.js';
import type { AppContext } from '../http/app-context.js';
import { ConnectionTracker } from '../http/connections.js';
import { createHttpServer } from '../http/http-server.js';
import { SlowReaderWatch } from '../http/slow-readers.js';
import { BodyReader } from '../http/body.js';
import { BODY_BUDGET_BODIES } from '../validation/limits.js';
import type { Logger } from '../log/logger.js';
import { estimateModelBytes } from '../model-pool/memory-estimate.js';
import { ModelPool, type DeviceBytes, type DeviceNeed, type MeasuredNeeds, type ModelPoolOptions } from '../model-pool/model-pool.js';
import type { RequestLedger } from '../scheduler/request-ledger.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ModelView } from '../served-model/model-view.js';
import { SessionStore } from '../sessions/session-store.js';
import { ResponseStore } from '../responses/response-store.js';
import { PrefixStore } from '../prefix-cache/prefix-store.js';
import type { ServerConfig } from './config.js';
import { modelNameOf, type ModelSpec } from './model-specs.js';
import { ModelRuntime, engineConfigFor, modelConfig } from './model-runtime.js';
import { InteractiveGate } from '../scheduler/interactive-gate.js';

export interface StrataServerOptions {
  config: ServerConfig;
  modelPath: string;
  /** The model is the generated random-weight demo model. */
  demo?: boolean;
  log: Logger;
  /** Makes one replica's engine client (default: an engine host child process); `model` is the served model's name. */
  engineFactory?: (replica: number, config: EngineConfig, model: string) => EngineClient;
  /** The model pool's clock (idle unload, last used); tests step it. */
  now?: () => number;
  /** Restart back-off of crashed engines. */
  restart?: { minDelayMs: number; maxDelayMs: number };
  /** Folders of GPU backend libraries the engines load (default: those `strata gpu install` put in the cache). */
  backendDirs?: string[];
  /** What a model needs per device before it loads (default: the fit probe, when an offload backend is there). */
  deviceNeeds?: ModelPoolOptions<ModelSpec>['deviceNeeds'];
}

export { engineConfigFor } from './model-runtime.js';

/**
 * What a model needs per device as asked, from the fit probe (one per replica: each may use its own
 * devices). Device choices (devices, RPC servers) where a probe found nothing to offload to (a GPU
 * backend installed on a machine without its GPU) are not probed again.
 */
function probedNeeds(config: ServerConfig, backendDirs: string[], cpuPath: () => Promise<CpuPath> | null) {
  const nothingThere = new Set<string>();
  return async (spec: ModelSpec, held: DeviceBytes): Promise<MeasuredNeeds | null> => {
    const c = modelConfig(config, spec);
    const cpu = await cpuPath()?.catch(() => null) ?? null;
    const needs = new Map<string, DeviceNeed>();
    let hostBytes = 0;
    for (let replica = 0; replica < c.replicas; replica++) {
      const ec = { ...engineConfigFor(c, spec.path, replica, backendDirs, held), ...(cpu ? { cpuVariant: cpu.variant ?? 'auto', cpuRepack: cpu.repack } : {}) };
      const where = JSON.stringify([ec.devices ?? null, ec.rpc ?? null, ec.gpuLayers === 0]);
      if (nothingThere.has(where)) continue;
      const report = await probeFit(ec);
      if (report.devices.length === 0) nothingThere.add(where);
      hostBytes += report.host.model + report.host.context + report.host.compute;
      for (const d of report.devices) {
        const n = needs.get(d.device) ?? { device: d.device, bytes: 0, free: d.free, total: d.total };
        n.bytes += d.model + d.context + d.compute;
        needs.set(d.device, n);
      }
    }
    return needs.size > 0 ? { devices: [...needs.values()], hostBytes } : null;
  };
}

export class StrataServer {
  readonly pool: ModelPool<ModelSpec>;
  private readonly http: Server;
  private readonly connections: ConnectionTracker;
  private readonly readers: SlowReaderWatch;
  private readonly store: SessionStore;
  private readonly cpuPath: (() => Promise<CpuPath>) | null;
  private idleTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private closed: Promise<void> | null = null;
  private readonly responses: ResponseStore;
  /** The prefix cache's folder, shared by every model (a file's name and head carry its model). */
  readonly prefixes: PrefixStore;

  constructor(private readonly opts: StrataServerOptions) {
    const { config, log } = opts;
    // Real engine processes share one CPU path resolution (probes run once per machine and build).
    const cpuPath = opts.engineFactory ? null
      : memoCpuPath({ variant: config.cpuVariant, repack: config.cpuRepack }, { log: (line, level) => log[level](line) });
    this.cpuPath = cpuPath;
    const specs: ModelSpec[] = config.models.length > 0 ? config.models
      : [{ name: modelNameOf(opts.modelPath), path: opts.modelPath, role: null, settings: {} }];
    const several = specs.length > 1;
    const make = opts.engineFactory ?? ((replica: number, ec: EngineConfig, model: string) => createProcessEngineClient({
      replica, config: ec, model, readyTimeoutMs: config.engineReadyTimeoutMs, silenceTimeoutMs: config.engineSilenceTimeoutMs,
      restart: opts.restart ?? { minDelayMs: 1000, maxDelayMs: 60_000 },
      log: (line, level) => log[level](line, several ? { model, replica } : { replica }),
      ...(cpuPath ? { cpuPath } : {}),
    }));
    const backendDirs = opts.backendDirs ?? installedBackendDirs();
    const installed = listInstalled().filter((b) => backendDirs.includes(b.dir));
    let machine: MachineReport | null = null;
    let requestId = 1;
    const gate = new InteractiveGate(config.backgroundWaitMs);
    this.readers = new SlowReaderWatch({ boundMs: config.slowReaderMs });
    const bodyLimit = config.bodyLimitMib * 2 ** 20;
    const bodies = new BodyReader({ limitBytes: bodyLimit, budgetBytes: BODY_BUDGET_BODIES * bodyLimit, timeoutMs: config.bodyTimeoutMs });
    this.store = new SessionStore(config.sessionsDir);
    const responses = this.responses = new ResponseStore(config.responsesDir, {
      maxCount: config.responsesMax, maxBytes: config.responsesMib * 2 ** 20, ttlMs: config.responsesTtlH * 3_600_000,
      maxKvBytes: config.responsesKvMib * 2 ** 20,
    });
    const prefixes = this.prefixes = new PrefixStore(config.prefixCacheDir, config.prefixCacheMib * 2 ** 20, log);
    const startedAt = Date.now();
    // The fit probe measures what a model needs per device; where nothing offloads (no GPU backend,
    // no RPC server) there is nothing to measure.
    const offload = opts.engineFactory ? false : backendDirs.length > 0 || config.rpc !== null || builtGpuBackends().length > 0;
    const deviceNeeds = opts.deviceNeeds ?? (offload && config.fit !== 'off' ? probedNeeds(config, backendDirs, () => this.cpuPath?.() ?? null) : undefined);
    this.pool = new ModelPool<ModelSpec>({
      specs,
      ...(deviceNeeds ? { deviceNeeds } : {}),
      deviceMarginBytes: config.fit === 'off' ? 0 : config.fitMarginMib * 2 ** 20,
      make: (spec, held) => new ModelRuntime(spec.path, config.models.length > 0 ? spec : null, {
        config, log, makeEngine: (replica, ec, model) => make(replica, ec, model), backendDirs, store: this.store, responses, prefixes, readers: this.readers, bodies,
        models: this.pool, startedAt, stopping: () => this.stopping, cpuPath: () => this.cpuPath?.() ?? null,
        gpuBackends: (): { installed: InstalledBackend[]; machine: MachineReport } => ({ installed, machine: machine ??= probeMachine() }),
        nextRequestId: () => requestId++,
        servedName: several || spec.name !== modelNameOf(spec.path) ? spec.name : null,
        demo: opts.demo ?? false,
        gate,
      }, held),
      estimate: (spec) => {
        const c = modelConfig(config, spec);
        return estimateModelBytes(spec.path, { ctx: c.ctx, slots: c.slots, replicas: c.replicas, kvType: c.kvType });
      },
      maxLoaded: config.modelsMax,
      ramBudgetBytes: (config.modelsRamMib ?? Math.floor((freemem() * 0.8) / 2 ** 20)) * 2 ** 20,
      idleMs: config.modelIdleS * 1000,
      log,
      ...(opts.now ? { now: opts.now } : {}),
    });
    // The default model's runtime exists from the start (its engines, ledger and scheduler), as a single model's always did.
    this.pool.prepare(this.pool.defaultName);
    this.http = createHttpServer(this.app, { headersTimeoutMs: config.headersTimeoutMs, bodyTimeoutMs: config.bodyTimeoutMs, maxConnections: config.maxConnections });
    this.connections = new ConnectionTracker(this.http);
  }

  /** The default model's runtime (the one a single model always had). */
  private get main(): ModelRuntime { return (this.pool.runtimeOf(this.pool.defaultName) ?? this.pool.prepare(this.pool.defaultName)) as ModelRuntime; }
  /** The route context of the default model (routes naming another model get its own). */
  get app(): AppContext { return this.main.app; }
  get engines(): EngineClient[] { return this.main.engines; }
  get ledger(): RequestLedger { return this.main.ledger; }
  get scheduler(): Scheduler { return this.main.scheduler; }
  get model(): ModelView | null { return this.main.model; }

  /** Starts listening (health answers "loading" until an engine is ready). */
  listen(): Promise<{ host: string; port: number; url: string }> {
    const { host, port } = this.opts.config;
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(new Error(`cannot listen on ${host}:${port}: ${err.message}`));
      this.http.once('error', onError);
      this.http.listen(port, host, () => {
        this.http.off('error', onError);
        const addr = this.http.address() as AddressInfo;
        const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
        resolve({ host: addr.address, port: addr.port, url: `http://${shown}:${addr.port}` });
      });
    });
  }

  /**
   * Loads the preloaded models (--preload; default: the default model) and resolves once the
   * first of them serves, with its view (null when none is preloaded). Rejects when it cannot
   * load (a bad model file: nothing to serve); the others load after it, in the background.
   */
  async startEngines(): Promise<ModelView | null> {
    // Before any save of ours can start (saves need a model view).
    await this.app.sessions.sweep();
    const names = this.pool.names();
    const asked = this.opts.config.preload ?? [names[0]!];
    const preload = asked.includes('all') ? names : asked.includes('none') ? [] : names.filter((n) => asked.includes(n));
    if (this.opts.config.modelIdleS > 0) {
      const every = Math.max(1000, Math.min(30_000, this.opts.config.modelIdleS * 500));
      this.idleTimer = setInterval(() => { void this.pool.sweepIdle(); }, every);
      this.idleTimer.unref();
    }
    if (preload.length === 0) return null;
    const [first, ...rest] = preload;
    try {
      await this.pool.load(first!);
    } catch (e) {
      const spec = this.opts.config.models.find((m) => m.name === first);
      // The load's own error as the pool recorded it (not the 503's wording around it).
      const message = this.pool.rows().find((r) => r.name === first)?.error ?? (e as Error).message;
      throw new Error(spec || this.pool.several ? `${first}: ${message}` : message);
    }
    for (const name of rest) this.pool.load(name).catch(() => {}); // logged by the pool
    return (this.pool.runtimeOf(first!) as ModelRuntime).model;
  }

  /** Stops accepting, ends queued and running requests, closes engines. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.doClose();
    return this.closed;
  }

  private async doClose(): Promise<void> {
    this.stopping = true;
    if (this.idleTimer) clearInterval(this.idleTimer);
    const httpClosed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    // A stored response's KV being written finishes first (its engine is still there).
    await this.responses.drain();
    await this.prefixes.drain();
    await this.pool.close();
    // Streams have ended by now; keep-alive connections go as soon as their last answer is out.
    this.connections.closeIdle();
    const idle = setInterval(() => this.connections.closeIdle(), 20);
    const forced = setTimeout(() => this.connections.closeAll(), 2000);
    await httpClosed;
    clearInterval(idle);
    clearTimeout(forced);
    this.readers.stop();
  }
}
