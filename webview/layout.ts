// Geometry for the Trace and Bench charts (pure: numbers in, bars out; DOM code draws them).
import type { RequestTraceView, StepTraceView } from '../contract/traces.js';
import type { BenchFigure, BenchRun } from '../contract/bench.js';
import type { ModelMetric } from '../contract/metrics.js';

export interface Segment {
  label: string;
  kind: 'queue' | 'admit' | 'prompt' | 'first' | 'decode';
  /** ms after the server accepted the request */
  from: number;
  to: number;
}

/**
 * Per-request waterfall: server queue -> engine admission (with prefix reuse or restore) ->
 * prompt legs -> first token -> decode -> finish.
 */
export function waterfall(r: RequestTraceView): { segments: Segment[]; total: number } {
  const segs: Segment[] = [];
  const { dispatched, admitted, promptDone, firstToken, finished } = r;
  if (dispatched !== null) segs.push({ label: 'queued', kind: 'queue', from: 0, to: dispatched });
  if (admitted !== null) {
    const from = dispatched ?? 0;
    segs.push({ label: `admission${r.slot !== null ? ` (slot ${r.slot})` : ''}`, kind: 'admit', from, to: Math.max(from, admitted) });
    if (r.reused > 0 || r.restored) segs.push({ label: r.restored ? `restored ${r.reused} tok` : `reused ${r.reused} tok`, kind: 'admit', from: admitted, to: admitted });
  }
  r.promptLegs.forEach((leg, i) => {
    segs.push({ label: `prompt leg ${i + 1}: ${leg.tokens} tok`, kind: 'prompt', from: leg.t, to: leg.t + leg.ms });
  });
  if (!r.promptLegs.length && admitted !== null && promptDone !== null && promptDone > admitted) {
    segs.push({ label: 'prompt', kind: 'prompt', from: admitted, to: promptDone });
  }
  if (firstToken !== null) segs.push({ label: 'first token', kind: 'first', from: firstToken, to: firstToken });
  if (firstToken !== null && finished !== null) {
    segs.push({ label: `decode${r.generated !== null ? ` ${r.generated} tok` : ''}${r.finish ? ` → ${r.finish}` : ''}`, kind: 'decode', from: firstToken, to: finished });
  }
  const total = Math.max(finished ?? 0, ...segs.map((x) => x.to), 1);
  return { segments: segs, total };
}

export interface StepBar {
  step: number;
  totalMs: number;
  parts: Array<{ kind: 'build' | 'decode' | 'sample' | 'detok'; ms: number }>;
  decodeTokens: number;
  promptTokens: number;
  sequences: number;
}

/** The last `limit` steps as stacked bars (time split by phase; tokens by kind for the tooltip). */
export function stepBars(steps: readonly StepTraceView[], limit = 120): { bars: StepBar[]; maxMs: number; maxTokens: number } {
  const bars = steps.slice(-limit).map((s) => ({
    step: s.step,
    totalMs: s.buildMs + s.decodeMs + s.sampleMs + s.detokMs,
    parts: [
      { kind: 'build' as const, ms: s.buildMs }, { kind: 'decode' as const, ms: s.decodeMs },
      { kind: 'sample' as const, ms: s.sampleMs }, { kind: 'detok' as const, ms: s.detokMs },
    ],
    decodeTokens: s.decodeTokens, promptTokens: s.promptTokens, sequences: s.sequences,
  }));
  return {
    bars,
    maxMs: Math.max(0.001, ...bars.map((b) => b.totalMs)),
    maxTokens: Math.max(1, ...bars.map((b) => b.decodeTokens + b.promptTokens)),
  };
}

/** A figure's identity across runs and servers: its key when the benchmark gives one, else its name. */
export const figureId = (f: BenchFigure): string => f.key ?? f.name;

export interface BenchTableRow {
  id: string;
  name: string;
  unit: string;
  better: 'higher' | 'lower' | null;
  /** One value per column (newest run first); null where that run lacks the figure. */
  values: Array<number | null>;
  /** Newest vs the run before it, as a fraction (0.1 = 10 % more); null when either is missing. */
  change: number | null;
  /** Whether that change is an improvement (by the figure's better direction), null when unknown. */
  improved: boolean | null;
}

/** The bench history as a table: one row per figure, one column per run, newest first (up to `columns`). */
export function benchTable(runs: readonly BenchRun[], columns = 5): { runs: BenchRun[]; rows: BenchTableRow[] } {
  const cols = runs.slice(-columns).reverse();
  const rows = new Map<string, BenchTableRow>();
  cols.forEach((run, c) => {
    for (const f of run.figures) {
      const id = figureId(f);
      const row = rows.get(id) ?? { id, name: f.name, unit: f.unit, better: f.better ?? null, values: cols.map(() => null), change: null, improved: null };
      row.values[c] = f.value;
      rows.set(id, row);
    }
  });
  for (const row of rows.values()) {
    const [a, b] = row.values;
    if (a !== null && a !== undefined && b !== null && b !== undefined && b !== 0) {
      row.change = (a - b) / Math.abs(b);
      row.improved = row.better === null || row.change === 0 ? null : row.better === 'higher' ? row.change > 0 : row.change < 0;
    }
  }
  return { runs: cols, rows: [...rows.values()] };
}

export interface ComparisonRow {
  id: string;
  name: string;
  unit: string;
  ours: number;
  theirs: number;
  /** How many times better ours is (>1: ours better) by the figure's direction; null without one. */
  advantage: number | null;
}

/** Ours beside the comparison server's, for figures both have. */
export function comparison(run: BenchRun): ComparisonRow[] {
  if (!run.baseline) return [];
  const theirs = new Map(run.baseline.figures.map((f) => [figureId(f), f]));
  const out: ComparisonRow[] = [];
  for (const f of run.figures) {
    const t = theirs.get(figureId(f));
    if (!t) continue;
    const advantage = !f.better || f.value <= 0 || t.value <= 0 ? null : f.better === 'higher' ? f.value / t.value : t.value / f.value;
    out.push({ id: figureId(f), name: f.name, unit: f.unit, ours: f.value, theirs: t.value, advantage });
  }
  return out;
}

/** One figure across runs (oldest first): labels and values, null where a run lacks it. */
export function figureHistory(runs: readonly BenchRun[], id: string): { labels: string[]; values: Array<number | null> } {
  return {
    labels: runs.map((r) => new Date(r.time).toISOString().slice(5, 16).replace('T', ' ')),
    values: runs.map((r) => r.figures.find((f) => figureId(f) === id)?.value ?? null),
  };
}

/** The header's one-line model list when a server serves several: "coder loaded · chat loading". */
export function modelSummary(models: readonly ModelMetric[]): Array<{ name: string; state: ModelMetric['state']; title: string }> | null {
  if (models.length < 2) return null;
  return models.map((m) => ({
    name: m.name, state: m.state,
    title: `${m.name}${m.role ? ` (${m.role})` : ''}: ${m.state}${m.error ? ` (${m.error})` : ''}, ${m.inFlight} in flight, ${m.requests} requests`,
  }));
}
