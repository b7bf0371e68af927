// The engine's crash-loop policy (backend/engine/crash-loop.ts) on an injected clock: a loop
// still backs off and gives up; an engine that served requests (or stayed ready healthyMs)
// restarts after the base delay every time. Regression: in a 1,000-request soak with a SIGKILL
// every ~25 s the delay doubled at each kill (1, 2, 4, 8 s) although hundreds of requests were
// served between kills.
import { describe, expect, it } from 'vitest';
import { CrashLoop } from '../../backend/engine/crash-loop.js';

function policy(over: Partial<ConstructorParameters<typeof CrashLoop>[0]> = {}) {
  const clock = { t: 0 };
  const p = new CrashLoop({ minDelayMs: 1000, maxDelayMs: 8000, healthyMs: 10_000, maxCrashes: 5, ...over }, () => clock.t);
  return { p, clock };
}

describe('crash-loop policy', () => {
  it('a loop (deaths soon after each load, nothing served) doubles the delay up to the cap, then gives up', () => {
    const { p, clock } = policy();
    const seen = [];
    for (let i = 0; i < 5; i++) {
      p.ready();
      clock.t += 2000;
      seen.push(p.died());
    }
    expect(seen).toEqual([
      { deathsInRow: 1, restartInMs: 1000 }, { deathsInRow: 2, restartInMs: 2000 }, { deathsInRow: 3, restartInMs: 4000 },
      { deathsInRow: 4, restartInMs: 8000 }, { deathsInRow: 5, restartInMs: null },
    ]);
  });

  it('loads that fail (never ready) count as a loop too', () => {
    const { p } = policy({ maxCrashes: 3 });
    expect([p.died(), p.died(), p.died()].map((a) => a.restartInMs)).toEqual([1000, 2000, null]);
  });

  it('deaths after serving restart at the base delay every time (the SIGKILL soak)', () => {
    const { p, clock } = policy();
    const delays = [];
    for (let kill = 0; kill < 8; kill++) {
      p.ready();
      clock.t += 3000; // well under healthyMs: only serving proves it works
      p.served();
      delays.push(p.died());
    }
    expect(delays.every((a) => a.deathsInRow === 1 && a.restartInMs === 1000)).toBe(true);
  });

  it('a run that stayed ready healthyMs without requests also starts the count over', () => {
    const { p, clock } = policy();
    p.ready(); clock.t += 100; p.died();
    p.ready(); clock.t += 100; expect(p.died()).toEqual({ deathsInRow: 2, restartInMs: 2000 });
    p.ready(); clock.t += 10_000; expect(p.died()).toEqual({ deathsInRow: 1, restartInMs: 1000 });
  });

  it('serving before the run was ready (a stale event) proves nothing; a served run then a loop backs off again', () => {
    const { p, clock } = policy();
    p.served();
    expect(p.died().deathsInRow).toBe(1);
    expect(p.died().deathsInRow).toBe(2);
    p.ready(); p.served(); clock.t += 10;
    expect(p.died()).toEqual({ deathsInRow: 1, restartInMs: 1000 });
    p.ready(); clock.t += 10;
    expect(p.died()).toEqual({ deathsInRow: 2, restartInMs: 2000 });
  });

  it('peek says what a death would count without counting it; reset starts over after giving up', () => {
    const { p } = policy({ maxCrashes: 2 });
    expect(p.peek()).toBe(1);
    expect(p.peek()).toBe(1);
    p.died();
    expect(p.died()).toEqual({ deathsInRow: 2, restartInMs: null });
    p.reset();
    expect(p.died()).toEqual({ deathsInRow: 1, restartInMs: 1000 });
  });
});
