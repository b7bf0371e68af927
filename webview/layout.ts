// Geometry for the Trace and Bench charts (pure: numbers in, bars out; DOM code draws them).
import type { RequestTraceView, StepTraceView } from '../extension/api/types.js';
import type { BenchRun } from './protocol.js';

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

/** Bench runs as one chart per figure name, one bar per run (oldest first). */
export function benchCharts(runs: readonly BenchRun[]): Array<{ name: string; unit: string; better: 'higher' | 'lower' | null; bars: Array<{ runId: string; label: string; value: number }>; max: number }> {
  const byName = new Map<string, { unit: string; better: 'higher' | 'lower' | null; bars: Array<{ runId: string; label: string; value: number }> }>();
  for (const run of runs) {
    const label = new Date(run.time).toISOString().slice(5, 16).replace('T', ' ');
    for (const f of run.figures) {
      const g = byName.get(f.name) ?? { unit: f.unit, better: f.better ?? null, bars: [] };
      g.bars.push({ runId: run.id, label, value: f.value });
      byName.set(f.name, g);
    }
  }
  return [...byName].map(([name, g]) => ({ name, unit: g.unit, better: g.better, bars: g.bars, max: Math.max(...g.bars.map((b) => Math.abs(b.value)), 1e-9) }));
}
