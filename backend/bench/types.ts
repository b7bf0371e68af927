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
  typingKeystrokes: 120,
  typingIntervalMs: 150,
  typingFileLines: 433,
  typingPrefixLines: 256,
  typingSuffixLines: 64,
  sessionTokens: 1239,
  sessionRounds: 5,
  convUsers: 12,
  convTurns: 6,
  convInFlight: 3,
  convSystemTokens: 160,
  convFileTokens: 640,
  convQuestionTokens: 32,
  convAnswerTokens: 24,
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
  /**
   * Token ids every request bans (logit_bias false): those not valid UTF-8 alone, so no server's
   * output parser refuses the text (utf8-tokens.ts); null = none banned.
   */
  bannedTokens: readonly number[] | null;
  progress: (message: string) => void;
}

export interface Scenario {
  name: ScenarioName;
  /** One line: what it measures. */
  summary: string;
  run(ctx: BenchContext, runIndex: number): Promise<ScenarioRun>;
}

export const scenarioNames = ['single', 'prefill', 'concurrent', 'repeat', 'mixed', 'infill', 'typing', 'session', 'conversations', 'edit'] as const;
export type ScenarioName = (typeof scenarioNames)[number];
