// What a benchmark run will do and how long it should take: the scenarios of `strata bench`
// (names and what each measures, from the contract, as the bench itself has them),
// and an estimate from earlier runs of the same scenarios against the same server, else from the
// typical time on the generated demo model. Pure.
import { SCENARIO_MEASURES, scenarioNames, type BenchRun, type ScenarioName } from '../../contract/bench.js';

export interface ScenarioInfo {
  name: string;
  measures: string;
  /** Seconds one run took on the generated demo model (2-core Xeon VM, 4 slots, 4096 context): the fallback estimate. */
  typicalS: number;
}

/** Typical seconds of one run of each scenario on the demo model (an estimate before any run here). */
const TYPICAL_S: Readonly<Record<ScenarioName, number>> = {
  single: 2, prefill: 3, concurrent: 9, repeat: 10, mixed: 7, side: 8, infill: 3, typing: 18, session: 2, conversations: 6, edit: 1, nextedit: 20,
};

export const SCENARIOS: readonly ScenarioInfo[] = scenarioNames.map((name) => ({ name, measures: SCENARIO_MEASURES[name], typicalS: TYPICAL_S[name] }));

export interface BenchPlan {
  scenarios: string[];
  runs: number;
  /** The server to compare with (run after ours with the same settings), or null. */
  baselineUrl: string | null;
}

/** Scenario runs in the whole benchmark (each server runs every scenario `runs` times). */
export function totalSteps(p: BenchPlan): number {
  return p.scenarios.length * p.runs * (p.baselineUrl ? 2 : 1);
}

/** Seconds one run of `scenario` takes: the median of earlier runs against `url`, else the typical time. */
export function scenarioSeconds(scenario: string, url: string, history: readonly BenchRun[]): { seconds: number; measured: boolean } {
  const seen = history.filter((r) => r.url === url).flatMap((r) => r.durationsMs?.[scenario] ?? []).sort((a, b) => a - b);
  if (seen.length) return { seconds: seen[Math.floor(seen.length / 2)]! / 1000, measured: true };
  return { seconds: SCENARIOS.find((s) => s.name === scenario)?.typicalS ?? 10, measured: false };
}

/** The whole run's estimate, and whether it comes from this server's own earlier runs. */
export function estimate(p: BenchPlan, url: string, history: readonly BenchRun[]): { seconds: number; measured: boolean } {
  let seconds = 0;
  let measured = true;
  for (const s of p.scenarios) {
    const e = scenarioSeconds(s, url, history);
    seconds += e.seconds * p.runs * (p.baselineUrl ? 2 : 1);
    measured &&= e.measured;
  }
  return { seconds, measured };
}

export function formatSeconds(s: number): string {
  if (s < 90) return `${Math.max(1, Math.round(s))} s`;
  return `${Math.round(s / 60)} min`;
}
