// Pairs the figures of two servers measured in one comparison: ratio ours / theirs per figure,
// which direction is better, and the issues' targets (met or missed), as a markdown table, with
// each side's requests beside every figure: how many failed of those sent, and the tokens
// delivered. A ratio is not comparable when either side failed more than FAILURE_LIMIT of its
// requests in that scenario (a server that drops work looks faster than it is).
import { FAILURE_LIMIT, failureRate, tallyText } from '../../backend/bench/runner.js';
import type { MetricSummary } from '../../contract/bench.js';
import { fmt, markdownTable } from '../../backend/bench/table.js';
import type { RequestTally, ScenarioName } from '../../contract/bench.js';

export interface Target {
  /** The ratio ours / theirs must be at least (">=") or at most ("<=") this. */
  op: '>=' | '<=';
  ratio: number;
  text: string;
}

/** Targets from issues 5, 14 and 20 (ratios on the same run). */
export const targets: Record<string, Target> = {
  single_decode_tok_s: { op: '>=', ratio: 0.97, text: '>= 0.97' },
  single_ttft_ms: { op: '<=', ratio: 1.1, text: '<= 1.10' },
  c8_output_tok_s: { op: '>=', ratio: 1.0, text: '>= 1.00' },
  repeat_ttft_ms: { op: '<=', ratio: 0.8, text: '<= 0.80' },
  mixed_short_ttft_p95_ms: { op: '<=', ratio: 0.2, text: '<= 0.20' },
  infill_p50_ms: { op: '<=', ratio: 1.0, text: '<= 1.00' },
  typing_prompt_tokens: { op: '<=', ratio: 1.5, text: '<= 1.50' },
  typing_last_ms: { op: '<=', ratio: 0.5, text: '<= 0.50' },
  session_save_ms: { op: '<=', ratio: 1.5, text: '<= 1.50' },
  // Issue 20: the save without its durability (fdatasync, rename, folder fsync) and the restore at llama-server's speed.
  session_save_nosync_ms: { op: '<=', ratio: 1.0, text: '<= 1.00' },
  session_restore_ms: { op: '<=', ratio: 1.0, text: '<= 1.00' },
  conv_prompt_tokens: { op: '<=', ratio: 1.0, text: '<= 1.00' },
};

export type Tallies = ReadonlyMap<ScenarioName, RequestTally>;

export interface RatioRow {
  scenario: string;
  key: string;
  label: string;
  unit: string;
  better: MetricSummary['better'];
  ours: MetricSummary | null;
  theirs: MetricSummary | null;
  /** Median ours / median theirs; NaN when either is missing or theirs is 0. */
  ratio: number;
  /** False when either side failed more than FAILURE_LIMIT of the scenario's requests. */
  comparable: boolean;
  oursRequests: RequestTally | null;
  theirsRequests: RequestTally | null;
  target: Target | null;
  /** null when there is no target, no ratio, or the ratio is not comparable. */
  met: boolean | null;
}

const none: Tallies = new Map();

export function ratioRows(ours: readonly MetricSummary[], theirs: readonly MetricSummary[], tallies: { ours: Tallies; theirs: Tallies } = { ours: none, theirs: none }): RatioRow[] {
  const byKey = new Map(theirs.map((m) => [m.key, m]));
  const keys = [...ours.map((m) => m.key), ...theirs.map((m) => m.key).filter((k) => !ours.some((m) => m.key === k))];
  return keys.map((key) => {
    const a = ours.find((m) => m.key === key) ?? null;
    const b = byKey.get(key) ?? null;
    const any = (a ?? b)!;
    const ratio = a && b && b.median !== 0 ? a.median / b.median : Number.NaN;
    const oursRequests = tallies.ours.get(any.scenario) ?? null;
    const theirsRequests = tallies.theirs.get(any.scenario) ?? null;
    const comparable = failureRate(oursRequests ?? undefined) <= FAILURE_LIMIT && failureRate(theirsRequests ?? undefined) <= FAILURE_LIMIT;
    const target = targets[key] ?? null;
    const met = target && comparable && Number.isFinite(ratio) ? (target.op === '>=' ? ratio >= target.ratio : ratio <= target.ratio) : null;
    return {
      scenario: any.scenario, key, label: any.label, unit: any.unit, better: any.better, ours: a, theirs: b, ratio, comparable,
      oursRequests, theirsRequests, target, met,
    };
  });
}

function cell(m: MetricSummary | null): string {
  if (!m || m.n === 0) return '-';
  return m.n > 1 ? `${fmt(m.median)} (${fmt(m.min)}–${fmt(m.max)})` : fmt(m.median);
}

function direction(r: RatioRow): string {
  if (r.better === 'higher') return 'higher';
  if (r.better === 'lower') return 'lower';
  return '';
}

function ratioCell(r: RatioRow): string {
  if (!Number.isFinite(r.ratio)) return '-';
  return r.comparable ? r.ratio.toFixed(3) : `${r.ratio.toFixed(3)} n/c`;
}

/**
 * Markdown: figures that have a better direction; then the diagnostic ones, without verdicts.
 * Every row ends with each side's requests in that scenario ("failed/sent failed, N tok"); a
 * ratio marked "n/c" is not comparable (a side failed more than FAILURE_LIMIT).
 */
export function ratioMarkdown(rows: readonly RatioRow[], names: { ours: string; theirs: string }): string {
  const cols = [
    { title: 'scenario', align: 'left' as const }, { title: 'figure', align: 'left' as const }, { title: 'unit', align: 'left' as const },
    { title: `${names.ours} median (min–max)`, align: 'right' as const }, { title: `${names.theirs} median (min–max)`, align: 'right' as const },
    { title: 'ours / theirs', align: 'right' as const }, { title: 'better', align: 'left' as const },
    { title: 'target', align: 'left' as const }, { title: 'met', align: 'left' as const },
    { title: `${names.ours} requests`, align: 'left' as const }, { title: `${names.theirs} requests`, align: 'left' as const },
  ];
  const requests = (r: RatioRow) => [tallyText(r.oursRequests ?? undefined), tallyText(r.theirsRequests ?? undefined)];
  const line = (r: RatioRow) => [
    r.scenario, r.label, r.unit, cell(r.ours), cell(r.theirs), ratioCell(r),
    direction(r), r.target?.text ?? '', r.met === null ? (r.target && !r.comparable ? 'n/c' : '') : r.met ? 'yes' : 'NO', ...requests(r),
  ];
  const main = rows.filter((r) => r.better !== 'info').map(line);
  const info = rows.filter((r) => r.better === 'info').map((r) => [...line(r).slice(0, 6), ...requests(r)]);
  const parts = [markdownTable(cols, main)];
  if (info.length > 0) parts.push('', 'Diagnostics (no better direction):', '', markdownTable([...cols.slice(0, 6), ...cols.slice(9)], info));
  parts.push('', `Requests: failed/sent in the scenario's runs and the output tokens delivered; n/c: not comparable, a side failed more than ${(FAILURE_LIMIT * 100).toFixed(0)}% of them.`);
  return parts.join('\n');
}
