// One loaded model of `strata serve`: its engine processes (one per replica, with the process
// client's epochs and restart rules), its request ledger, scheduler, traces and sessions, and
// the route context its requests run in. server/app.ts makes one per model as the model pool
// loads it and closes it when the pool unloads it.
import type { InstalledBackend } from '../gpu-backends/install.js';
import type { MachineReport } from '../gpu-backends/machine.js';
import { fallbackLine } from '../gpu-backends/readiness.js';
import type { EngineClient, EngineConfig } from '../engine/client.js';
import type { CpuPath } from '../engine/cpu-path.js';
import type { AppContext, ModelDirectory } from '../http/app-context.js';
import type { BodyReader } from '../http/body.js';
import type { SlowReaderWatch } from '../http/slow-readers.js';
import type { Logger } from '../log/logger.js';
import { TraceCollector } from '../metrics/traces.js';
import { addDeviceBytes, deviceBytesOf } from '../model-pool/device-use.js';
import type { DeviceBytes, PoolRuntime } from '../model-pool/model-pool.js';
import type { InteractiveGate } from '../scheduler/interactive-gate.js';
import { RequestLedger } from '../scheduler/request-ledger.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { createModelView, type ModelView } from '../served-model/model-view.js';
import { SessionService } from '../sessions/session-service.js';
import type { SessionStore } from '../sessions/session-store.js';
import type { ResponseStore } from '../responses/response-store.js';
import type { PrefixStore } from '../prefix-cache/prefix-store.js';
import type { ServerConfig } from './config.js';
import type { ModelSpec } from './model-specs.js';

export function engineConfigFor(cfg: ServerConfig, modelPath: string, replica: number, backendDirs: string[] = [], held: DeviceBytes = {}): EngineConfig {
  const ec: EngineConfig = { model: modelPath, slots: cfg.slots };
  if (cfg.fit !== 'off') {
    ec.fit = cfg.fit === 'on' ? true : 'auto';
    ec.fitMarginMiB = cfg.fitMarginMib;
    ec.fitCtxMin = cfg.fitCtx;
    if (Object.keys(held).length > 0) ec.fitReserved = held;
  }
  if (backendDirs.length > 0) ec.backendDirs = backendDirs;
  if (cfg.opOffload !== null) ec.opOffload = cfg.opOffload === 'on';
  if (cfg.deterministic) ec.deterministic = true;
  if (cfg.ctx !== null) ec.ctx = cfg.ctx;
  if (cfg.batch !== null) ec.batch = cfg.batch;
  if (cfg.decodePromptBudget !== null) ec.decodePromptBudget = cfg.decodePromptBudget;
  if (cfg.admitWindowMs !== null) ec.admitWindowMs = cfg.admitWindowMs;
  if (cfg.threads !== null) ec.threads = cfg.threads;
  if (cfg.kvType !== null) ec.kvType = cfg.kvType;
  if (cfg.flashAttn !== null) ec.flashAttn = cfg.flashAttn;
  if (cfg.parkMib !== null) ec.parkBudgetMiB = cfg.parkMib;
  if (cfg.deviceGroups !== null) ec.devices = cfg.deviceGroups[replica] ?? cfg.deviceGroups[0]!;
  if (cfg.splitMode !== null) ec.splitMode = cfg.splitMode;
  if (cfg.tensorSplit !== null) ec.tensorSplit = cfg.tensorSplit;
  if (cfg.rpc !== null) ec.rpc = cfg.rpc;
  if (cfg.gpuLayers !== null) ec.gpuLayers = cfg.gpuLayers;
  if (cfg.embeddings !== 'auto') ec.embeddings = cfg.embeddings;
  if (cfg.mmproj !== null) ec.mmproj = cfg.mmproj;
  // The draft limits also shape the MTP head's drafts, which --spec auto turns on by itself.
  const ngram = cfg.specNgram || cfg.spec === 'ngram' || cfg.specNgramKind !== 'lookup';
  if (ngram || cfg.draftModel !== null || cfg.spec !== 'auto' || cfg.draftMax !== null || cfg.draftMin !== null || cfg.draftPMin !== null) {
    ec.speculative = {
      ...(ngram ? { ngram: true } : {}),
      ...(cfg.specNgramKind !== 'lookup' ? { ngramKind: cfg.specNgramKind } : {}),
      ...(cfg.spec !== 'auto' ? { mtp: cfg.spec === 'mtp' ? 'on' : 'off' } as const : {}),
      ...(cfg.draftModel !== null ? { draftModel: cfg.draftModel } : {}),
      ...(cfg.draftMax !== null ? { draftMax: cfg.draftMax } : {}),
      ...(cfg.draftMin !== null ? { draftMin: cfg.draftMin } : {}),
      ...(cfg.draftPMin !== null ? { draftPMin: cfg.draftPMin } : {}),
    };
  }
  return ec;
}

/** The server's settings with a model's own (its config section) laid over them. */
export function modelConfig(cfg: ServerConfig, spec: ModelSpec | null): ServerConfig {
  return spec ? { ...cfg, ...spec.settings } : cfg;
}

/** What every model of one server shares. */
export interface RuntimeShared {
  config: ServerConfig;
  log: Logger;
  makeEngine(replica: number, config: EngineConfig, model: string): EngineClient;
  backendDirs: string[];
  store: SessionStore;
  /** Stored Responses API responses (every model's: previous_response_id may name any). */
  responses: ResponseStore;
  /** The prefix cache's folder (every model's files, told apart by their model identity). */
  prefixes: PrefixStore;
  readers: SlowReaderWatch;
  bodies: BodyReader;
  models: ModelDirectory;
  startedAt: number;
  stopping(): boolean;
  cpuPath(): Promise<CpuPath> | null;
  gpuBackends(): { installed: InstalledBackend[]; machine: MachineReport };
  /** Request ids unique across the server's models (X-Request-Id, traces). */
  nextRequestId(): number;
  /** The model's id in answers: its served name when several are served, else general.name. */
  servedName: string | null;
  demo: boolean;
  /** Interactive requests on any model hold back background ones (embedding, rerank) on every model. */
  gate: InteractiveGate;
}

export class ModelRuntime implements PoolRuntime {
  readonly app: AppContext;
  readonly engines: EngineClient[];
  readonly ledger: RequestLedger;
  readonly scheduler: Scheduler;
  private readonly traces: TraceCollector;
  private view: ModelView | null = null;
  private readonly log: Logger;
  private closed: Promise<void> | null = null;

  /** `held`: what the server's other loaded models hold per device (the engines' fit keeps clear of it). */
  constructor(readonly modelPath: string, spec: ModelSpec | null, private readonly shared: RuntimeShared, held: DeviceBytes = {}) {
    const config = modelConfig(shared.config, spec);
    const log = spec && shared.servedName !== null ? shared.log.child({ model: spec.name }) : shared.log;
    this.log = log;
    this.engines = Array.from({ length: config.replicas }, (_, i) => shared.makeEngine(i, engineConfigFor(config, modelPath, i, shared.backendDirs, held), spec?.name ?? modelPath));
    this.ledger = new RequestLedger({
      historySize: 500, nextId: shared.nextRequestId,
      onInvariantViolation: (msg) => log.error(`bookkeeping: ${msg}`),
    });
    this.scheduler = new Scheduler(this.engines, this.ledger, { maxQueued: config.maxQueued, log, gate: shared.gate });
    this.traces = new TraceCollector(this.engines, this.ledger, { log });
    const sessions = new SessionService(shared.store, { model: () => this.view, scheduler: this.scheduler, log });
    this.app = {
      config, log, ledger: this.ledger, scheduler: this.scheduler, engines: this.engines, traces: this.traces, sessions, responses: shared.responses, prefixes: shared.prefixes.enabled ? shared.prefixes : null, readers: shared.readers, bodies: shared.bodies,
      startedAt: shared.startedAt, modelPath, fingerprint: 'strata-0.1.0', models: shared.models,
      model: () => this.view, stopping: shared.stopping, cpuPath: shared.cpuPath, gpuBackends: shared.gpuBackends,
    };
    this.ledger.onChange((r) => {
      if (r.state !== 'ended' || r.end === 'rejected') return;
      log.info('request', {
        request: r.id, kind: r.kind, finish: r.end ?? undefined, replica: r.replica ?? undefined, slot: r.slot ?? undefined,
        prompt: r.promptTokens ?? undefined, reused: r.reused ?? undefined, output: r.generated,
        ms: (r.endedAt ?? Date.now()) - r.acceptedAt, error: r.error ?? undefined,
      });
    });
  }

  get model(): ModelView | null { return this.view; }

  deviceUse(): DeviceBytes {
    return this.engines.reduce((sum, e) => (e.info ? addDeviceBytes(sum, deviceBytesOf(e.info)) : sum), {} as DeviceBytes);
  }

  /**
   * Starts every replica; resolves once one is ready and the model is known. Rejects only when
   * every replica failed its first start (a bad model file: nothing to serve).
   */
  async start(): Promise<void> { await this.startEngines(); }

  async startEngines(): Promise<ModelView> {
    const starts = this.engines.map((e) => e.start().then(() => e));
    let first: EngineClient;
    try {
      first = await Promise.any(starts);
    } catch (e) {
      const errors = e instanceof AggregateError ? e.errors : [e];
      throw new Error(`the engine could not load ${this.modelPath}: ${errors.map((x) => (x as Error)?.message ?? String(x)).join('; ')}`);
    }
    for (const [i, p] of starts.entries()) p.catch((err: unknown) => this.log.error('engine failed to start', { replica: i, error: (err as Error)?.message ?? String(err) }));
    this.view = await createModelView(this.modelPath, first, this.shared.demo, this.shared.servedName);
    const t = this.view.template;
    this.log.info('model ready', {
      model: this.view.id, ctx: this.view.info.ctx, slots: this.view.info.slots, replicas: this.engines.length,
      template: t.source, tool_format: t.toolFormat, fim: this.view.info.fim !== null,
    });
    if (t.fallbackReason) this.log.warn(`chat template: ${t.fallbackReason}; using ChatML`);
    const fallback = fallbackLine(this.view.info.backends.failed, this.view.info.placement);
    if (fallback) this.log.warn(fallback);
    return this.view;
  }

  /** Ends queued and running requests and closes the engines. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.doClose();
    return this.closed;
  }

  private async doClose(): Promise<void> {
    this.scheduler.shutdown();
    if (!(await this.scheduler.idle(5000))) this.log.warn('some requests did not end within 5 s of shutdown; closing engines anyway');
    await Promise.all(this.engines.map((e) => e.close().catch((err: unknown) => this.log.error('engine close failed', { replica: e.replica, error: String(err) }))));
    this.traces.close();
    this.scheduler.close();
  }
}
