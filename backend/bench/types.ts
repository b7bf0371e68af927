// Types shared by the scenarios, the runner and the reports.
import type { Target } from './client.js';
import type { PromptSizer } from './prompts.js';
import type { ServerInfo } from '../../contract/bench.js';
import type { BenchSettings, ScenarioName, ScenarioRun } from '../../contract/bench.js';

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
  sideMainTokens: 6144,
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
