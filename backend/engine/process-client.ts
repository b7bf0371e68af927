// EngineClient over an engine host child process (host.ts): one process per start, each
// with a new epoch. A crash ends every in-flight request at once with engineDied, is kept as
// data (status().lastDeath) and starts a new process in the background after the crash-loop
// policy's delay (crash-loop.ts).
//
// Requests while the engine is starting, restarting or down end at once with a 'done'
// {finish:'error', engineDied:true} that says so (they are not queued): the server answers
// 503 and the caller retries; a queue here would hide a dead engine behind a wait.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelInfo } from '../../native/lib/addon.js';
import { modelSummary } from '../models/summary.js';
import { packageRoot } from '../addon/loader.js';
import type { CpuPath } from './cpu-path.js';
import { callsOver, type CallArgs, type CallName, type CallResult, type EngineCalls } from './calls.js';
import {
  EngineCallError, type EmbedInput, type EngineClient, type EngineConfig, type EngineDeath, type EngineRequest, type EngineStatus,
  type GenerateInput, type RequestSink,
} from './client.js';
import { CrashLoop, DEFAULT_CRASH_LOOP, type CrashLoopOptions } from './crash-loop.js';
import type { EngineState } from '../../contract/metrics.js';
import { parseHostMessage, type CallCommand, type CallCommandOf, type Command, type HostMessage } from './protocol.js';
import { BACKGROUND_NICE, lowerPriority } from './priority.js';
import { EngineRequestRouter } from './request-router.js';
import { describeExit } from '../../common/os/process.js';

export interface ProcessEngineClientOptions {
  replica: number;
  config: EngineConfig;
  /** The model's name in deaths (the served name); default: the model file's name. */
  model?: string;
  /** Default: dist/engine-host.mjs under the package root. */
  hostScript?: string;
  /** Default process.execPath. Under Electron pass ELECTRON_RUN_AS_NODE=1 in our env: it is passed through. */
  nodePath?: string;
  /** Model load limit: the server's --engine-ready-timeout-ms (serve-options.ts), the one default. */
  readyTimeoutMs: number;
  /** Kill an engine that sends nothing for this long while it has work (--engine-silence-timeout-ms); every message restarts the clock. */
  silenceTimeoutMs: number;
  /**
   * The crash-loop policy (crash-loop.ts): back-off between restarts, min doubling up to max
   * (default 500 ms .. 30 s); a run that served a request, or stayed ready healthyMs (default
   * 10 s), starts the count over; after maxCrashes deaths in a row (default 5) it stays down.
   */
  restart?: Partial<CrashLoopOptions> & { minDelayMs: number; maxDelayMs: number };
  /** The crash-loop policy's clock (tests). Default Date.now. */
  now?: () => number;
  /** The CPU path (variant, repacking) every start of this engine uses; resolved before the first start. */
  cpuPath?: () => Promise<CpuPath>;
  /** Engine host stdout/stderr lines and client events. Must not block. Default: dropped. */
  log?: (line: string, level: 'info' | 'warn' | 'error') => void;
  /**
   * How close() stops the process (default: this platform). POSIX: 'close' over IPC when ready,
   * SIGTERM while loading, SIGTERM then SIGKILL when it lingers. Windows has no SIGTERM (kill()
   * ends a process at once there): 'close' over IPC in both phases, then the hard kill.
   */
  platform?: NodeJS.Platform;
}

interface PendingCall {
  kind: CallName;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

/** One engine host process: one epoch. */
interface Incarnation {
  epoch: number;
  child: ChildProcess;
  phase: 'loading' | 'ready';
  /** Started by the restart back-off rather than by start(): a failed load schedules another try. */
  auto: boolean;
  ended: boolean;
  calls: Map<number, PendingCall>;
  /** Why we killed it, or what it said before dying; goes into the error callers see. */
  killReason: string | null;
  fatal: string | null;
  /** Last error-looking log line (e.g. a GGML_ASSERT), quoted when it dies. */
  lastErrorLog: string | null;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Resolves when the incarnation has ended (see end()). */
  gone: Promise<void>;
  markGone: () => void;
  settleStart: { resolve: (info: ModelInfo) => void; reject: (e: Error) => void };
  timers: Set<NodeJS.Timeout>;
}

const CLOSE_GRACE_MS = 5000;
const TERM_GRACE_MS = 2000;
/** 'close' follows 'exit' once the child's pipes are drained; this bounds the wait. */
const CLOSE_AFTER_EXIT_MS = 2000;

// The call methods (EngineCalls) are made from the CallSpecs table in the constructor (callsOver), one per entry.
// biome-ignore lint/correctness/noUnusedVariables: merged with the class below, which gains the calls at run time
interface ProcessEngineClient extends EngineCalls {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor defines every EngineCalls method (callsOver)
class ProcessEngineClient implements EngineClient {
  readonly replica: number;
  private readonly hostScript: string;
  private readonly readyTimeoutMs: number;
  private readonly silenceTimeoutMs: number;
  private readonly crashLoop: CrashLoop;
  private readonly modelName: string;
  private readonly log: (line: string, level: 'info' | 'warn' | 'error') => void;

  private readonly router = new EngineRequestRouter();
  private readonly listeners = new Set<(s: EngineStatus) => void>();
  private modelInfo: ModelInfo | null = null;
  private state: EngineState = 'dead';
  private epoch = 0;
  private restarts = 0;
  private lastError: string | null = null;
  private lastDeath: EngineDeath | null = null;
  private current: Incarnation | null = null;
  private starting: Promise<ModelInfo> | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private silenceTimer: NodeJS.Timeout | null = null;
  private nextCall = 1;
  private closing: Promise<void> | null = null;
  private cpu: CpuPath | null = null;

  constructor(private readonly opts: ProcessEngineClientOptions) {
    this.replica = opts.replica;
    this.hostScript = opts.hostScript ?? join(packageRoot, 'dist', 'engine-host.mjs');
    this.readyTimeoutMs = opts.readyTimeoutMs;
    this.silenceTimeoutMs = opts.silenceTimeoutMs;
    this.crashLoop = new CrashLoop({ ...DEFAULT_CRASH_LOOP, ...opts.restart }, opts.now);
    this.modelName = opts.model ?? opts.config.model.split(/[\\/]/).pop()!;
    this.log = opts.log ?? (() => {});
    Object.assign(this, callsOver((name, args) => this.call(name, args)));
  }

  get info(): ModelInfo | null { return this.modelInfo; }

  status(): EngineStatus {
    const inc = this.current;
    return {
      replica: this.replica, state: this.state, epoch: this.epoch,
      pid: inc && !inc.ended ? inc.child.pid ?? null : null,
      restarts: this.restarts, lastError: this.lastError, lastDeath: this.lastDeath, staleFrames: this.router.staleFrames,
    };
  }

  onStatus(listener: (s: EngineStatus) => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  start(): Promise<ModelInfo> {
    if (this.state === 'closed') return Promise.reject(new Error(this.unavailable()));
    if (this.state === 'ready' && this.modelInfo) return Promise.resolve(this.modelInfo);
    if (this.starting) return this.starting;
    this.clearRestartTimer();
    if (this.state === 'failed') this.crashLoop.reset();  // an explicit start after the crash limit tries again
    if (this.opts.cpuPath && !this.cpu) return this.resolveCpuThenLaunch();
    return this.launch(false);
  }

  /** The CPU path comes first: its probes run once, before any engine process of this client. */
  private resolveCpuThenLaunch(): Promise<ModelInfo> {
    this.setState('starting');
    const started = this.opts.cpuPath!().then(
      (cpu) => {
        this.cpu = cpu;
        if (this.starting === started) this.starting = null;
        return this.state === 'closed' ? Promise.reject(new Error(this.unavailable())) : this.launch(false);
      },
      (err: unknown) => {
        if (this.starting === started) this.starting = null;
        this.lastError = (err as Error).message;
        if (this.state !== 'closed') this.setState('dead');
        throw err;
      },
    );
    this.starting = started;
    return started;
  }

  generate(input: GenerateInput, sink?: RequestSink): EngineRequest {
    return this.open(input, sink, (epoch, id) => ({ kind: 'submit', epoch, id, request: input }));
  }

  embed(input: EmbedInput, sink?: RequestSink): EngineRequest {
    return this.open(input, sink, (epoch, id) => ({ kind: 'embed', epoch, id, request: input }));
  }

  /** Opens a request in the router and sends the command that starts it on the engine. */
  private open(input: GenerateInput | EmbedInput, sink: RequestSink | undefined, command: (epoch: number, id: number) => Command): EngineRequest {
    const inc = this.current;
    if (this.state !== 'ready' || !inc) {
      return this.router.openEnded(this.epoch, input, { finish: 'error', engineDied: true, error: this.unavailable() }, sink);
    }
    const req = this.router.open(inc.epoch, input, (id) => {
      if (this.current === inc) this.send(inc, { kind: 'cancel', epoch: inc.epoch, id });
    }, sink);
    const error = this.send(inc, command(inc.epoch, req.id));
    if (error) this.router.end(req.id, { finish: 'error', engineDied: !inc.child.connected, error });
    this.watchSilence(false);
    return req;
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Test hook: handles `frame` as if the current engine process had sent it. */
  injectFrame(frame: unknown): void {
    if (this.current) this.onFrame(this.current, frame);
  }

  // --- process lifecycle -------------------------------------------------------------------

  private launch(auto: boolean): Promise<ModelInfo> {
    const epoch = ++this.epoch;
    if (epoch > 1) this.restarts++;
    if (!existsSync(this.hostScript)) {
      const error = `engine host script not found: ${this.hostScript} (run \`npm run build\`)`;
      this.lastError = error;
      this.setState('dead');
      return Promise.reject(new Error(error));
    }
    const child = fork(this.hostScript, ['--epoch', String(epoch), '--replica', String(this.replica)], {
      execPath: this.opts.nodePath ?? process.execPath,
      execArgv: [],
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    let settleStart!: Incarnation['settleStart'];
    const started = new Promise<ModelInfo>((resolve, reject) => { settleStart = { resolve, reject }; });
    let markGone!: () => void;
    const gone = new Promise<void>((resolve) => { markGone = resolve; });
    const inc: Incarnation = {
      epoch, child, phase: 'loading', auto, ended: false, calls: new Map(),
      killReason: null, fatal: null, lastErrorLog: null, exit: null, gone, markGone, settleStart, timers: new Set(),
    };
    this.current = inc;
    this.pipeLogs(inc, child.stdout, 'info');
    this.pipeLogs(inc, child.stderr, null);
    child.on('message', (m) => this.onFrame(inc, m));
    child.on('error', (err) => {
      this.log(`engine process (replica ${this.replica}, epoch ${epoch}): ${err.message}`, 'error');
      if (child.pid === undefined) {
        this.end(inc, `cannot start engine process (${this.opts.nodePath ?? process.execPath}): ${err.message}`);
      }
    });
    // 'close' comes after the IPC channel and pipes are drained, so every message the process
    // sent before dying is handled first; the timer bounds the wait should a pipe stay open.
    child.on('exit', (code, signal) => {
      inc.exit = { code, signal };
      this.timer(inc, CLOSE_AFTER_EXIT_MS, () => this.end(inc, this.deathReason(inc)));
    });
    child.on('close', () => this.end(inc, this.deathReason(inc)));
    this.timer(inc, this.readyTimeoutMs, () => {
      if (inc.phase === 'loading') this.kill(inc, `engine did not become ready within ${this.readyTimeoutMs} ms`);
    });

    this.starting = started;
    const clear = (): void => { if (this.starting === started) this.starting = null; };
    started.then(clear, clear);
    this.setState('starting');
    this.log(`engine starting (replica ${this.replica}, epoch ${epoch}, pid ${child.pid ?? '?'})`, 'info');
    const config = this.cpu ? { ...this.opts.config, cpuVariant: this.cpu.variant ?? 'auto', cpuRepack: this.cpu.repack } : this.opts.config;
    const initError = this.send(inc, { kind: 'init', epoch, config });
    if (initError) this.end(inc, initError);
    return started;
  }

  private onFrame(inc: Incarnation, raw: unknown): void {
    let msg: HostMessage;
    try {
      msg = parseHostMessage(raw);
    } catch (err) {
      this.log(`engine (replica ${this.replica}) sent a bad message: ${(err as Error).message}`, 'error');
      return;
    }
    if (inc !== this.current || inc.ended || msg.epoch !== inc.epoch) {
      this.router.countStale(msg.kind === 'events' ? msg.events.length : 1);
      return;
    }
    switch (msg.kind) {
      case 'ready':
        if (this.state === 'closed') break; // close() during the load: end() settles start()
        inc.phase = 'ready';
        this.crashLoop.ready();
        this.modelInfo = msg.info;
        // Embedding and rerank engines are background work (priority.ts); once loaded, every engine
        // thread exists (the CPU thread pool is made with the context).
        if (msg.info.embedding && inc.child.pid !== undefined) lowerPriority(inc.child.pid, BACKGROUND_NICE);
        this.setState('ready');
        this.log(`engine ready (replica ${this.replica}, epoch ${inc.epoch}): ${modelSummary(msg.info)}`, 'info');
        inc.settleStart.resolve(msg.info);
        break;
      case 'loadError':
        this.end(inc, msg.error);
        break;
      case 'events':
        this.router.deliver(inc.epoch, msg.events, msg.handedAtMs);
        if (msg.events.some((e) => e.type === 'done' && (e.finish === 'stop' || e.finish === 'length'))) this.crashLoop.served();
        break;
      case 'submitError':
        if (!this.router.end(msg.id, { finish: 'error', error: msg.error })) this.router.countStale();
        break;
      case 'result':
      case 'callError': {
        const pending = inc.calls.get(msg.call);
        if (!pending) { this.router.countStale(); break; }
        inc.calls.delete(msg.call);
        if (msg.kind === 'result') pending.resolve(msg.value);
        else pending.reject(new EngineCallError(pending.kind, msg.error, msg.code));
        break;
      }
      case 'fatal':
        inc.fatal = msg.error;
        this.log(`engine fatal (replica ${this.replica}, epoch ${inc.epoch}): ${msg.error}`, 'error');
        break;
    }
    this.watchSilence(true);
  }

  /** Ends an incarnation once (load error, exit, spawn failure): everything it owned ends with `reason`. */
  private end(inc: Incarnation, reason: string): void {
    if (inc.ended) return;
    inc.ended = true;
    for (const t of inc.timers) clearTimeout(t);
    inc.timers.clear();
    if (!inc.exit && inc.child.pid !== undefined) inc.child.kill('SIGKILL');
    inc.markGone();
    const closed = this.state === 'closed';
    const wasReady = inc.phase === 'ready';
    const callError = closed ? `engine (replica ${this.replica}) is closed` : reason;
    for (const [, call] of inc.calls) call.reject(new EngineCallError(call.kind, callError, 'engine_unavailable'));
    inc.calls.clear();
    inc.settleStart.reject(new Error(closed ? `engine (replica ${this.replica}) was closed before it was ready` : reason));
    if (closed) {
      this.router.endAll({ finish: 'cancel', error: `engine (replica ${this.replica}) closed` }, inc.epoch);
      this.clearSilence();
      return;
    }
    const failed = this.router.endAll({ finish: 'error', engineDied: true, error: reason }, inc.epoch);
    if (this.current !== inc) return;
    this.clearSilence();
    this.lastError = reason;
    // A first start that fails rejects start() with the reason, and its caller reports it: said once.
    if (wasReady || inc.auto) this.log(`${reason}${failed ? `; ${failed} requests failed` : ''}`, 'error');
    // A first start that fails is not restarted (start() rejects and its caller decides).
    const restarts = wasReady || inc.auto;
    const after = restarts ? this.crashLoop.died() : { deathsInRow: this.crashLoop.peek(), restartInMs: null };
    const gaveUp = restarts && after.restartInMs === null;
    this.lastDeath = this.deathOf(inc, reason, after.deathsInRow, gaveUp);
    this.setState('dead');
    if (gaveUp) {
      // A model that loads and then kills its engine on every request would loop forever.
      this.lastError = `stopped restarting after ${after.deathsInRow} engine deaths in a row; last: ${reason}`;
      this.log(`engine (replica ${this.replica}) ${this.lastError}`, 'error');
      this.setState('failed');
      return;
    }
    if (after.restartInMs !== null) this.scheduleRestart(after.restartInMs);
  }

  /** What the death of `inc` was, as data (contract/health.ts sends it). */
  private deathOf(inc: Incarnation, reason: string, deathsInRow: number, gaveUp: boolean): EngineDeath {
    // Not exited yet (a load error, a spawn failure): the reason is the engine's own words.
    const lastError = inc.killReason ?? inc.fatal ?? inc.lastErrorLog ?? (inc.exit ? null : reason);
    const placed = this.modelInfo?.placement.map((p) => p.device) ?? [];
    return {
      epoch: inc.epoch, pid: inc.child.pid ?? null, signal: inc.exit?.signal ?? null, exitCode: inc.exit?.code ?? null,
      lastError, deathsInRow, gaveUp, model: this.modelName,
      devices: placed.length > 0 ? placed : [...(this.opts.config.devices ?? [])], at: Date.now(),
    };
  }

  private scheduleRestart(delay: number): void {
    if (this.state === 'closed' || this.restartTimer) return;
    this.log(`engine (replica ${this.replica}) restarting in ${delay} ms`, 'warn');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.launch(true).catch(() => { /* end() logged it and scheduled the next try */ });
    }, delay);
  }

  private async shutdown(): Promise<void> {
    this.clearRestartTimer();
    const inc = this.current;
    this.setState('closed');
    if (inc && !inc.ended && (this.opts.platform ?? process.platform) === 'win32') {
      // The host leaves on 'close' in either phase (a load in progress is abandoned with its process).
      this.send(inc, { kind: 'close', epoch: inc.epoch });
      if (!(await this.goneWithin(inc, CLOSE_GRACE_MS))) inc.child.kill('SIGKILL');
      await inc.gone;
    } else if (inc && !inc.ended) {
      if (inc.phase === 'ready') this.send(inc, { kind: 'close', epoch: inc.epoch });
      else inc.child.kill('SIGTERM');
      if (!(await this.goneWithin(inc, CLOSE_GRACE_MS))) {
        inc.child.kill('SIGTERM');
        if (!(await this.goneWithin(inc, TERM_GRACE_MS))) inc.child.kill('SIGKILL');
      }
      await inc.gone;
    }
    this.router.endAll({ finish: 'cancel', error: `engine (replica ${this.replica}) closed` });
    this.clearSilence();
  }

  // --- calls, silence, helpers -------------------------------------------------------------

  /** Every call method's transport (callsOver): one command, settled by its reply or by the engine's end. */
  private call<K extends CallName>(kind: K, args: CallArgs<K>): Promise<CallResult<K>> {
    const inc = this.current;
    if (this.state !== 'ready' || !inc) return Promise.reject(new EngineCallError(kind, this.unavailable(), 'engine_unavailable'));
    const call = this.nextCall++;
    return new Promise<CallResult<K>>((resolve, reject) => {
      inc.calls.set(call, { kind, resolve: resolve as (v: unknown) => void, reject });
      const cmd: CallCommandOf<K> = { kind, epoch: inc.epoch, call, args };
      const error = this.send(inc, cmd as CallCommand);
      if (error) {
        inc.calls.delete(call);
        reject(new EngineCallError(kind, error, 'engine_unavailable'));
      }
      this.watchSilence(false);
    });
  }

  /** Returns why the command could not be sent (the process is gone, or it cannot be serialized), or null. */
  private send(inc: Incarnation, cmd: Command): string | null {
    if (inc.ended || !inc.child.connected) return `engine (replica ${this.replica}) is not reachable`;
    try {
      inc.child.send(cmd);
      return null;
    } catch (err) {
      return `cannot send ${cmd.kind} to the engine: ${(err as Error).message}`;
    }
  }

  /** Arms the silence watchdog while the engine has work; `message`: something arrived, restart the clock. */
  private watchSilence(message: boolean): void {
    const inc = this.current;
    const busy = inc && !inc.ended && this.state === 'ready' && (this.router.size > 0 || inc.calls.size > 0);
    if (!busy) { this.clearSilence(); return; }
    if (!this.silenceTimer) {
      this.silenceTimer = setTimeout(() => {
        this.silenceTimer = null;
        const n = this.router.size + inc.calls.size;
        if (this.current === inc && !inc.ended && n > 0) {
          this.kill(inc, `engine sent nothing for ${this.silenceTimeoutMs} ms with ${this.router.size} requests and ${inc.calls.size} calls in flight`);
        }
      }, this.silenceTimeoutMs);
    } else if (message) {
      this.silenceTimer.refresh();
    }
  }

  private clearSilence(): void {
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceTimer = null;
  }

  private clearRestartTimer(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }

  /** Kills the process; its exit ends the incarnation with `reason` in the error. */
  // One process with no children of its own: SIGKILL here, TerminateProcess on Windows (Node's kill() there).
  private kill(inc: Incarnation, reason: string): void {
    inc.killReason = reason;
    this.log(`engine (replica ${this.replica}, epoch ${inc.epoch}): ${reason}; killing it`, 'error');
    inc.child.kill('SIGKILL');
  }

  private timer(inc: Incarnation, ms: number, fn: () => void): void {
    const t = setTimeout(() => { inc.timers.delete(t); fn(); }, ms);
    inc.timers.add(t);
  }

  private goneWithin(inc: Incarnation, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), ms);
      void inc.gone.then(() => { clearTimeout(t); resolve(true); });
    });
  }

  private deathReason(inc: Incarnation): string {
    const how = describeExit(inc.exit?.code ?? null, inc.exit?.signal ?? null);
    const why = inc.killReason ?? inc.fatal ?? (inc.lastErrorLog ? `last error log: ${inc.lastErrorLog}` : null);
    return `engine process exited (${how})${why ? `: ${why}` : ''} (replica ${this.replica}, epoch ${inc.epoch}, pid ${inc.child.pid ?? '?'})`;
  }

  private unavailable(): string {
    const who = `engine (replica ${this.replica})`;
    if (this.state === 'closed') return `${who} is closed`;
    if (this.state === 'failed') return `${who} ${this.lastError ?? 'failed'}`;
    if (this.state === 'starting' && this.epoch <= 1) return `${who} is starting`;
    if (this.state === 'starting' || this.restartTimer) return `${who} is restarting; last error: ${this.lastError ?? 'none'}`;
    return this.lastError ? `${who} is down: ${this.lastError}` : `${who} is not started`;
  }

  private setState(state: EngineState): void {
    this.state = state;
    const s = this.status();
    for (const listener of [...this.listeners]) {
      try {
        listener(s);
      } catch (err) {
        this.log(`engine status listener failed: ${(err as Error).message}`, 'error');
      }
    }
  }

  /** Child output -> opts.log, line by line; flowing mode, so the child never waits on us. */
  private pipeLogs(inc: Incarnation, stream: NodeJS.ReadableStream | null, level: 'info' | null): void {
    if (!stream) return;
    stream.setEncoding('utf8');
    let carry = '';
    const emit = (line: string): void => {
      if (!line) return;
      const lineLevel = level ?? levelOf(line);
      if (lineLevel === 'error') inc.lastErrorLog = line.length > 300 ? `${line.slice(0, 300)}…` : line;
      this.log(`[engine ${this.replica}.${inc.epoch}] ${line}`, lineLevel);
    };
    stream.on('data', (chunk: string) => {
      const lines = (carry + chunk).split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) emit(line.trimEnd());
    });
    stream.on('end', () => { emit(carry.trimEnd()); carry = ''; });
  }
}

function levelOf(line: string): 'info' | 'warn' | 'error' {
  if (/\b(error|fatal|abort|failed|assert)/i.test(line)) return 'error';
  if (/\bwarn/i.test(line)) return 'warn';
  return 'info';
}

export function createProcessEngineClient(opts: ProcessEngineClientOptions): EngineClient {
  return new ProcessEngineClient(opts);
}

/** Test hook: feeds `frame` to the client's frame handler as if its current engine process sent it. */
export function injectFrameForTest(client: EngineClient, frame: unknown): void {
  if (!(client instanceof ProcessEngineClient)) throw new TypeError('not a process engine client');
  client.injectFrame(frame);
}
