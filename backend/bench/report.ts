// The result of `strata bench` for one server: a JSON document with every figure and its
// conditions, and the table printed on stdout.
import { FAILURE_LIMIT, failureRate, tallies, tallyText } from './runner.js';
import type { MetricSummary, RunRecord } from '../../contract/bench.js';
import { scenarios } from './scenarios/index.js';
import type { ServerInfo } from '../../contract/bench.js';
import { fmt, textTable } from './table.js';
import type { BenchSettings, ScenarioName } from '../../contract/bench.js';
import type { BenchReport } from '../../contract/bench.js';

export interface ReportInput {
  label: string | null;
  startedAt: Date;
  url: string;
  info: ServerInfo;
  sizer: { tokensPerWord: number; tokensPerLine: number; exact: boolean };
  runs: number;
  names: ScenarioName[];
  settings: BenchSettings;
  bannedTokens: number;
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
    bannedTokens: i.bannedTokens,
    summary: i.summary,
    requests: Object.fromEntries(tallies(i.records)),
    records: i.records,
    host: { node: process.version, platform: process.platform, arch: process.arch, cpus: i.cpus },
  };
}

const BETTER: Record<string, string> = { higher: 'higher', lower: 'lower', info: '' };

/**
 * One row per figure: scenario, figure, median, min, max, unit, runs, which way is better, and
 * the scenario's requests (failed of sent, output tokens delivered); figures come from
 * completed requests only, and a scenario that failed more than FAILURE_LIMIT is flagged.
 */
export function summaryTable(summary: readonly MetricSummary[], records: readonly RunRecord[] = []): string {
  const t = tallies(records);
  const rows = summary.map((s) => {
    const r = t.get(s.scenario);
    const flag = failureRate(r) > FAILURE_LIMIT ? ' !' : '';
    return [s.scenario, s.label, fmt(s.median), fmt(s.min), fmt(s.max), s.unit, String(s.n), BETTER[s.better] ?? '', `${tallyText(r)}${flag}`];
  });
  return textTable([
    { title: 'scenario', align: 'left' }, { title: 'figure', align: 'left' },
    { title: 'median', align: 'right' }, { title: 'min', align: 'right' }, { title: 'max', align: 'right' },
    { title: 'unit', align: 'left' }, { title: 'runs', align: 'right' }, { title: 'better', align: 'left' },
    { title: 'requests', align: 'left' },
  ], rows);
}

/** Notes, errors and request failures of all runs, deduplicated, one per line. */
export function notesOf(records: readonly RunRecord[]): string[] {
  const out = new Set<string>();
  for (const r of records) {
    if (r.error) out.add(`${r.scenario} run ${r.run + 1}: FAILED: ${r.error}`);
    for (const n of r.result?.notes ?? []) out.add(`${r.scenario}: ${n}`);
  }
  for (const [scenario, t] of tallies(records)) {
    if (t.failed === 0) continue;
    out.add(`${scenario}: ${t.failed} of ${t.sent} requests failed${failureRate(t) > FAILURE_LIMIT ? ` (over ${(FAILURE_LIMIT * 100).toFixed(0)}%: not comparable)` : ''}, e.g. ${t.failures[0] ?? ''}`);
  }
  return [...out];
}
