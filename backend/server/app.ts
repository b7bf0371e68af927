// Composition of `strata serve`: engines (one child process per replica), the request
// table, the scheduler, sessions, traces and the HTTP server; and the order things start
// and stop in. Tests build it in-process with their own engine factory or the real one.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { installedBackendDirs, listInstalled, type InstalledBackend } from '../backends/install.js';
import { probeMachine, type MachineReport } from '../backends/machine.js';
import { fallbackLine } from '../backends/readiness.js';
import type { EngineClient, EngineConfig } from '../engine/client.js';
import { memoCpuPath, type CpuPath } from '../engine/cpu-path.js';
import { createProcessEngineClient } from '../engine/process-client.js';
import { ConnectionTracker } from '../http/connections.js';
import { createHttpServer } from '../http/server.js';
import { SlowReaderWatch } from '../http/slow-readers.js';
import type { Logger } from '../log/logger.js';
import { TraceCollector } from '../metrics/traces.js';
import { RequestLedger } from '../scheduler/request-ledger.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { SessionService } from '../sessions/session-service.js';
import { SessionStore } from '../sessions/session-store.js';
import type { ServerConfig } from './config.js';
import type { AppContext } from '../http/app-context.js';
import { createModelView, type ModelView } from '../served-model/model-view.js';

export interface StrataServerOptions {
  config: ServerConfig;
  modelPath: string;
  /** The model is the generated random-weight demo model. */
  demo?: boolean;
  log: Logger;
  /** Makes one replica's engine client (default: an engine host child process). */
  engineFactory?: (replica: number, config: EngineConfig) => EngineClient;
  /** Restart back-off of crashed engines. */
  restart?: { minDelayMs: number; maxDelayMs: number };
  /** Folders of GPU backend libraries the engines load (default: those `strata backend install` put in the cache). */
  backendDirs?: string[];
}

export function engineConfigFor(cfg: ServerConfig, modelPath: string, replica: number, backendDirs: string[] = []): EngineConfig {
  const ec: EngineConfig = { model: modelPath, slots: cfg.slots };
  if (backendDirs.length > 0) ec.backendDirs = backendDirs;
  if (cfg.opOffload !== null) ec.opOffload = cfg.opOffload === 'on';
  if (cfg.ctx !== null) ec.ctx = cfg.ctx;
  if (cfg.batch !== null) ec.batch = cfg.batch;
  if (cfg.decodePromptBudget !== null) ec.decodePromptBudget = cfg.decodePromptBudget;
  if (cfg.threads !== null) ec.threads = cfg.threads;
  if (cfg.kvType !== null) ec.kvType = cfg.kvType;
  if (cfg.flashAttn !== null) ec.flashAttn = cfg.flashAttn;
  if (cfg.cacheMib !== null) ec.parkBudgetMiB = cfg.cacheMib;
  if (cfg.deviceGroups !== null) ec.devices = cfg.deviceGroups[replica] ?? cfg.deviceGroups[0]!;
  if (cfg.splitMode !== null) ec.splitMode = cfg.splitMode;
  if (cfg.tensorSplit !== null) ec.tensorSplit = cfg.tensorSplit;
  if (cfg.rpc !== null) ec.rpc = cfg.rpc;
  if (cfg.gpuLayers !== null) ec.gpuLayers = cfg.gpuLayers;
  if (cfg.embeddings !== 'auto') ec.embeddings = cfg.embeddings;
  if (cfg.specNgram || cfg.draftModel !== null) {
    ec.speculative = {
      ...(cfg.specNgram ? { ngram: true } : {}),
      ...(cfg.draftModel !== null ? { draftModel: cfg.draftModel } : {}),
      ...(cfg.draftMax !== null ? { draftMax: cfg.draftMax } : {}),
      ...(cfg.draftMin !== null ? { draftMin: cfg.draftMin } : {}),
      ...(cfg.draftPMin !== null ? { draftPMin: cfg.draftPMin } : {}),
    };
  }
  return ec;
}

export class StrataServer {
  readonly app: AppContext;
  readonly engines: EngineClient[];
  readonly table: RequestLedger;
  readonly scheduler: Scheduler;
  private readonly http: Server;
  private readonly connections: ConnectionTracker;
  private readonly traces: TraceCollector;
  private readonly readers: SlowReaderWatch;
  private readonly log: Logger;
  private view: ModelView | null = null;
  private readonly cpuPath: (() => Promise<CpuPath>) | null;
  private stopping = false;
  private closed: Promise<void> | null = null;

  constructor(private readonly opts: StrataServerOptions) {
    const { config, log } = opts;
    this.log = log;
    // Real engine processes share one CPU path resolution (probes run once per machine and build).
    const cpuPath = opts.engineFactory ? null
      : memoCpuPath({ variant: config.cpuVariant, repack: config.cpuRepack }, { log: (line, level) => log[level](line) });
    this.cpuPath = cpuPath;
    const make = opts.engineFactory ?? ((replica: number, ec: EngineConfig) => createProcessEngineClient({
      replica, config: ec, readyTimeoutMs: config.engineReadyTimeoutMs, silenceTimeoutMs: config.engineSilenceTimeoutMs,
      restart: opts.restart ?? { minDelayMs: 1000, maxDelayMs: 60_000 },
      log: (line, level) => log[level](line, { replica }),
      ...(cpuPath ? { cpuPath } : {}),
    }));
    const backendDirs = opts.backendDirs ?? installedBackendDirs();
    const installed = listInstalled().filter((b) => backendDirs.includes(b.dir));
    let machine: MachineReport | null = null;
    this.engines = Array.from({ length: config.replicas }, (_, i) => make(i, engineConfigFor(config, opts.modelPath, i, backendDirs)));
    this.table = new RequestLedger({
      historySize: 500,
      onInvariantViolation: (msg) => log.error(`bookkeeping: ${msg}`),
    });
    this.scheduler = new Scheduler(this.engines, this.table, { maxQueued: config.maxQueued, log });
    this.traces = new TraceCollector(this.engines, this.table, { log });
    const sessions = new SessionService(new SessionStore(config.sessionsDir), {
      model: () => this.view, scheduler: this.scheduler, log,
    });
    this.readers = new SlowReaderWatch({ boundMs: config.slowReaderMs });
    this.app = {
      config, log, table: this.table, scheduler: this.scheduler, engines: this.engines, traces: this.traces, sessions, readers: this.readers,
      startedAt: Date.now(), modelPath: opts.modelPath, fingerprint: 'strata-0.1.0',
      model: () => this.view, stopping: () => this.stopping, cpuPath: () => this.cpuPath?.() ?? null,
      gpuBackends: (): { installed: InstalledBackend[]; machine: MachineReport } => ({ installed, machine: machine ??= probeMachine() }),
    };
    this.table.onChange((r) => {
      if (r.state !== 'ended' || r.end === 'rejected') return;
      log.info('request', {
        request: r.id, kind: r.kind, finish: r.end ?? undefined, replica: r.replica ?? undefined, slot: r.slot ?? undefined,
        prompt: r.promptTokens ?? undefined, reused: r.reused ?? undefined, output: r.generated,
        ms: (r.endedAt ?? Date.now()) - r.acceptedAt, error: r.error ?? undefined,
      });
    });
    this.http = createHttpServer(this.app);
    this.connections = new ConnectionTracker(this.http);
  }

  get model(): ModelView | null { return this.view; }

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
   * Starts every replica; resolves once one is ready and the model is known. Rejects only when
   * every replica failed its first start (a bad model file: nothing to serve).
   */
  async startEngines(): Promise<ModelView> {
    // Before any save of ours can start (saves need the model view set below).
    const swept = this.app.sessions.sweep();
    const starts = this.engines.map((e) => e.start().then(() => e));
    let first: EngineClient;
    try {
      first = await Promise.any(starts);
    } catch (e) {
      const errors = e instanceof AggregateError ? e.errors : [e];
      throw new Error(`the engine could not load ${this.opts.modelPath}: ${errors.map((x) => (x as Error)?.message ?? String(x)).join('; ')}`);
    }
    for (const [i, p] of starts.entries()) p.catch((err: unknown) => this.log.error('engine failed to start', { replica: i, error: (err as Error)?.message ?? String(err) }));
    await swept;
    this.view = await createModelView(this.opts.modelPath, first, this.opts.demo ?? false);
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

  /** Stops accepting, ends queued and running requests, closes engines. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.doClose();
    return this.closed;
  }

  private async doClose(): Promise<void> {
    this.stopping = true;
    const httpClosed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    this.scheduler.shutdown();
    if (!(await this.scheduler.idle(5000))) this.log.warn('some requests did not end within 5 s of shutdown; closing engines anyway');
    await Promise.all(this.engines.map((e) => e.close().catch((err: unknown) => this.log.error('engine close failed', { replica: e.replica, error: String(err) }))));
    // Streams have ended by now; keep-alive connections go as soon as their last answer is out.
    this.connections.closeIdle();
    const idle = setInterval(() => this.connections.closeIdle(), 20);
    const forced = setTimeout(() => this.connections.closeAll(), 2000);
    await httpClosed;
    clearInterval(idle);
    clearTimeout(forced);
    this.traces.close();
    this.readers.stop();
    this.scheduler.close();
  }
}
