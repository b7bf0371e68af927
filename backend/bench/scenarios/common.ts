// Helpers the scenarios share: per-run nonces, timed requests, context limits, metric rows.
import { streamCompletion, type CompletionResult } from '../client.js';
import { makeNonce, seededRandom, seedOf } from '../prompts.js';
import type { BenchContext, Metric, ScenarioRun } from '../types.js';

/** Tokens kept free in a slot beyond prompt + output (BOS, template tokens, rounding of the sizer). */
export const CTX_MARGIN = 32;

/** A nonce for the start of a prompt: new for every run and request, equal for both servers of a compare. */
export function nonceFor(ctx: BenchContext, scenario: string, run: number, i = 0): string {
  return makeNonce(seededRandom(seedOf(`${ctx.salt}/${scenario}/${run}/${i}`)));
}

/**
 * A streamed completion with the run's settings (timeout, ignore_eos where accepted). A stream
 * that ended in a server error after its first token still counts; `notes` gets a line.
 */
export async function complete(ctx: BenchContext, prompt: string, maxTokens: number, notes: string[]): Promise<CompletionResult> {
  const r = await streamCompletion(ctx.target, {
    prompt, maxTokens, ignoreEos: ctx.info.ignoreEos, signal: AbortSignal.timeout(ctx.settings.requestTimeoutMs),
  });
  if (r.streamError) notes.push(`a stream ended in an error after ${r.textEvents} text events (timings kept, tokens counted from events): ${r.streamError}`);
  return r;
}

/** The largest prompt (<= wanted) that fits one slot with `gen` output tokens; null if none useful. */
export function capToContext(ctx: BenchContext, wanted: number, gen: number): number {
  const n = ctx.info.ctxPerSlot;
  if (n === null) return wanted;
  return Math.max(0, Math.min(wanted, n - gen - CTX_MARGIN));
}

export function emptyRun(): ScenarioRun {
  return { metrics: [], conditions: {}, samples: {}, notes: [] };
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
