// `strata bench --json FILE` (format strata-bench/1): the report the bench CLI writes
// (backend/bench/report.ts builds it) and the extension reads after a run, its runtime check of
// what the panel reads (the summary rows), and the panel's Bench tab shapes (BenchRun with its
// figures, progress). A figure the panel shows is declared here once; renaming it breaks both sides.
import * as z from 'zod/mini';
import { checkBody } from './check.js';

// --- the report ----------------------------------------------------------------------------

export type Better = 'higher' | 'lower' | 'info';

/** One figure of one run of one scenario. */
export interface Metric {
  /** Stable key, e.g. "c8_ttft_p95_ms"; the same across servers so ratios can pair them. */
  key: string;
  label: string;
  unit: 'ms' | 'tok/s' | 'tokens' | 'ratio' | 'count';
  better: Better;
  value: number;
}

/**
 * The requests a run sent and how they ended. A request that failed (an HTTP error, a stream
 * cut by a server error, a timeout) counts here and in nothing else: figures are computed on
 * completed requests only, and a side that failed more than a few percent is not comparable.
 */
export interface RequestTally {
  sent: number;
  completed: number;
  failed: number;
  /** Output tokens that reached the client, failed requests' included. */
  deliveredTokens: number;
  /** The first few failures, in words. */
  failures: string[];
}

/** What one run of a scenario measured and under which conditions. */
export interface ScenarioRun {
  requests: RequestTally;
  metrics: Metric[];
  /** Sizes and counts as sent (targets and actual token counts). */
  conditions: Record<string, unknown>;
  /** Per-request samples behind the percentiles, by metric family. */
  samples: Record<string, number[]>;
  /** Skips, caps and anomalies, in words. */
  notes: string[];
}

export interface BenchSettings {
  /** Output tokens for `single` (fixed length; EOS ignored where the server allows). */
  singleGen: number;
  singlePrompt: number;
  prefillSizes: number[];
  concurrentClients: number[];
  concurrentPrompt: number;
  concurrentGen: number;
  repeatTokens: number;
  /** Prompt size of each conversation that fills the slots in `repeat`. */
  repeatFillerTokens: number;
  mixedLongTokens: number;
  mixedShorts: number;
  /** Delay of the first short request after the long one, then between shorts. */
  mixedFirstDelayMs: number;
  mixedGapMs: number;
  /** side: the main request's prompt (an agent's turn); its side request is short and decodes. */
  sideMainTokens: number;
  infillPrefixLines: number;
  infillSuffixLines: number;
  infillRequests: number;
  infillGen: number;
  /** typing: keystrokes of the burst, ms between them, file lines, window lines before / after the cursor. */
  typingKeystrokes: number;
  typingIntervalMs: number;
  typingFileLines: number;
  typingPrefixLines: number;
  typingSuffixLines: number;
  /** session: conversation size, save/restore rounds per run. */
  sessionTokens: number;
  sessionRounds: number;
  /** conversations: users, turns each, requests in flight, and the sizes of what they send. */
  convUsers: number;
  convTurns: number;
  convInFlight: number;
  convSystemTokens: number;
  convFileTokens: number;
  convQuestionTokens: number;
  convAnswerTokens: number;
  /** edit: lines of code in the file the answer rewrites. */
  editLines: number;
  /** Per request; a request over it fails the run. */
  requestTimeoutMs: number;
}

export const scenarioNames = ['single', 'prefill', 'concurrent', 'repeat', 'mixed', 'side', 'infill', 'typing', 'session', 'conversations', 'edit', 'nextedit'] as const;

export type ScenarioName = (typeof scenarioNames)[number];

/** What each scenario measures, in one line (strata bench --help, the report, the panel's plan picker). */
export const SCENARIO_MEASURES: Readonly<Record<ScenarioName, string>> = {
  single: 'one request alone: streamed TTFT, decode tok/s over a fixed output length',
  prefill: 'uncached prompt read tok/s at each size (prompt tokens / TTFT, one output token)',
  concurrent: 'N clients at once, short prompts: aggregate output tok/s, TTFT p50/p95',
  repeat: 'TTFT of a ~4K-token conversation continued after other conversations used every slot',
  mixed: 'short requests sent while a long prompt is read: short TTFT p50/p95',
  side: 'an agent\'s main request (long prompt) with its side request (decoding): main TTFT alone, sent together, sent while the side decodes',
  infill: 'FIM latency p50/p95, 256-line prefix / 64-line suffix, warm, one request per keystroke',
  typing: 'a keystroke burst (one /infill per keystroke, each aborting the last): prompt tokens computed, last-keystroke latency',
  session: 'a ~1.2K-token conversation saved to disk and restored over HTTP: save/restore ms, continuation TTFT after it',
  conversations: 'users x turns round robin, fewer slots than users: prompt tokens computed vs the minimum, TTFT per turn',
  edit: 'a file in the prompt rewritten by the answer: decode tok/s and speculative drafts accepted',
  nextedit: 'a 40-line region rewritten with 1, 3 and 10 lines changed: whole-answer ms with the region as prediction vs no drafts',
};

export interface ServerInfo {
  model: string;
  /** Parallel slots; null when neither the server nor the command line says. */
  slots: number | null;
  slotsSource: 'props' | 'health' | 'models' | 'metrics' | 'option' | 'unknown';
  /** Context per slot in tokens; null when unknown. */
  ctxPerSlot: number | null;
  ctxSource: 'props' | 'health' | 'models' | 'option' | 'unknown';
  ignoreEos: boolean;
  tokenizePath: string | null;
  /** /props as the server answered (large text fields trimmed), or null. */
  props: Record<string, unknown> | null;
  /** /health as answered (ours reports slots and context there), or null. */
  health: unknown;
  models: unknown;
}

export interface RunRecord {
  scenario: ScenarioName;
  run: number;
  startedAt: string;
  durationMs: number;
  /** 1-minute load average at the start and end: a busy machine shows here, not in the figures. */
  loadavg: [number, number];
  result: ScenarioRun | null;
  error: string | null;
}

export interface MetricSummary {
  scenario: ScenarioName;
  key: string;
  label: string;
  unit: Metric['unit'];
  better: Better;
  /** One value per run that produced the metric, in run order. */
  values: number[];
  n: number;
  median: number;
  min: number;
  max: number;
}

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
  /** Token ids every request banned (not valid UTF-8 alone), or none. */
  bannedTokens: number;
  /** Figures summarised over runs: median, min, max and every run's value. */
  summary: MetricSummary[];
  /** Per scenario: requests sent, completed, failed, output tokens delivered. */
  requests: Record<string, RequestTally>;
  /** Every run: metrics, conditions (prompt sizes), samples, notes or the error. */
  records: RunRecord[];
  host: { node: string; platform: string; arch: string; cpus: number };
}

// --- its runtime check: what the panel reads -------------------------------------------------

/** The part of a report the panel reads: its model and one figure per summary row. */
export interface BenchReportSummary {
  format: BenchReport['format'];
  model?: BenchReport['model'];
  summary: Array<Pick<MetricSummary, 'key' | 'label' | 'unit' | 'better'> & {
    /** A scenario name (of this or a later version: shown, not interpreted). */
    scenario: string;
    /** NaN in the report (null in its JSON) when no run produced the figure. */
    median: number | null;
  }>;
}

export const benchReportSummarySchema: z.ZodMiniType<BenchReportSummary> = z.object({
  format: z.literal('strata-bench/1'),
  model: z.optional(z.string()),
  summary: z.array(z.object({
    scenario: z.string(), key: z.string(), label: z.string(),
    unit: z.enum(['ms', 'tok/s', 'tokens', 'ratio', 'count']), better: z.enum(['higher', 'lower', 'info']),
    median: z.nullable(z.number()),
  })),
});

// --- the panel's Bench tab -------------------------------------------------------------------

export interface BenchFigure {
  /** Stable key across runs and servers (e.g. "single_ttft_ms"), when the benchmark gives one. */
  key?: string;
  name: string;
  value: number;
  unit: string;
  /** Which way is better, when the benchmark says. */
  better?: 'higher' | 'lower';
}

export interface BenchRun {
  id: string;
  time: number;
  url: string;
  model: string | null;
  figures: BenchFigure[];
  /** What ran: scenario names and runs of each (older runs lack them). */
  scenarios?: string[];
  runsPerScenario?: number;
  /** Wall time of each scenario run, ms, by scenario (for the next run's estimate). */
  durationsMs?: Record<string, number[]>;
  /** The same benchmark against another server in the same run (comparison), when there was one. */
  baseline?: { url: string; model: string | null; figures: BenchFigure[] } | null;
}

export interface BenchProgress {
  /** Scenario runs finished, of `total`. */
  done: number;
  total: number;
  /** What runs now, e.g. "single, run 2 of 3" (and which server when comparing). */
  current: string | null;
  /** Estimated seconds left, null when unknown. */
  etaS: number | null;
  startedAt: number;
}

export interface BenchView {
  runs: BenchRun[];
  running: boolean;
  progress: BenchProgress | null;
  error: string | null;
}

/** A report's figures as the Bench tab lists them: one per summary row that has a median. */
export function benchReportFigures(report: BenchReportSummary, max = 48): BenchFigure[] {
  const out: BenchFigure[] = [];
  for (const row of report.summary) {
    if (row.median === null || !Number.isFinite(row.median)) continue;
    const better = row.better === 'info' ? undefined : row.better;
    out.push({ key: row.key, name: `${row.scenario}: ${row.label}`.replace(/^: /, ''), value: row.median, unit: row.unit, ...(better ? { better } : {}) });
  }
  return out.slice(0, max);
}

/** A strata bench report (format strata-bench/1), checked against the contract. */
export function parseBenchReport(raw: unknown): BenchReportSummary {
  return checkBody(benchReportSummarySchema, raw, 'strata bench report');
}
