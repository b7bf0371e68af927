// Types shared by the scenarios, the runner and the reports.
import type { Target } from './client.js';
import type { PromptSizer } from './prompts.js';
import type { ServerInfo } from './server-info.js';

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

/** What one run of a scenario measured and under which conditions. */
export interface ScenarioRun {
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
  infillPrefixLines: number;
  infillSuffixLines: number;
  infillRequests: number;
  infillGen: number;
  /** edit: lines of code in the file the answer rewrites. */
  editLines: number;
  /** Per request; a request over it fails the run. */
  requestTimeoutMs: number;
}

export const defaultSettings: BenchSettings = {
  singleGen: 64,
  singlePrompt: 64,
  prefillSizes: [512, 2048, 8192],
  concurrentClients: [4, 8],
  concurrentPrompt: 48,
  concurrentGen: 32,
  repeatTokens: 4096,
  repeatFillerTokens: 512,
  mixedLongTokens: 8192,
  mixedShorts: 6,
  mixedFirstDelayMs: 250,
  mixedGapMs: 300,
  infillPrefixLines: 256,
  infillSuffixLines: 64,
  infillRequests: 6,
  infillGen: 16,
  editLines: 40,
  requestTimeoutMs: 600_000,
};

export interface BenchContext {
  target: Target;
  info: ServerInfo;
  sizer: PromptSizer;
  settings: BenchSettings;
  /** Keys prompts: the same salt and run index give the same texts (both servers of a compare). */
  salt: string;
  progress: (message: string) => void;
}

export interface Scenario {
  name: ScenarioName;
  /** One line: what it measures. */
  summary: string;
  run(ctx: BenchContext, runIndex: number): Promise<ScenarioRun>;
}

export const scenarioNames = ['single', 'prefill', 'concurrent', 'repeat', 'mixed', 'infill', 'edit'] as const;
export type ScenarioName = (typeof scenarioNames)[number];
