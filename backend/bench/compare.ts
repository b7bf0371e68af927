// Pairs the figures of two servers measured in one comparison: ratio ours / theirs per figure,
// which direction is better, and the targets (met or missed), as a markdown table.
import type { MetricSummary } from './runner.js';
import { fmt, markdownTable } from './table.js';

export interface Target {
  /** The ratio ours / theirs must be at least (">=") or at most ("<=") this. */
  op: '>=' | '<=';
  ratio: number;
  text: string;
}

/** Targets from issue 5 (ratios on the same run). */
export const targets: Record<string, Target> = {
  single_decode_tok_s: { op: '>=', ratio: 0.97, text: '>= 0.97' },
  single_ttft_ms: { op: '<=', ratio: 1.1, text: '<= 1.10' },
  c8_output_tok_s: { op: '>=', ratio: 1.0, text: '>= 1.00' },
  repeat_ttft_ms: { op: '<=', ratio: 0.8, text: '<= 0.80' },
  mixed_short_ttft_p95_ms: { op: '<=', ratio: 0.2, text: '<= 0.20' },
  infill_p50_ms: { op: '<=', ratio: 1.0, text: '<= 1.00' },
};

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
  target: Target | null;
  /** null when there is no target or no ratio. */
  met: boolean | null;
}

export function ratioRows(ours: readonly MetricSummary[], theirs: readonly MetricSummary[]): RatioRow[] {
  const byKey = new Map(theirs.map((m) => [m.key, m]));
  const keys = [...ours.map((m) => m.key), ...theirs.map((m) => m.key).filter((k) => !ours.some((m) => m.key === k))];
  return keys.map((key) => {
    const a = ours.find((m) => m.key === key) ?? null;
    const b = byKey.get(key) ?? null;
    const any = (a ?? b)!;
    const ratio = a && b && b.median !== 0 ? a.median / b.median : Number.NaN;
    const target = targets[key] ?? null;
    const met = target && Number.isFinite(ratio) ? (target.op === '>=' ? ratio >= target.ratio : ratio <= target.ratio) : null;
    return { scenario: any.scenario, key, label: any.label, unit: any.unit, better: any.better, ours: a, theirs: b, ratio, target, met };
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

/** Markdown: figures that have a better direction; then the diagnostic ones, without verdicts. */
export function ratioMarkdown(rows: readonly RatioRow[], names: { ours: string; theirs: string }): string {
  const cols = [
    { title: 'scenario', align: 'left' as const }, { title: 'figure', align: 'left' as const }, { title: 'unit', align: 'left' as const },
    { title: `${names.ours} median (min–max)`, align: 'right' as const }, { title: `${names.theirs} median (min–max)`, align: 'right' as const },
    { title: 'ours / theirs', align: 'right' as const }, { title: 'better', align: 'left' as const },
    { title: 'target', align: 'left' as const }, { title: 'met', align: 'left' as const },
  ];
  const line = (r: RatioRow) => [
    r.scenario, r.label, r.unit, cell(r.ours), cell(r.theirs), Number.isFinite(r.ratio) ? r.ratio.toFixed(3) : '-',
    direction(r), r.target?.text ?? '', r.met === null ? '' : r.met ? 'yes' : 'NO',
  ];
  const main = rows.filter((r) => r.better !== 'info').map(line);
  const info = rows.filter((r) => r.better === 'info').map((r) => line(r).slice(0, 6));
  const parts = [markdownTable(cols, main)];
  if (info.length > 0) parts.push('', 'Diagnostics (no better direction):', '', markdownTable(cols.slice(0, 6), info));
  return parts.join('\n');
}
