import { describe, expect, it } from 'vitest';
import { scenarios } from '../../backend/bench/scenarios/index.js';
import { estimate, formatSeconds, SCENARIOS, scenarioSeconds, totalSteps } from '../../extension/bench/bench-plan.js';
import { BenchProgressTracker } from '../../extension/bench/bench-progress.js';
import { benchFigures } from '../../extension/bench/bench-results.js';
import type { BenchRun } from '../../contract/bench.js';

const typical = (name: string): number => SCENARIOS.find((s) => s.name === name)!.typicalS;

describe('benchmark plan', () => {
  it('lists the scenarios `strata bench` has, in its order, with what each measures', () => {
    expect(SCENARIOS.map((s) => [s.name, s.measures])).toEqual(Object.values(scenarios).map((s) => [s.name, s.summary]));
  });

  it('estimates from this server\'s earlier runs, else from the typical time', () => {
    const history: BenchRun[] = [
      { id: 'a', time: 1, url: 'http://me', model: null, figures: [], durationsMs: { single: [3000, 5000, 4000] } },
      { id: 'b', time: 2, url: 'http://other', model: null, figures: [], durationsMs: { single: [90_000] } },
    ];
    expect(scenarioSeconds('single', 'http://me', history)).toEqual({ seconds: 4, measured: true });
    expect(scenarioSeconds('prefill', 'http://me', history)).toEqual({ seconds: typical('prefill'), measured: false });
    expect(estimate({ scenarios: ['single'], runs: 3, baselineUrl: null }, 'http://me', history)).toEqual({ seconds: 12, measured: true });
    expect(estimate({ scenarios: ['single'], runs: 3, baselineUrl: 'http://x' }, 'http://me', history).seconds).toBe(24);
    expect(totalSteps({ scenarios: ['single', 'mixed'], runs: 3, baselineUrl: 'http://x' })).toBe(12);
    expect([formatSeconds(42.4), formatSeconds(150)]).toEqual(['42 s', '3 min']);
  });
});

describe('benchmark progress from the log of `strata bench`', () => {
  it('counts finished scenario runs and estimates what is left from the measured times', () => {
    const clock = { now: 0 };
    const t = new BenchProgressTracker({ scenarios: ['single', 'infill'], runs: 2, baselineUrl: null }, 'http://me', [], 0, () => clock.now);
    expect(t.view()).toEqual({ done: 0, total: 4, current: null, etaS: 2 * (typical('single') + typical('infill')), startedAt: 0 });
    expect(t.line('[bench]   tokenizer: exact')).toBeNull();
    expect(t.line('[bench] run 1/2: single')).toMatchObject({ done: 0, current: 'single, run 1 of 2' });
    clock.now = 10_000;
    expect(t.line('[bench] run 1/2: single done (10.0 s)')).toMatchObject({ done: 1, current: null });
    t.line('[bench] run 1/2: infill');
    expect(t.line('[bench] run 1/2: infill FAILED: HTTP 500 (2.0 s)')).toMatchObject({ done: 2 });
    // Left: single (10 s measured) + infill (2 s measured).
    expect(t.view().etaS).toBe(12);
    expect(t.durations()).toEqual({ single: [10_000], infill: [2000] });
  });
});

describe('bench figures', () => {
  it('keep the stable key of each summary row', () => {
    expect(benchFigures({ format: 'strata-bench/1', summary: [{ scenario: 'single', key: 'single_ttft_ms', label: 'TTFT', unit: 'ms', better: 'lower', median: 12.5 }] }))
      .toEqual([{ key: 'single_ttft_ms', name: 'single: TTFT', value: 12.5, unit: 'ms', better: 'lower' }]);
  });
});
