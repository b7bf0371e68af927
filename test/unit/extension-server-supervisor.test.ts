import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Health } from '../../extension/client/types.js';
import { Supervisor, type ProcessHandle, type SupervisorOptions, type SupervisorState } from '../../extension/server/supervisor.js';

class FakeProcess implements ProcessHandle {
  static nextPid = 100;
  readonly pid = FakeProcess.nextPid++;
  readonly signals: string[] = [];
  alive = true;
  private out: Array<(l: string) => void> = [];
  private exits: Array<(c: number | null, s: string | null) => void> = [];
  constructor(readonly port: number, private readonly exitOnTerm = true) {}
  kill(signal: 'SIGTERM' | 'SIGKILL'): void {
    this.signals.push(signal);
    if (signal === 'SIGKILL' || this.exitOnTerm) this.exit(null, signal);
  }
  onOutput(l: (line: string) => void): void { this.out.push(l); }
  onExit(l: (c: number | null, s: string | null) => void): void { this.exits.push(l); }
  say(line: string): void { for (const l of this.out) l(line); }
  exit(code: number | null, signal: string | null = null): void {
    if (!this.alive) return;
    this.alive = false;
    for (const l of this.exits) l(code, signal);
  }
}

/** A little world: processes, ports and what /health answers per port. */
function world(opts: Partial<SupervisorOptions> = {}, exitOnTerm = true) {
  const procs: FakeProcess[] = [];
  const health = new Map<number, Health['status'] | 'down'>();
  /** What a loading server says of its own load limit (null: nothing, like a server that does not report it). */
  const server = { loadTimeoutMs: null as number | null };
  let nextPort = 5000;
  const states: SupervisorState[] = [];
  const sup = new Supervisor({
    spawn: (port) => {
      const p = new FakeProcess(port, exitOnTerm);
      procs.push(p);
      health.set(port, 'down');
      return p;
    },
    pickPort: async () => nextPort++,
    probe: async (port) => {
      const h = health.get(port);
      if (!h || h === 'down') throw new Error('ECONNREFUSED');
      return { status: h, model: h === 'ok' ? 'tiny.gguf' : null, slots: 2, reason: h === 'failed' ? 'engine (replica 0) stopped restarting after 5 engine deaths in a row' : null,
        loadTimeoutMs: h === 'loading' ? server.loadTimeoutMs : null, engineDeath: null };
    },
    clock: { now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) },
  }, { healthIntervalMs: 100, backoffMs: [1000, 2000, 4000], maxFailures: 3, stableMs: 10_000, killGraceMs: 500, startTimeoutMs: 5000, ...opts });
  sup.onState((s) => states.push(s));
  return { sup, procs, health, server, states, kinds: () => states.map((s) => s.kind) };
}

describe('Supervisor', () => {
  beforeEach(() => { vi.useFakeTimers(); });
  afterEach(() => { vi.useRealTimers(); });

  it('starts on a picked port and becomes ready once /health says ok', async () => {
    const w = world();
    let ready = false;
    void w.sup.start().then(() => { ready = true; });
    await vi.advanceTimersByTimeAsync(0);
    expect(w.procs).toHaveLength(1);
    expect(w.sup.current).toMatchObject({ kind: 'starting', port: 5000 });
    w.health.set(5000, 'loading');
    await vi.advanceTimersByTimeAsync(300);
    expect(ready).toBe(false);
    w.health.set(5000, 'ok');
    await vi.advanceTimersByTimeAsync(100);
    expect(ready).toBe(true);
    expect(w.sup.current).toMatchObject({ kind: 'ready', port: 5000, model: 'tiny.gguf', slots: 2 });
  });

  it('gives up at once, without restarting, when /health says the engine crash-looped while loading', async () => {
    const w = world();
    const outcome = w.sup.start().then(() => 'ready', (e: Error) => e.message);
    await vi.advanceTimersByTimeAsync(0);
    w.health.set(5000, 'failed');
    await vi.advanceTimersByTimeAsync(100);
    expect(await outcome).toBe('the engine could not start: engine (replica 0) stopped restarting after 5 engine deaths in a row');
    expect(w.sup.current).toMatchObject({ kind: 'failed', failure: { kind: 'engineFailed', retry: false } });
    expect(w.procs[0]!.signals).toEqual(['SIGTERM']);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(w.procs).toHaveLength(1);
  });

  it('restarts a crashed server after the back-off delay, on a new port', async () => {
    const w = world();
    void w.sup.start();
    await vi.advanceTimersByTimeAsync(0);
    w.health.set(5000, 'ok');
    await vi.advanceTimersByTimeAsync(100);
    w.procs[0]!.say('GGML_ASSERT failed');
    w.procs[0]!.exit(null, 'SIGABRT');
    expect(w.sup.current).toMatchObject({ kind: 'restarting', retryInMs: 1000, failures: 1 });
    expect((w.sup.current as { last: { message: string } }).last.message).toContain('SIGABRT');
    await vi.advanceTimersByTimeAsync(999);
    expect(w.procs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.procs).toHaveLength(2);
    w.health.set(5001, 'ok');
    await vi.advanceTimersByTimeAsync(100);
    expect(w.sup.current).toMatchObject({ kind: 'ready', port: 5001 });
  });

  it('backs off longer on each failure and gives up with a clear message', async () => {
    const w = world();
    const started = w.sup.start();
    const outcome = started.then(() => 'ready', (e: Error) => e.message);
    for (const wait of [0, 1000, 2000]) {
      await vi.advanceTimersByTimeAsync(wait);
      w.procs.at(-1)!.exit(1);
    }
    expect(w.procs).toHaveLength(3);
    expect(w.sup.current.kind).toBe('failed');
    expect(await outcome).toMatch(/stopped 3 times in a row; last time the server exited with code 1/);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(w.procs).toHaveLength(3);
    expect(w.kinds().filter((k) => k === 'restarting')).toHaveLength(2);
  });

  it('a run that stayed up resets the failure count', async () => {
    const w = world();
    void w.sup.start();
    for (let i = 0; i < 4; i++) {
      await vi.advanceTimersByTimeAsync(0);
      w.health.set(w.procs.at(-1)!.port, 'ok');
      await vi.advanceTimersByTimeAsync(100);
      await vi.advanceTimersByTimeAsync(10_000);
      w.procs.at(-1)!.exit(1);
      expect(w.sup.current).toMatchObject({ kind: 'restarting', failures: 1, retryInMs: 1000 });
      await vi.advanceTimersByTimeAsync(1000);
    }
    expect(w.procs).toHaveLength(5);
  });

  it('does not retry when the model file is missing, and says what happened', async () => {
    const w = world();
    const outcome = w.sup.start().catch((e: Error) => e.message);
    await vi.advanceTimersByTimeAsync(0);
    w.procs[0]!.say("strata: cannot open model file '/m/x.gguf': ENOENT: no such file or directory");
    w.procs[0]!.exit(1);
    expect(w.sup.current).toMatchObject({ kind: 'failed', failure: { kind: 'modelMissing' } });
    expect(await outcome).toContain("cannot open model file '/m/x.gguf'");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(w.procs).toHaveLength(1);
  });

  it('port taken: a picked port is retried with another one, a fixed port fails', async () => {
    const auto = world();
    void auto.sup.start();
    await vi.advanceTimersByTimeAsync(0);
    auto.procs[0]!.say('Error: listen EADDRINUSE: address already in use 127.0.0.1:5000');
    auto.procs[0]!.exit(1);
    expect(auto.sup.current.kind).toBe('restarting');
    await vi.advanceTimersByTimeAsync(1000);
    expect(auto.procs[1]!.port).toBe(5001);

    const fixed = world({ port: 8080 });
    const outcome = fixed.sup.start().catch((e: Error) => e.message);
    await vi.advanceTimersByTimeAsync(0);
    fixed.procs[0]!.say('Error: listen EADDRINUSE: address already in use 127.0.0.1:8080');
    fixed.procs[0]!.exit(1);
    expect(await outcome).toBe('port 8080 is already in use');
  });

  it('stop sends SIGTERM, then SIGKILL after the grace time, and never restarts', async () => {
    const w = world({}, false);
    void w.sup.start();
    await vi.advanceTimersByTimeAsync(0);
    w.health.set(5000, 'ok');
    await vi.advanceTimersByTimeAsync(100);
    let stopped = false;
    void w.sup.stop().then(() => { stopped = true; });
    expect(w.procs[0]!.signals).toEqual(['SIGTERM']);
    await vi.advanceTimersByTimeAsync(499);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.procs[0]!.signals).toEqual(['SIGTERM', 'SIGKILL']);
    expect(stopped).toBe(true);
    expect(w.sup.current.kind).toBe('stopped');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(w.procs).toHaveLength(1);
  });

  it('a server that never gets healthy is stopped and reported', async () => {
    const w = world({ startTimeoutMs: 2000 });
    const outcome = w.sup.start().catch((e: Error) => e.message);
    await vi.advanceTimersByTimeAsync(0);
    w.health.set(5000, 'loading');
    await vi.advanceTimersByTimeAsync(2100);
    expect(await outcome).toBe('the server did not become healthy within 2 s');
    expect(w.procs[0]!.signals).toEqual(['SIGTERM']);
    expect(w.sup.current).toMatchObject({ kind: 'failed', failure: { kind: 'healthTimeout' } });
  });

  it('waits as long as the server lets a model load, then as long again as the margin, and no longer', async () => {
    const w = world({ startTimeoutMs: 2000, loadMarginMs: 1000 });
    w.server.loadTimeoutMs = 9000;
    const outcome = w.sup.start().catch((e: Error) => e.message);
    await vi.advanceTimersByTimeAsync(0);
    w.health.set(5000, 'loading');
    await vi.advanceTimersByTimeAsync(9500); // past the extension's own 2 s, within the server's 9 s + 1 s
    expect(w.sup.current.kind).toBe('starting');
    expect(w.procs[0]!.signals).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await outcome).toBe('the server did not become healthy within 10 s');
    expect(w.procs[0]!.signals).toEqual(['SIGTERM']);
    expect(w.sup.current).toMatchObject({ kind: 'failed', failure: { kind: 'healthTimeout' } });
  });

  it('a large model that loads within the server\'s limit becomes ready', async () => {
    const w = world({ startTimeoutMs: 2000, loadMarginMs: 1000 });
    w.server.loadTimeoutMs = 9000;
    let ready = false;
    void w.sup.start().then(() => { ready = true; });
    await vi.advanceTimersByTimeAsync(0);
    w.health.set(5000, 'loading');
    await vi.advanceTimersByTimeAsync(8000);
    w.health.set(5000, 'ok');
    await vi.advanceTimersByTimeAsync(200);
    expect(ready).toBe(true);
    expect(w.sup.current).toMatchObject({ kind: 'ready', port: 5000 });
  });

  it('stop during start cancels it and rejects the waiting start', async () => {
    const w = world();
    const outcome = w.sup.start().catch((e: Error) => e.message);
    await vi.advanceTimersByTimeAsync(0);
    await w.sup.stop();
    expect(await outcome).toBe('the Strata server was stopped');
    w.health.set(5000, 'ok');
    await vi.advanceTimersByTimeAsync(1000);
    expect(w.sup.current.kind).toBe('stopped');
  });
});
