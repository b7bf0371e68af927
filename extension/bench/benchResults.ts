// Turns the JSON that `strata bench --json FILE` writes into figures for the Bench tab, and keeps
// earlier runs for comparison. Tolerant of the file's layout: an explicit `figures` list is used
// as is; otherwise every numeric leaf becomes a figure named by its path.
import type { BenchFigure, BenchRun } from '../../contract/panel.js';
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

/** `strata bench --json` (format strata-bench/1): one figure per summary row, its median. */
function strataBenchFigures(json: { summary?: unknown }): BenchFigure[] | null {
  if (!Array.isArray(json.summary)) return null;
  const out: BenchFigure[] = [];
  for (const row of json.summary as Array<Record<string, unknown>>) {
    if (!row || typeof row.median !== 'number' || !Number.isFinite(row.median)) continue;
    const label = typeof row.label === 'string' ? row.label : String(row.key ?? '?');
    const better = row.better === 'higher' || row.better === 'lower' ? row.better : undefined;
    const key = typeof row.key === 'string' ? row.key : undefined;
    out.push({ ...(key ? { key } : {}), name: `${String(row.scenario ?? '')}: ${label}`.replace(/^: /, ''), value: row.median, unit: typeof row.unit === 'string' ? row.unit : '', ...(better ? { better } : {}) });
  }
  return out.slice(0, MAX_FIGURES);
}

export function benchFigures(json: unknown): BenchFigure[] {
  const o = (json ?? {}) as { format?: unknown; summary?: unknown };
  if (typeof o.format === 'string' && o.format.startsWith('strata-bench/')) {
    const f = strataBenchFigures(o);
    if (f) return f;
  }
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
