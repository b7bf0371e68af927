// Engine host: the child process that owns one native Engine (bundled to dist/engine-host.mjs,
// started by process-client.ts with an IPC channel). It loads the model on 'init', forwards each
// engine step's events as one message, runs calls, and exits when the parent goes away.
// stdout/stderr are logs only; the protocol runs over the IPC channel.
import type { Engine } from '../../native/lib/addon.js';
import { loadAddon } from '../addon/loader.js';
import { QueuedWriter } from '../log/queued-writer.js';
import type { EngineErrorCode } from '../../native/lib/addon.js';
import { ENGINE_ERROR_CODES } from './calls.js';
import { runCall } from './host-calls.js';
import { parseCommand, submitRequestProblem, type Command, type HostMessage } from './protocol.js';

// --- logging: queued and written asynchronously, so a slow reader never blocks the engine ---

const logWriter = new QueuedWriter({ fd: 2, maxQueuedLines: 1000, dropNote: (n) => `engine host: ${n} log lines dropped` });

function log(line: string): void {
  logWriter.writeLine(`${new Date().toISOString()} ${line}`);
}

/** At exit only: what is still queued, written at once. */
function drainLogSync(): void {
  logWriter.drainSync();
}

// --- state ---

function readEpoch(): number {
  const i = process.argv.indexOf('--epoch');
  const raw = i >= 0 ? process.argv[i + 1] : process.env.STRATA_ENGINE_EPOCH;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) {
    process.stderr.write(`engine host: missing or bad epoch ${JSON.stringify(raw)} (pass --epoch N)\n`);
    process.exit(2);
  }
  return n;
}

const epoch = readEpoch();
let engine: Engine | null = null;
let loading = false;
let exiting = false;
/** IPC writes are asynchronous: count them so that we exit only after the last one is out. */
let sending = 0;
let onSent: (() => void) | null = null;

function send(msg: HostMessage): void {
  if (!process.connected || !process.send) return;
  sending++;
  process.send(msg, undefined, {}, (err: Error | null) => {
    if (err) log(`engine host: send failed: ${err.message}`);
    if (--sending === 0) onSent?.();
  });
}

/** Exits once every message is written (bounded: a parent that stopped reading must not keep us). */
function exitAfterSends(code: number): void {
  const exit = (): void => { drainLogSync(); process.exit(code); };
  setTimeout(exit, 2000).unref();
  if (sending === 0 || !process.connected) exit();
  else onSent = exit;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The engine's code of a rejected call (native Error.code), 'failed' for anything else. */
function codeOf(err: unknown): EngineErrorCode {
  const code = (err as { code?: unknown } | null)?.code;
  return ENGINE_ERROR_CODES.includes(code as EngineErrorCode) ? code as EngineErrorCode : 'failed';
}

/** Stops the engine (bounded wait: a stuck engine thread must not keep us alive) and exits. */
function shutdown(code: number, why: string): void {
  if (exiting) return;
  exiting = true;
  log(`engine host (epoch ${epoch}) exiting: ${why}`);
  setTimeout(() => { drainLogSync(); process.exit(code); }, 5000).unref();
  const e = engine;
  engine = null;
  if (!e) { exitAfterSends(code); return; }
  e.close().then(
    () => exitAfterSends(code),
    (err: unknown) => { log(`engine host: close failed: ${message(err)}`); exitAfterSends(code); },
  );
}

// --- commands ---

async function init(config: Extract<Command, { kind: 'init' }>['config']): Promise<void> {
  if (engine || loading) { log('engine host: init ignored, the engine is already loaded'); return; }
  loading = true;
  try {
    const { Engine } = loadAddon();
    const loaded = await Engine.load({
      ...config,
      onEvents: (events, handedAtMs) => send({ kind: 'events', epoch, events, handedAtMs }),
      // The engine thread ended on an error of its own (its requests already failed with it):
      // say so and leave, so the server restarts the engine.
      onFatal: (reason) => {
        log(`engine host (epoch ${epoch}): the engine thread failed: ${reason}`);
        send({ kind: 'fatal', epoch, error: reason });
        engine = null;
        exiting = true;
        exitAfterSends(1);
      },
    });
    if (exiting) { void loaded.close(); return; }
    engine = loaded;
    send({ kind: 'ready', epoch, pid: process.pid, info: loaded.info });
  } catch (err) {
    // Say why, then leave: a failed load holds nothing worth keeping.
    send({ kind: 'loadError', epoch, error: message(err) });
    shutdown(1, 'model load failed');
  } finally {
    loading = false;
  }
}

function handle(cmd: Command): void {
  switch (cmd.kind) {
    case 'init':
      void init(cmd.config);
      return;
    case 'submit':
      try {
        if (!engine) throw new Error('engine is not loaded');
        const problem = submitRequestProblem(cmd.request as unknown as Record<string, unknown>);
        if (problem) throw new Error(problem);
        engine.submit({ ...cmd.request, id: cmd.id });
      } catch (err) {
        send({ kind: 'submitError', epoch, id: cmd.id, error: message(err) });
      }
      return;
    case 'embed':
      try {
        if (!engine) throw new Error('engine is not loaded');
        engine.embed({ ...cmd.request, id: cmd.id });
      } catch (err) {
        send({ kind: 'submitError', epoch, id: cmd.id, error: message(err) });
      }
      return;
    case 'cancel':
      engine?.cancel(cmd.id);
      return;
    case 'close':
      shutdown(0, 'close requested');
      return;
    default: {
      const e = engine;
      const done = e ? runCall(e, cmd) : Promise.reject(Object.assign(new Error('engine is not loaded'), { code: 'engine_closed' }));
      done.then(
        (value) => send({ kind: 'result', epoch, call: cmd.call, value }),
        (err: unknown) => send({ kind: 'callError', epoch, call: cmd.call, error: message(err), code: codeOf(err) }),
      );
    }
  }
}

process.on('message', (raw: unknown) => {
  let cmd: Command;
  try {
    cmd = parseCommand(raw);
  } catch (err) {
    log(`engine host: bad command dropped: ${message(err)}`);
    return;
  }
  if (cmd.epoch !== epoch) {
    log(`engine host (epoch ${epoch}): dropped ${cmd.kind} for epoch ${cmd.epoch}`);
    return;
  }
  if (!exiting) handle(cmd);
});

// The parent is gone (closed the channel or died): never linger as an orphan.
process.on('disconnect', () => shutdown(0, 'parent disconnected'));

// Ctrl+C in a terminal signals the whole foreground process group, this host included. The
// server shuts its engines down in order (in-flight requests end as 'shutdown'); dying here
// first would look like a crash, fail those requests with an engine error and schedule a restart.
process.on('SIGINT', () => log(`engine host (epoch ${epoch}): SIGINT ignored; the server stops this engine`));

function fatal(err: unknown): void {
  const text = err instanceof Error ? err.stack ?? err.message : String(err);
  log(`engine host fatal: ${text}`);
  send({ kind: 'fatal', epoch, error: message(err) });
  exitAfterSends(1);
}
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

if (!process.send) {
  log('engine host: no IPC channel (start it with child_process.fork)');
  process.exit(2);
}
log(`engine host started (epoch ${epoch}, pid ${process.pid}, node ${process.version})`);
