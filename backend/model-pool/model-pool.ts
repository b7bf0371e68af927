// The served models and their lifecycle: unloaded -> loading -> loaded (or failed), and back to
// unloaded by an unload call, by idling past --model-idle-s, or to make room for another model
// under --models-max, the host-RAM budget and each offload device's free memory (least recently
// used idle model first; on a device, only models that hold memory there). A request holds its
// model (a lease) from routing to its answer; a held model is never unloaded, and a pinned one
// (--pin) never by LRU or idling. Each loaded model is a runtime of its own (engine processes,
// ledger, scheduler: app/model-runtime.ts). Loads run one at a time, so two loads never both count
// the same free room.
import { ApiError, apiError } from '../validation/errors.js';
import type { ModelActionBody, ModelRole, ModelState } from '../../contract/models.js';
import type { AppContext, ModelDirectory, ModelLease, ServedModelRow } from '../http/app-context.js';
import type { Logger } from '../log/logger.js';

export interface PoolModelSpec {
  name: string;
  path: string;
  role: ModelRole | null;
  /** Never unloaded by LRU or idle time (an explicit unload still is). */
  pinned?: boolean;
}

/** Bytes per device name ("CUDA0", "Vulkan0", "RPC0"). */
export type DeviceBytes = Record<string, number>;

/** What a model needs on one offload device as asked (every asked layer there), and what the device had free when measured. */
export interface DeviceNeed {
  device: string;
  bytes: number;
  free: number;
  total: number;
}

/** The fit probe's measurement of a model as asked: each offload device's need, and what stays in host RAM. */
export interface MeasuredNeeds {
  devices: DeviceNeed[];
  hostBytes: number;
}

/** One loaded (or loading) model. */
export interface PoolRuntime {
  readonly app: AppContext;
  /** Resolves once the model serves (rejects when it cannot load). */
  start(): Promise<void>;
  close(): Promise<void>;
  /** What its engines hold on each offload device (from the buffers llama.cpp allocated); empty before it loads. */
  deviceUse(): DeviceBytes;
}

export interface ModelPoolOptions<S extends PoolModelSpec> {
  specs: readonly S[];
  /** `held`: what the other loaded models hold per device (their engines fit around it). */
  make(spec: S, held: DeviceBytes): PoolRuntime;
  /** Host RAM the model needs while loaded (bytes). */
  estimate(spec: S): Promise<number>;
  /**
   * What the model needs per offload device as asked, measured before it loads (the fit probe), and
   * in host RAM (which then replaces `estimate`: weights on a GPU are not the host's); null when it
   * offloads nothing or it cannot be measured (then only the count and RAM limits apply).
   */
  deviceNeeds?(spec: S, held: DeviceBytes): Promise<MeasuredNeeds | null>;
  /** Memory kept free on every device (bytes; the fit margin). */
  deviceMarginBytes?: number;
  maxLoaded: number | null;
  ramBudgetBytes: number;
  /** 0: never unload for idling. */
  idleMs: number;
  log: Logger;
  now?: () => number;
}

interface Entry<S> {
  spec: S;
  state: ModelState;
  runtime: PoolRuntime | null;
  loading: Promise<void> | null;
  /** The previous runtime's close, which a reload waits for. */
  closing: Promise<void> | null;
  leases: number;
  lastUsed: number | null;
  requests: number;
  loads: number;
  unloads: number;
  loadStartedAt: number | null;
  estimate: number | null;
  error: string | null;
  /** What the last measurement said it needs per device (null: not measured). */
  needs: DeviceNeed[] | null;
  /** The runtime in `runtime` has been started (a prepared one has not). */
  started: boolean;
}

export class ModelPool<S extends PoolModelSpec> implements ModelDirectory {
  private readonly entries: Entry<S>[];
  private readonly now: () => number;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly opts: ModelPoolOptions<S>) {
    if (opts.specs.length === 0) throw new Error('a model pool needs at least one model');
    this.now = opts.now ?? Date.now;
    this.entries = opts.specs.map((spec) => ({
      spec, state: 'unloaded', runtime: null, loading: null, closing: null, leases: 0, lastUsed: null,
      requests: 0, loads: 0, unloads: 0, loadStartedAt: null, estimate: null, error: null, needs: null, started: false,
    }));
  }

  get several(): boolean { return this.entries.length > 1; }
  get defaultName(): string { return this.entries[0]!.spec.name; }
  names(): string[] { return this.entries.map((e) => e.spec.name); }

  pick(name: string | null, role: ModelRole | null): string {
    // One model answers under any name, as Strata always did (clients send "gpt-4o", "strata", ...).
    if (!this.several) return this.defaultName;
    if (name !== null && name !== '') {
      const e = this.entries.find((x) => x.spec.name === name)
        ?? this.entries.find((x) => x.runtime?.app.model()?.id === name && x.state === 'loaded');
      if (!e) {
        throw this.notServed(name);
      }
      return e.spec.name;
    }
    return (role !== null ? this.entries.find((e) => e.spec.role === role) : undefined)?.spec.name ?? this.defaultName;
  }

  state(name: string): ModelState { return this.entry(name).state; }

  /** The runtime while it exists (loading or loaded). */
  runtimeOf(name: string): PoolRuntime | null { return this.entry(name).runtime; }

  /** Makes a model's runtime without starting it (the default model's exists from the start, as a single model's always did). */
  prepare(name: string): PoolRuntime {
    const e = this.entry(name);
    e.runtime ??= this.opts.make(e.spec, this.heldBy(e));
    return e.runtime;
  }

  async acquire(name: string): Promise<ModelLease> {
    const e = this.entry(name);
    e.leases++;
    e.requests++;
    e.lastUsed = this.now();
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      e.leases--;
      e.lastUsed = this.now();
    };
    try {
      // One model refuses with 503 model_loading while it loads, as it always did; several wait.
      if (this.several || e.state !== 'loading') await this.ensureLoaded(e);
    } catch (err) {
      release();
      throw err;
    }
    return { app: e.runtime!.app, release };
  }

  async load(name: string): Promise<ModelActionBody> {
    const e = this.entry(name);
    await this.ensureLoaded(e);
    return { model: name, state: e.state };
  }

  async unload(name: string): Promise<ModelActionBody> {
    const e = this.entry(name);
    if (e.leases > 0) {
      throw apiError('model_busy', `the model '${name}' has ${e.leases} request(s) in flight; unload it when they end`, { param: 'model' });
    }
    if (e.loading) {
      throw apiError('model_busy', `the model '${name}' is loading; unload it once it has loaded`, { param: 'model' });
    }
    if (e.state === 'loaded') await this.unloadEntry(e, 'asked');
    return { model: name, state: e.state };
  }

  /** Unloads every model idle past the idle time; the server calls it on a timer, tests directly. */
  async sweepIdle(): Promise<string[]> {
    const idleMs = this.opts.idleMs;
    if (idleMs <= 0) return [];
    const now = this.now();
    const idle = this.entries.filter((e) => e.state === 'loaded' && !e.spec.pinned && e.leases === 0 && e.loading === null && now - (e.lastUsed ?? 0) >= idleMs);
    for (const e of idle) await this.unloadEntry(e, `idle for ${Math.round((now - (e.lastUsed ?? 0)) / 1000)} s`);
    return idle.map((e) => e.spec.name);
  }

  rows(): ServedModelRow[] {
    const now = this.now();
    return this.entries.map((e, i) => ({
      name: e.spec.name, state: e.state, role: e.spec.role, file: e.spec.path, default: i === 0,
      pinned: e.spec.pinned === true,
      memory_estimate: e.estimate ?? 0,
      device_memory: e.state === 'loaded' ? e.runtime?.deviceUse() ?? {} : {},
      last_used: e.lastUsed !== null && e.requests > 0 ? new Date(e.lastUsed).toISOString() : null,
      requests_in_flight: e.leases, requests_total: e.requests, loads: e.loads, unloads: e.unloads,
      loading_ms: e.state === 'loading' && e.loadStartedAt !== null ? now - e.loadStartedAt : null,
      error: e.error,
      app: e.state === 'loaded' || e.state === 'loading' ? e.runtime?.app ?? null : null,
    }));
  }

  front(): AppContext {
    const held = this.entries.find((e) => e.runtime !== null && (e.state === 'loaded' || e.state === 'loading'));
    return (held ?? this.entries[0]!).runtime?.app ?? this.prepare(this.defaultName).app;
  }

  budget(): { maxLoaded: number | null; ramBudget: number; idleUnloadMs: number; deviceMargin: number } {
    return { maxLoaded: this.opts.maxLoaded, ramBudget: this.opts.ramBudgetBytes, idleUnloadMs: this.opts.idleMs, deviceMargin: this.opts.deviceMarginBytes ?? 0 };
  }

  /** Closes every runtime (shutdown); loads after this are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.entries.map(async (e) => {
      // A load in progress ends too: closing its engines fails its start.
      const rt = e.runtime;
      e.runtime = null;
      if (rt) await rt.close();
      await e.loading?.catch(() => {});
      await e.closing;
    }));
  }

  private notServed(name: string): ApiError {
    return apiError('model_not_found', `the model '${name}' is not served; served models: ${this.names().join(', ')}`, { param: 'model' });
  }

  private entry(name: string): Entry<S> {
    const e = this.entries.find((x) => x.spec.name === name);
    if (!e) throw this.notServed(name);
    return e;
  }

  private ensureLoaded(e: Entry<S>): Promise<void> {
    if (e.state === 'loaded' && e.runtime) return Promise.resolve();
    if (this.closed) return Promise.reject(apiError('shutting_down'));
    if (!e.loading) {
      e.state = 'loading';
      e.loadStartedAt = this.now();
      e.error = null;
      const run = this.chain.then(() => this.loadEntry(e));
      e.loading = run.finally(() => { e.loading = null; });
      this.chain = e.loading.catch(() => {});
    }
    return e.loading;
  }

  private async loadEntry(e: Entry<S>): Promise<void> {
    try {
      await e.closing;
      const measured = await this.measureNeeds(e);
      e.needs = measured?.devices ?? null;
      if (measured && measured.devices.length > 0) e.estimate = measured.hostBytes;
      e.estimate ??= await this.opts.estimate(e.spec);
      await this.makeRoom(e);
      const held = this.heldBy(e);
      // A runtime prepared before other models held device memory would fit around nothing: make it anew.
      if (e.runtime && !e.started && Object.keys(held).length > 0) {
        const stale = e.runtime;
        e.runtime = null;
        await stale.close();
      }
      const rt = e.runtime ?? this.opts.make(e.spec, held);
      e.runtime = rt;
      e.started = true;
      const t0 = this.now();
      await rt.start();
      if (this.closed) throw apiError('shutting_down');
      e.state = 'loaded';
      e.loads++;
      e.lastUsed = this.now();
      this.opts.log.info('model loaded', { model: e.spec.name, ms: this.now() - t0, memory_mib: Math.round((e.estimate ?? 0) / 2 ** 20) });
    } catch (err) {
      const rt = e.runtime;
      e.runtime = null;
      e.started = false;
      if (this.closed) {
        e.state = 'unloaded';
        if (rt) e.closing = rt.close().catch(() => {});
        throw apiError('shutting_down');
      }
      e.state = 'failed';
      e.error = (err as Error)?.message ?? String(err);
      if (rt) e.closing = rt.close().catch(() => {});
      // One model's failed start is the server's failure, which serve reports once (and exits).
      if (this.several) this.opts.log.error('model failed to load', { model: e.spec.name, error: e.error });
      if (err instanceof ApiError) throw err;
      throw apiError('model_load_failed', `the model '${e.spec.name}' could not load: ${e.error}`, { param: 'model' });
    }
  }

  /** What the other loaded models hold per device. */
  private heldBy(e: Entry<S>): DeviceBytes {
    const held: DeviceBytes = {};
    for (const x of this.entries) {
      if (x === e || x.state !== 'loaded' || !x.runtime) continue;
      for (const [d, bytes] of Object.entries(x.runtime.deviceUse())) held[d] = (held[d] ?? 0) + bytes;
    }
    return held;
  }

  /** The fit probe's measurement (only when several models share the server: one model alone always loads). */
  private async measureNeeds(e: Entry<S>): Promise<MeasuredNeeds | null> {
    if (!this.opts.deviceNeeds || !this.several) return null;
    try {
      return await this.opts.deviceNeeds(e.spec, this.heldBy(e));
    } catch (err) {
      this.opts.log.warn('could not measure what the model needs per device; only the count and RAM limits apply', { model: e.spec.name, error: String((err as Error)?.message ?? err) });
      return null;
    }
  }

  /**
   * Unloads least recently used idle models (never pinned ones) until `e` fits the count limit and
   * the RAM budget, then, device by device, until what it needs there fits what is free (models that
   * hold nothing on a device are not unloaded for it). When pinned or busy models leave too little on
   * a device, it loads anyway: its fit places fewer layers there.
   */
  private async makeRoom(e: Entry<S>): Promise<void> {
    // Loads run one at a time: another 'loading' model is only queued and holds nothing yet.
    const others = () => this.entries.filter((x) => x !== e && x.state === 'loaded');
    const idleLru = (on?: string) => others()
      .filter((x) => x.leases === 0 && !x.spec.pinned && (on === undefined || (x.runtime?.deviceUse()[on] ?? 0) > 0))
      .sort((a, b) => (a.lastUsed ?? 0) - (b.lastUsed ?? 0));
    const fits = (): boolean => {
      const held = others();
      if (this.opts.maxLoaded !== null && held.length + 1 > this.opts.maxLoaded) return false;
      const used = held.reduce((n, x) => n + (x.estimate ?? 0), 0);
      // Alone, a model loads whatever the budget says (the budget is about several at once).
      return held.length === 0 || used + (e.estimate ?? 0) <= this.opts.ramBudgetBytes;
    };
    while (!fits()) {
      const victim = idleLru()[0];
      if (!victim) {
        const busy = others().map((x) => (x.spec.pinned && x.leases === 0 ? `${x.spec.name} (pinned)` : `${x.spec.name} (${x.leases} in flight)`)).join(', ');
        throw apiError('models_busy', `cannot load '${e.spec.name}': --models-max / --models-ram-mib leave no room while ${busy} hold theirs; retry when they end, or unpin one`, { param: 'model' });
      }
      await this.unloadEntry(victim, `to make room for ${e.spec.name}`);
    }
    const margin = this.opts.deviceMarginBytes ?? 0;
    const freed: DeviceBytes = {};
    // Free now: the measurement plus what was unloaded since, and never more than the device less what ours hold
    // (a device that does not report use, as lavapipe, still counts our models).
    const available = (n: DeviceNeed): number => Math.min(n.free + (freed[n.device] ?? 0), n.total - (this.heldBy(e)[n.device] ?? 0));
    for (const need of e.needs ?? []) {
      while (need.bytes + margin > available(need)) {
        const victim = idleLru(need.device)[0];
        if (!victim) {
          const holders = others().filter((x) => (x.runtime?.deviceUse()[need.device] ?? 0) > 0).map((x) => x.spec.name);
          this.opts.log.warn(`${e.spec.name} needs ${mib(need.bytes)} on ${need.device}, ${mib(Math.max(0, available(need) - margin))} is free beside the margin` +
            `${holders.length > 0 ? ` and ${holders.join(', ')} (pinned or busy) hold the rest` : ''}; its fit places fewer layers there`, { model: e.spec.name, device: need.device });
          break;
        }
        const use = victim.runtime?.deviceUse() ?? {};
        await this.unloadEntry(victim, `to make room on ${need.device} for ${e.spec.name}`);
        for (const [d, bytes] of Object.entries(use)) freed[d] = (freed[d] ?? 0) + bytes;
      }
    }
  }

  private async unloadEntry(e: Entry<S>, why: string): Promise<void> {
    const rt = e.runtime;
    e.runtime = null;
    e.started = false;
    e.state = 'unloaded';
    e.unloads++;
    this.opts.log.info('model unloaded', { model: e.spec.name, why });
    if (!rt) return;
    const closing = rt.close().catch((err: unknown) => this.opts.log.error('model close failed', { model: e.spec.name, error: String(err) }));
    e.closing = closing;
    await closing;
  }
}

const mib = (bytes: number): string => `${Math.round(bytes / 2 ** 20)} MiB`;
