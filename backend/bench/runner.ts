// Runs scenarios against one server: discovery once, then each (scenario, run) on request, so
// a caller can interleave runs of two servers. Summaries: median and range over runs.
import { loadavg } from 'node:os';
import type { Target } from './client.js';
import type { PromptSizer } from './prompts.js';
import { scenarios } from './scenarios/index.js';
import { discover, eventToSseMetrics, makeSizer, scrapeEventToSse, waitReady } from './server-info.js';
import { spread } from './stats.js';
import type { BenchContext } from './types.js';
import type { BenchSettings, RequestTally, ScenarioName, ScenarioRun } from '../../contract/bench.js';
import type { MetricSummary, RunRecord } from '../../contract/bench.js';

export interface PrepareOptions {
  url: string;
  apiKey?: string;
  model?: string;
  slots?: number;
  ctx?: number;
  settings: BenchSettings;
  salt: string;
  progress: (message: string) => void;
  /** Size prompts with this sizer (a compare sizes both servers' prompts alike) instead of calibrating. */
  sizer?: PromptSizer;
  /** Token ids every request bans (see utf8-tokens.ts). */
  bannedTokens?: readonly number[] | null;
}

/** Checks the URL, learns the server (props, slots, context, tokenizer) and sizes prompts. */
export async function prepare(o: PrepareOptions): Promise<BenchContext> {
  const url = o.url.replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(url)) throw new Error(`--url must be an http(s) URL, got '${o.url}'`);
  const base: Omit<Target, 'model'> = o.apiKey ? { url, apiKey: o.apiKey } : { url };
  await waitReady(base, 300_000, o.progress);
  const { target, info } = await discover(base, {
    ...(o.model ? { model: o.model } : {}), ...(o.slots ? { slots: o.slots } : {}), ...(o.ctx ? { ctx: o.ctx } : {}),
  });
  const sizer = o.sizer ?? await makeSizer(target, info);
  return { target, info, sizer, settings: o.settings, salt: o.salt, progress: o.progress, bannedTokens: o.bannedTokens ?? null };
}

/** One run of one scenario; a failure is recorded, not thrown, so the other runs still happen. */
export async function runOnce(ctx: BenchContext, name: ScenarioName, run: number): Promise<RunRecord> {
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const load0 = loadavg()[0]!;
  const rec = (result: ScenarioRun | null, error: string | null): RunRecord => ({
    scenario: name, run, startedAt, durationMs: performance.now() - t0, loadavg: [load0, loadavg()[0]!], result, error,
  });
  try {
    // The server's own per-token overhead during this run, where it measures it (ours).
    const before = await scrapeEventToSse(ctx.target);
    const result = await scenarios[name].run(ctx, run);
    if (before) result.metrics.push(...eventToSseMetrics(name, before, await scrapeEventToSse(ctx.target)));
    return rec(result, null);
  } catch (err) {
    return rec(null, err instanceof Error ? err.message : String(err));
  }
}

/** Per metric key: its values over the runs, median, min, max; in scenario order. */
export function summarize(records: readonly RunRecord[]): MetricSummary[] {
  const byKey = new Map<string, MetricSummary>();
  for (const rec of records) {
    for (const m of rec.result?.metrics ?? []) {
      let s = byKey.get(m.key);
      if (!s) {
        s = { scenario: rec.scenario, key: m.key, label: m.label, unit: m.unit, better: m.better, values: [], n: 0, median: Number.NaN, min: Number.NaN, max: Number.NaN };
        byKey.set(m.key, s);
      }
      s.values.push(m.value);
    }
  }
  for (const s of byKey.values()) Object.assign(s, spread(s.values));
  // Scenario order, then first-seen order (a run that failed must not move its figures down).
  const order = Object.keys(scenarios);
  return [...byKey.values()].map((s, i) => ({ s, i }))
    .sort((a, b) => order.indexOf(a.s.scenario) - order.indexOf(b.s.scenario) || a.i - b.i)
    .map(({ s }) => s);
}

/** Failure rate above which a side's figures are not comparable with another server's. */
export const FAILURE_LIMIT = 0.03;

/** Per scenario: the requests of all its runs and how they ended. */
export function tallies(records: readonly RunRecord[]): Map<ScenarioName, RequestTally> {
  const out = new Map<ScenarioName, RequestTally>();
  for (const rec of records) {
    const r = rec.result?.requests;
    if (!r) continue;
    const t = out.get(rec.scenario) ?? { sent: 0, completed: 0, failed: 0, deliveredTokens: 0, failures: [] };
    t.sent += r.sent; t.completed += r.completed; t.failed += r.failed; t.deliveredTokens += r.deliveredTokens;
    for (const f of r.failures) if (t.failures.length < 3 && !t.failures.includes(f)) t.failures.push(f);
    out.set(rec.scenario, t);
  }
  return out;
}

/** failed / sent; 0 when nothing was sent. */
export function failureRate(t: RequestTally | undefined): number {
  return t && t.sent > 0 ? t.failed / t.sent : 0;
}

/** "sent / failed, delivered tokens" for a table cell. */
export function tallyText(t: RequestTally | undefined): string {
  if (!t || t.sent === 0) return '-';
  return `${t.failed}/${t.sent} failed, ${t.deliveredTokens} tok`;
}

/** Parses a --scenarios list; throws naming the unknown entry. */
export function parseScenarios(list: readonly string[] | undefined): ScenarioName[] {
  if (!list || list.length === 0) return Object.keys(scenarios) as ScenarioName[];
  const known = Object.keys(scenarios);
  for (const s of list) {
    if (!known.includes(s)) throw new Error(`unknown scenario '${s}' (known: ${known.join(', ')})`);
  }
  return [...new Set(list)] as ScenarioName[];
}
