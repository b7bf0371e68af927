// The crash-loop policy of one engine replica: how long to wait before restarting a dead engine,
// and when to stop. A loop (the engine dies again before it has done any work) backs off,
// doubling from minDelayMs up to maxDelayMs, and after maxCrashes deaths in a row the engine
// stays down. An engine that served requests, or stayed ready for healthyMs, was not looping:
// its death starts the count over, so a replica killed now and then (a soak with a SIGKILL every
// ~25 s) always comes back after the base delay. Pure: the clock is injected, and the process
// client (process-client.ts) tells it what happened.
//
// The extension's supervisor (extension/server/supervisor.ts) has its own policy for the server
// process; it says there why it is a second one.

export interface CrashLoopOptions {
  minDelayMs: number;
  maxDelayMs: number;
  /** A run ready this long is healthy even if it served nothing. */
  healthyMs: number;
  /** After this many deaths in a row the engine stays down. */
  maxCrashes: number;
}

export const DEFAULT_CRASH_LOOP: CrashLoopOptions = { minDelayMs: 500, maxDelayMs: 30_000, healthyMs: 10_000, maxCrashes: 5 };

/** What follows a death: a restart after delayMs, or none (the engine gave up). */
export interface AfterDeath {
  /** This death included. */
  deathsInRow: number;
  /** null: stay down (maxCrashes reached). */
  restartInMs: number | null;
}

export class CrashLoop {
  /** Deaths in a row before the current run. */
  private inRow = 0;
  private readyAt: number | null = null;
  private servedSinceReady = false;

  constructor(private readonly opts: CrashLoopOptions, private readonly now: () => number = Date.now) {}

  /** The current run loaded its model. */
  ready(): void {
    this.readyAt = this.now();
    this.servedSinceReady = false;
  }

  /** The current run finished a request (it works: its death is not part of a loop). */
  served(): void {
    if (this.readyAt !== null) this.servedSinceReady = true;
  }

  /** Whether the current run has proved itself (served, or ready healthyMs). */
  private healthy(): boolean {
    return this.readyAt !== null && (this.servedSinceReady || this.now() - this.readyAt >= this.opts.healthyMs);
  }

  /** The deaths in a row a death now would make, without counting it (a first start that fails is not restarted). */
  peek(): number {
    return this.healthy() ? 1 : this.inRow + 1;
  }

  /** The current run died: counts it and says what follows. */
  died(): AfterDeath {
    const deathsInRow = this.peek();
    this.readyAt = null;
    this.servedSinceReady = false;
    if (deathsInRow >= this.opts.maxCrashes) {
      this.inRow = deathsInRow;
      return { deathsInRow, restartInMs: null };
    }
    this.inRow = deathsInRow;
    const { minDelayMs, maxDelayMs } = this.opts;
    return { deathsInRow, restartInMs: Math.min(maxDelayMs, minDelayMs * 2 ** (deathsInRow - 1)) };
  }

  /** An explicit start (the user fixed the cause): a fresh count. */
  reset(): void {
    this.inRow = 0;
    this.readyAt = null;
    this.servedSinceReady = false;
  }
}
