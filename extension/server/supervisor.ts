// Keeps one `strata serve` process alive: start, wait for /health, restart on exit with
// back-off, give up with a clear message after repeated failures, stop (SIGTERM, then SIGKILL; on
// Windows the control channel's close, then taskkill: node-process.ts).
// No vscode and no real processes here: spawn, port picking, health probe and the clock are
// injected, so the policy is unit-tested with a fake clock.
import type { Health } from '../client/types.js';
import { classifyExit, type Failure } from './failures.js';

export interface ProcessHandle {
  readonly pid: number | undefined;
  /** 'SIGTERM': ask it to stop; 'SIGKILL': end it now with what it started (node-process.ts says how on Windows). */
  kill(signal: 'SIGTERM' | 'SIGKILL'): void;
  onOutput(listener: (line: string) => void): void;
  onExit(listener: (code: number | null, signal: string | null) => void): void;
}

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * Thrown by a probe when something answers on the port but cannot prove it is the server this
 * supervisor started (managed-launch.ts): another program holds the port, and nothing may be sent to it.
 */
export class ForeignServer extends Error {
  constructor(readonly port: number) {
    super(`port ${port} is in use by another program: it answered, but not as the Strata server started here, so nothing was sent to it`);
    this.name = 'ForeignServer';
  }
}

export interface SupervisorDeps {
  spawn(port: number): ProcessHandle;
  pickPort(): Promise<number>;
  /** One health check; throws when the server does not answer, ForeignServer when another program does. */
  probe(port: number): Promise<Health>;
  clock: Clock;
}

export interface SupervisorOptions {
  /** 0 = pick a free port for every start. */
  port: number;
  healthIntervalMs: number;
  /**
   * Limit for a start while the server has not said how long its load may take (not answering, or
   * a server that does not report it). Ours reports its own limit while loading (/health
   * `load_timeout_ms`, its --engine-ready-timeout-ms), and then that limit plus loadMarginMs
   * applies instead: the extension never cuts a load the server still allows.
   */
  startTimeoutMs: number;
  /** Beyond the server's own load limit: the work before an engine's load starts (CPU probes, session sweep). */
  loadMarginMs: number;
  /** Delay before restart n (the last entry repeats). */
  backoffMs: number[];
  /** Consecutive failures after which it stops trying. */
  maxFailures: number;
  /** A run that stayed ready this long resets the failure count. */
  stableMs: number;
  killGraceMs: number;
  /** Log lines kept to explain a failure. */
  tailLines: number;
}

export const DEFAULT_SUPERVISOR_OPTIONS: SupervisorOptions = {
  port: 0, healthIntervalMs: 250, startTimeoutMs: 10 * 60_000, loadMarginMs: 2 * 60_000, backoffMs: [1000, 2000, 5000, 10_000, 30_000],
  maxFailures: 5, stableMs: 60_000, killGraceMs: 3000, tailLines: 40,
};

export type SupervisorState =
  | { kind: 'stopped' }
  | { kind: 'starting'; port: number; pid: number | undefined; attempt: number }
  | { kind: 'ready'; port: number; pid: number | undefined; model: string | null; slots: number | null }
  | { kind: 'restarting'; retryInMs: number; failures: number; last: Failure }
  | { kind: 'failed'; failure: Failure; failures: number };

export class Supervisor {
  private state: SupervisorState = { kind: 'stopped' };
  private readonly opts: SupervisorOptions;
  private child: ProcessHandle | undefined;
  private childAlive = false;
  private port = 0;
  private tail: string[] = [];
  private failures = 0;
  private readySince = 0;
  private timer: unknown;
  private stopping: Promise<void> | undefined;
  private wantRunning = false;
  private generation = 0;
  /** A failure decided before the process exit (health timeout) wins over the exit's reading. */
  private failure: Failure | undefined;
  private readonly listeners = new Set<(s: SupervisorState) => void>();
  private readonly outputListeners = new Set<(line: string) => void>();
  private readonly waiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];

  constructor(private readonly deps: SupervisorDeps, opts: Partial<SupervisorOptions> = {}) {
    this.opts = { ...DEFAULT_SUPERVISOR_OPTIONS, ...opts };
  }

  get current(): SupervisorState {
    return this.state;
  }

  onState(listener: (s: SupervisorState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every line the server writes (stdout and stderr). */
  onOutput(listener: (line: string) => void): () => void {
    this.outputListeners.add(listener);
    return () => this.outputListeners.delete(listener);
  }

  /** Starts (if not running) and resolves when healthy; rejects with the failure's message. */
  start(): Promise<void> {
    const p = this.whenReady();
    if (this.state.kind === 'stopped' || this.state.kind === 'failed') {
      this.wantRunning = true;
      this.failures = 0;
      void this.launch(1);
    }
    return p;
  }

  whenReady(): Promise<void> {
    if (this.state.kind === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Stops the process (SIGTERM, SIGKILL after the grace time) and any pending restart. */
  async stop(): Promise<void> {
    this.wantRunning = false;
    this.generation++;
    this.deps.clock.clearTimeout(this.timer);
    if (this.childAlive && this.child) await this.killChild(this.child);
    this.set({ kind: 'stopped' });
    this.settleWaiters(new Error('the Strata server was stopped'));
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private async launch(attempt: number): Promise<void> {
    const gen = ++this.generation;
    let port: number;
    try {
      port = this.opts.port || (await this.deps.pickPort());
    } catch (err) {
      this.fail({ kind: 'portInUse', retry: false, message: `no free port: ${(err as Error).message}` });
      return;
    }
    if (gen !== this.generation) return;
    this.port = port;
    this.tail = [];
    this.failure = undefined;
    let child: ProcessHandle;
    try {
      child = this.deps.spawn(port);
    } catch (err) {
      this.fail({ kind: 'crashed', retry: false, message: `cannot start the server: ${(err as Error).message}` });
      return;
    }
    this.child = child;
    this.childAlive = true;
    child.onOutput((line) => {
      this.tail.push(line);
      if (this.tail.length > this.opts.tailLines) this.tail.shift();
      for (const l of this.outputListeners) l(line);
    });
    child.onExit((code, signal) => {
      if (this.child === child) this.childAlive = false;
      this.exited(child, code, signal);
    });
    this.set({ kind: 'starting', port, pid: child.pid, attempt });
    const started = this.deps.clock.now();
    let limitMs = this.opts.startTimeoutMs;
    const poll = async (): Promise<void> => {
      if (gen !== this.generation || this.child !== child || !this.childAlive) return;
      try {
        const h = await this.deps.probe(port);
        if (gen !== this.generation || this.child !== child || !this.childAlive) return;
        if (h.status === 'ok') {
          this.readySince = this.deps.clock.now();
          this.set({ kind: 'ready', port, pid: child.pid, model: h.model, slots: h.slots });
          this.settleWaiters();
          return;
        }
        if (h.status === 'failed') {
          // The engine crash-loops while loading: waiting longer will not help, and neither will a restart.
          this.failure = { kind: 'engineFailed', retry: false, message: `the engine could not start: ${h.reason ?? 'it kept crashing'}` };
          await this.killChild(child);
          return;
        }
        if (h.status === 'loading' && h.loadTimeoutMs !== null && limitMs === this.opts.startTimeoutMs) {
          // The server's own limit governs from its first answer on.
          limitMs = this.deps.clock.now() - started + h.loadTimeoutMs + this.opts.loadMarginMs;
        }
      } catch (err) {
        if (err instanceof ForeignServer) {
          // Not ready, whatever it says: the port goes back to that program (another port next time, if picked).
          if (gen !== this.generation || this.child !== child || !this.childAlive) return;
          this.failure = { kind: 'portInUse', retry: true, message: err.message };
          await this.killChild(child);
          return;
        }
        /* not listening yet */
      }
      if (this.deps.clock.now() - started >= limitMs) {
        const secs = Math.round(limitMs / 1000);
        this.failure = { kind: 'healthTimeout', retry: false, message: `the server did not become healthy within ${secs} s` };
        await this.killChild(child);
        return;
      }
      this.timer = this.deps.clock.setTimeout(() => void poll(), this.opts.healthIntervalMs);
    };
    await poll();
  }

  // A second crash-loop policy beside the engine's (backend/engine/crash-loop.ts), on purpose:
  // this one restarts the server process, which the engine's policy runs inside. A server that
  // dies takes its engines and their count with it, and an engine that restarts inside a server
  // that stays up is none of this one's business (the server answers /health throughout). Its
  // steps are fixed and slower (a server start re-runs CPU probes and a model load), and a run
  // counts as healthy after stableMs ready, since the extension cannot see requests served.
  private exited(child: ProcessHandle, code: number | null, signal: string | null): void {
    if (child !== this.child) return;
    this.deps.clock.clearTimeout(this.timer);
    if (!this.wantRunning) return; // stop() handles the state
    const failure = this.failure ?? classifyExit(this.tail, code, signal, this.port);
    this.failure = undefined;
    const stable = this.state.kind === 'ready' && this.deps.clock.now() - this.readySince >= this.opts.stableMs;
    this.failures = stable ? 1 : this.failures + 1;
    // A taken port is worth another try only when the next start picks a different one.
    const retry = failure.kind === 'portInUse' ? this.opts.port === 0 : failure.retry;
    if (!retry) {
      this.fail(failure);
      return;
    }
    if (this.failures >= this.opts.maxFailures) {
      this.fail({ ...failure, message: `the server stopped ${this.failures} times in a row; last time ${failure.message}` });
      return;
    }
    const b = this.opts.backoffMs;
    const delay = b[Math.min(this.failures - 1, b.length - 1)] ?? 1000;
    this.set({ kind: 'restarting', retryInMs: delay, failures: this.failures, last: failure });
    const gen = ++this.generation;
    this.timer = this.deps.clock.setTimeout(() => {
      if (gen === this.generation && this.wantRunning) void this.launch(this.failures + 1);
    }, delay);
  }

  private fail(failure: Failure): void {
    this.wantRunning = false;
    this.set({ kind: 'failed', failure, failures: this.failures });
    this.settleWaiters(new Error(failure.message));
  }

  private killChild(child: ProcessHandle): Promise<void> {
    if (this.stopping) return this.stopping;
    this.stopping = new Promise<void>((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        this.deps.clock.clearTimeout(killTimer);
        this.stopping = undefined;
        resolve();
      };
      child.onExit(finish);
      const killTimer = this.deps.clock.setTimeout(() => {
        try { child.kill('SIGKILL'); } catch { /* already gone */ }
      }, this.opts.killGraceMs);
      try { child.kill('SIGTERM'); } catch { finish(); }
    });
    return this.stopping;
  }

  private settleWaiters(err?: Error): void {
    for (const w of this.waiters.splice(0)) (err ? w.reject(err) : w.resolve());
  }

  private set(s: SupervisorState): void {
    this.state = s;
    for (const l of this.listeners) l(s);
  }
}
