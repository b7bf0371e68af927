// Helpers the scenarios share: per-run nonces, timed requests that count how they ended,
// context limits, metric rows.
import { BenchHttpError, infill, streamCompletion, type CompletionResult, type InfillRequest, type InfillResult } from '../client.js';
import { makeNonce, seededRandom, seedOf } from '../prompts.js';
import type { BenchContext } from '../types.js';
import type { Metric, RequestTally, ScenarioRun } from '../../../contract/bench.js';

/** Tokens kept free in a slot beyond prompt + output (BOS, template tokens, rounding of the sizer). */
export const CTX_MARGIN = 32;

/** A nonce for the start of a prompt: new for every run and request, equal for both servers of a compare. */
export function nonceFor(ctx: BenchContext, scenario: string, run: number, i = 0): string {
  return makeNonce(seededRandom(seedOf(`${ctx.salt}/${scenario}/${run}/${i}`)));
}

/** A completion and whether it completed; `failed` says why not (the figures then do not use it). */
export type Attempt = CompletionResult & { failed: string | null };

const MAX_FAILURES_KEPT = 3;

export function emptyTally(): RequestTally {
  return { sent: 0, completed: 0, failed: 0, deliveredTokens: 0, failures: [] };
}

/** Counts one request's end in the run's tally. */
export function tally(out: ScenarioRun, failed: string | null, deliveredTokens: number): void {
  const t = out.requests;
  t.sent++;
  t.deliveredTokens += deliveredTokens;
  if (failed === null) { t.completed++; return; }
  t.failed++;
  if (t.failures.length < MAX_FAILURES_KEPT) t.failures.push(failed.slice(0, 300));
}

function failedAttempt(sentAt: number, why: string): Attempt {
  return {
    sentAt, ttftMs: Number.NaN, totalMs: performance.now() - sentAt, lastTextMs: Number.NaN, textEvents: 0,
    completionTokens: 0, completionTokensSource: 'events', promptTokens: null, cachedTokens: null, timings: null,
    finishReason: null, text: '', keepAlives: 0, streamError: why, failed: why,
  };
}

/**
 * A streamed completion with the run's settings (timeout, ignore_eos where accepted, the banned
 * tokens). It never throws for the server's sake: an HTTP error, a stream cut by an error event
 * or a timeout is a failed attempt, counted in the run's tally.
 */
export async function complete(ctx: BenchContext, prompt: string, maxTokens: number, out: ScenarioRun, extra?: Record<string, unknown>, onFirstText?: () => void): Promise<Attempt> {
  const sentAt = performance.now();
  let a: Attempt;
  try {
    const r = await streamCompletion(ctx.target, {
      prompt, maxTokens, ignoreEos: ctx.info.ignoreEos, signal: AbortSignal.timeout(ctx.settings.requestTimeoutMs),
      banned: ctx.bannedTokens, ...(extra ? { extra } : {}), ...(onFirstText ? { onFirstText } : {}),
    });
    a = { ...r, failed: r.streamError };
  } catch (err) {
    a = failedAttempt(sentAt, (err as Error).message);
  }
  tally(out, a.failed, a.completionTokens);
  return a;
}

export type InfillAttempt = { r: InfillResult; failed: null } | { r: null; failed: string; status: number | null };

/** One FIM request counted in the tally; one the caller aborted (not a timeout) is neither completed nor failed. */
export async function completeInfill(ctx: BenchContext, path: string, req: Omit<InfillRequest, 'banned'>, out: ScenarioRun): Promise<InfillAttempt> {
  try {
    const r = await infill(ctx.target, path, { ...req, banned: ctx.bannedTokens });
    tally(out, null, r.tokens ?? 0);
    return { r, failed: null };
  } catch (err) {
    const reason = req.signal?.aborted ? (req.signal.reason as { name?: string } | undefined) : undefined;
    if (req.signal?.aborted && reason?.name !== 'TimeoutError' && !(err instanceof BenchHttpError)) return { r: null, failed: 'aborted', status: null };
    const status = err instanceof BenchHttpError ? err.status : null;
    tally(out, (err as Error).message, 0);
    return { r: null, failed: (err as Error).message, status };
  }
}

/** The attempts that completed. */
export function completed<T extends { failed: string | null }>(xs: readonly T[]): T[] {
  return xs.filter((x) => x.failed === null);
}

/** The largest prompt (<= wanted) that fits one slot with `gen` output tokens; null if none useful. */
export function capToContext(ctx: BenchContext, wanted: number, gen: number): number {
  const n = ctx.info.ctxPerSlot;
  if (n === null) return wanted;
  return Math.max(0, Math.min(wanted, n - gen - CTX_MARGIN));
}

export function emptyRun(): ScenarioRun {
  return { requests: emptyTally(), metrics: [], conditions: {}, samples: {}, notes: [] };
}

export function metric(key: string, label: string, unit: Metric['unit'], better: Metric['better'], value: number): Metric {
  return { key, label, unit, better, value };
}

/** Tokens per second, NaN when the interval is not positive. */
export function rate(tokens: number, ms: number): number {
  return ms > 0 ? tokens / (ms / 1000) : Number.NaN;
}

/** A note when the server produced fewer tokens than asked (EOS not ignored, or a stop). */
export function checkLength(r: CompletionResult, wanted: number, what: string): string | null {
  return r.completionTokens < wanted
    ? `${what}: ${r.completionTokens} of ${wanted} tokens produced (finish_reason ${r.finishReason ?? 'none'}); rates use the tokens produced`
    : null;
}

/** Resolves after `ms`: request arrival times in a scenario, not a wait for a result. */
export function at(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
