// Turns the JSON that `strata bench --json FILE` writes into figures for the Bench tab (through the
// contract's check, contract/bench.ts), and keeps earlier runs for comparison. A file of another
// layout is read tolerantly: an explicit `figures` list as is, otherwise every numeric leaf becomes
// a figure named by its path.
import { benchReportFigures, parseBenchReport, type BenchFigure, type BenchRun } from '../../contract/bench.js';
import type { KeyValueStore } from '../models/recent.js';

const SKIP = /^(time|timestamp|date|version|seed|port|pid|started|finished)$/i;
const MAX_FIGURES = 48;

export function unitFor(key: string): string {
  const k = key.toLowerCase();
  if (/(tok_?s|tokens_per_s(ec(ond)?)?|tps|per_second)$/.test(k)) return 'tok/s';
  if (/_ms$|ms$/.test(k)) return 'ms';
  if (/_s$|seconds$/.test(k)) return 's';
  if (/bytes$/.test(k)) return 'B';
  if (/mib$/.test(k)) return 'MiB';
  if (/(ratio|x)$/.test(k)) return '×';
  return '';
}

export function benchFigures(json: unknown): BenchFigure[] {
  const o = (json ?? {}) as { format?: unknown };
  // Our own report is read through the contract (a mismatch is an error that names the field).
  if (typeof o.format === 'string' && o.format.startsWith('strata-bench/')) return benchReportFigures(parseBenchReport(json), MAX_FIGURES);
  // Anything else (a file of another tool): numbers found in it, units guessed from their names.
  const explicit = (json as { figures?: unknown })?.figures;
  if (Array.isArray(explicit)) {
    return explicit
      .filter((f): f is { name: string; value: number; unit?: string } => !!f && typeof f.name === 'string' && typeof f.value === 'number' && Number.isFinite(f.value))
      .slice(0, MAX_FIGURES)
      .map((f) => ({ name: f.name, value: f.value, unit: typeof f.unit === 'string' ? f.unit : unitFor(f.name) }));
  }
  const out: BenchFigure[] = [];
  const walk = (v: unknown, path: string[]): void => {
    if (out.length >= MAX_FIGURES) return;
    if (typeof v === 'number' && Number.isFinite(v) && path.length) {
      const key = path[path.length - 1]!;
      if (!SKIP.test(key)) out.push({ name: path.join('.'), value: v, unit: unitFor(key) });
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => {
        const label = x && typeof x === 'object' && typeof (x as { name?: unknown }).name === 'string' ? (x as { name: string }).name : String(i);
        walk(x, [...path, label]);
      });
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    }
  };
  walk(json, []);
  return out;
}

export function benchRun(json: unknown, url: string, time: number, model: string | null): BenchRun {
  const m = (json as { model?: unknown } | null)?.model;
  return { id: `run-${time}`, time, url, model: typeof m === 'string' ? m : model, figures: benchFigures(json) };
}

const KEY = 'strata.benchRuns';

export class BenchStore {
  constructor(private readonly store: KeyValueStore, private readonly keep = 20) {}

  runs(): BenchRun[] {
    return this.store.get<BenchRun[]>(KEY) ?? [];
  }

  async add(run: BenchRun): Promise<void> {
    await this.store.update(KEY, [...this.runs(), run].slice(-this.keep));
  }

  async clear(): Promise<void> {
    await this.store.update(KEY, []);
  }
}
