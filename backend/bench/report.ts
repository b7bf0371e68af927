// The result of `strata bench` for one server: a JSON document with every figure and its
// conditions, and the table printed on stdout.
import type { MetricSummary, RunRecord } from './runner.js';
import { scenarios } from './scenarios/index.js';
import type { ServerInfo } from './server-info.js';
import { fmt, textTable } from './table.js';
import type { BenchSettings, ScenarioName } from './types.js';

export interface BenchReport {
  format: 'strata-bench/1';
  label: string | null;
  date: string;
  finishedAt: string;
  url: string;
  model: string;
  server: ServerInfo;
  prompts: { tokensPerWord: number; tokensPerLine: number; exactCounts: boolean };
  runs: number;
  scenarios: { name: ScenarioName; measures: string }[];
  settings: BenchSettings;
  /** Figures summarised over runs: median, min, max and every run's value. */
  summary: MetricSummary[];
  /** Every run: metrics, conditions (prompt sizes), samples, notes or the error. */
  records: RunRecord[];
  host: { node: string; platform: string; arch: string; cpus: number };
}

export interface ReportInput {
  label: string | null;
  startedAt: Date;
  url: string;
  info: ServerInfo;
  sizer: { tokensPerWord: number; tokensPerLine: number; exact: boolean };
  runs: number;
  names: ScenarioName[];
  settings: BenchSettings;
  summary: MetricSummary[];
  records: RunRecord[];
  cpus: number;
}

export function buildReport(i: ReportInput): BenchReport {
  return {
    format: 'strata-bench/1',
    label: i.label,
    date: i.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    url: i.url,
    model: i.info.model,
    server: i.info,
    prompts: { tokensPerWord: i.sizer.tokensPerWord, tokensPerLine: i.sizer.tokensPerLine, exactCounts: i.sizer.exact },
    runs: i.runs,
    scenarios: i.names.map((name) => ({ name, measures: scenarios[name].summary })),
    settings: i.settings,
    summary: i.summary,
    records: i.records,
    host: { node: process.version, platform: process.platform, arch: process.arch, cpus: i.cpus },
  };
}

const BETTER: Record<string, string> = { higher: 'higher', lower: 'lower', info: '' };

/** One row per figure: scenario, figure, median, min, max, unit, runs, which way is better. */
export function summaryTable(summary: readonly MetricSummary[]): string {
  const rows = summary.map((s) => [s.scenario, s.label, fmt(s.median), fmt(s.min), fmt(s.max), s.unit, String(s.n), BETTER[s.better] ?? '']);
  return textTable([
    { title: 'scenario', align: 'left' }, { title: 'figure', align: 'left' },
    { title: 'median', align: 'right' }, { title: 'min', align: 'right' }, { title: 'max', align: 'right' },
    { title: 'unit', align: 'left' }, { title: 'runs', align: 'right' }, { title: 'better', align: 'left' },
  ], rows);
}

/** Notes and errors of all runs, deduplicated, one per line. */
export function notesOf(records: readonly RunRecord[]): string[] {
  const out = new Set<string>();
  for (const r of records) {
    if (r.error) out.add(`${r.scenario} run ${r.run + 1}: FAILED: ${r.error}`);
    for (const n of r.result?.notes ?? []) out.add(`${r.scenario}: ${n}`);
  }
  return [...out];
}
