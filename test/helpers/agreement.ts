// Teacher-forced top-1 agreement between two engines (two backends, or batched vs solo): feed
// one engine's greedy continuation to the other one token at a time and count the positions
// where the other's top-1 (its greedy next token) is the same token. Free-running greedy outputs
// part for good at the first near-tie; this counts how often the engines disagree at all.
import type { EngineDriver } from '../integration/engine-driver.js';

export interface Forced { prompt: number[]; continuation: number[] }

export interface Agreement {
  agree: number;
  total: number;
  /** [case, position] of each disagreement. */
  misses: Array<[number, number]>;
}

/**
 * For every case and position j, `eng`'s greedy token after prompt + continuation[0..j) against
 * continuation[j]. One request per position; each reuses the previous one's KV (prefix reuse), so
 * it reads one or two tokens.
 */
export async function teacherForced(eng: EngineDriver, cases: readonly Forced[]): Promise<Agreement> {
  const misses: Array<[number, number]> = [];
  let total = 0;
  for (const [k, c] of cases.entries()) {
    for (let j = 0; j < c.continuation.length; j++) {
      const r = await eng.run({ prompt: [...c.prompt, ...c.continuation.slice(0, j)], maxTokens: 1, ignoreEos: true });
      total++;
      if (r.ids[0] !== c.continuation[j]) misses.push([k, j]);
    }
  }
  return { agree: total - misses.length, total, misses };
}
