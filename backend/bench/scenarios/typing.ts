// typing: a keystroke burst the way llama.vscode sends it. A file is open with the cursor in it
// (one warm-up request), then one /infill per keystroke every `typingIntervalMs`, each aborting
// the request still in flight, with a window of lines before and after the cursor
// (input_prefix = the lines before the cursor's line, prompt = that line up to the cursor,
// input_suffix = the rest), and the document as supersede_key (servers without it ignore it).
// Figures: prompt tokens the server computed during the burst (its own counter, aborted
// requests' work included), the latency of the last keystroke, and whether the completion
// shown for the final cursor position equals a cold request's (cache_prompt false).
import { scrapePromptComputed } from '../client.js';
import { codeLines, seedOf } from '../prompts.js';
import type { BenchContext, Scenario } from '../types.js';
import type { ScenarioRun } from '../../../contract/bench.js';
import { at, completeInfill, emptyRun, metric, type InfillAttempt } from './common.js';
import { findInfillPath } from './infill.js';
import { SCENARIO_MEASURES } from '../../../contract/bench.js';

/** The editor's view of the document after `typed` was typed at the cursor. */
export interface TypingWindow { prefix: string; prompt: string; suffix: string }

/**
 * The window llama.vscode sends after `typed` was typed on a new line before line `cursorLine`:
 * `prefixLines` lines before the cursor's line, that line up to the cursor (`prompt`), and the
 * rest of it (empty: the cursor is at its end) with `suffixLines` lines after it.
 */
export function typingWindow(lines: readonly string[], cursorLine: number, typed: string, prefixLines: number, suffixLines: number): TypingWindow {
  const typedLines = typed.split('\n');
  const before = [...lines.slice(0, cursorLine), ...typedLines.slice(0, -1)];
  const after = lines.slice(cursorLine, cursorLine + suffixLines);
  const prefix = before.slice(Math.max(0, before.length - prefixLines));
  return {
    prefix: prefix.length > 0 ? `${prefix.join('\n')}\n` : '',
    prompt: typedLines.at(-1)!,
    suffix: `\n${after.join('\n')}${after.length > 0 ? '\n' : ''}`,
  };
}

function request(ctx: BenchContext, w: TypingWindow, key: string, signal: AbortSignal, cold = false) {
  return {
    prefix: w.prefix, suffix: w.suffix, maxTokens: ctx.settings.infillGen, ignoreEos: ctx.info.ignoreEos, signal,
    extra: { prompt: w.prompt, supersede_key: key, ...(cold ? { cache_prompt: false } : {}) },
  };
}

export const typing: Scenario = {
  name: 'typing',
  summary: SCENARIO_MEASURES.typing,
  async run(ctx, runIndex) {
    const out: ScenarioRun = emptyRun();
    const s = ctx.settings;
    const file = codeLines(seedOf(`typing/${ctx.salt}/${runIndex}`), s.typingFileLines);
    const cursorLine = Math.max(0, Math.min(file.length - 1, file.length - s.typingSuffixLines - 16));
    const typed = codeLines(seedOf(`typing/typed/${runIndex}`), 1 + Math.ceil(s.typingKeystrokes / 20)).join('\n').slice(0, s.typingKeystrokes);
    const key = `file:///bench/typing-${runIndex}.ts`;
    const win = (n: number) => typingWindow(file, cursorLine, typed.slice(0, n), s.typingPrefixLines, s.typingSuffixLines);

    ctx.progress('typing: file opened (warm-up)');
    const w0 = win(0);
    const found = await findInfillPath(ctx, out, w0.prefix, w0.suffix, s.infillGen);
    if ('unsupported' in found) {
      out.notes.push(`skipped: ${found.unsupported}`);
      return out;
    }
    const before = await scrapePromptComputed(ctx.target);
    if (before === null) out.notes.push('the server reports no prompt-token counter (llama-server needs --metrics): prompt tokens not measured');

    ctx.progress(`typing: ${s.typingKeystrokes} keystrokes, ${s.typingIntervalMs} ms apart`);
    const t0 = performance.now();
    let inFlight: AbortController | null = null;
    const attempts: Promise<InfillAttempt>[] = [];
    for (let i = 1; i <= s.typingKeystrokes; i++) {
      await at(t0 + (i - 1) * s.typingIntervalMs - performance.now());
      inFlight?.abort(); // the editor's habit: a new keystroke aborts the request in flight
      inFlight = new AbortController();
      attempts.push(completeInfill(ctx, found.path, request(ctx, win(i), key, inFlight.signal), out));
    }
    const all = await Promise.all(attempts);
    const last = all.at(-1)!;
    const after = await scrapePromptComputed(ctx.target);
    const answered = all.filter((a) => a.failed === null).length;
    const aborted = all.filter((a) => a.failed === 'aborted').length;

    ctx.progress('typing: the final position, cold');
    const cold = await completeInfill(ctx, found.path, request(ctx, win(s.typingKeystrokes), `${key}#cold`, AbortSignal.timeout(s.requestTimeoutMs), true), out);
    const same = last.r !== null && cold.r !== null ? Number(last.r.content === cold.r.content) : Number.NaN;
    if (same === 0) out.notes.push('the completion at the final cursor position differs from a cold request\'s');

    if (before !== null && after !== null) {
      out.metrics.push(
        metric('typing_prompt_tokens', 'prompt tokens computed in the burst', 'tokens', 'lower', after - before),
        metric('typing_prompt_per_key', 'prompt tokens computed per keystroke', 'tokens', 'info', (after - before) / s.typingKeystrokes),
      );
    }
    out.metrics.push(
      metric('typing_last_ms', 'last keystroke latency', 'ms', 'lower', last.r?.latencyMs ?? Number.NaN),
      metric('typing_answered', 'keystrokes answered (not aborted)', 'count', 'info', answered),
      metric('typing_final_is_cold', 'final completion equals a cold request\'s (1 = yes)', 'count', 'info', same),
    );
    out.conditions = {
      path: found.path, fileLines: file.length, cursorLine, keystrokes: s.typingKeystrokes, intervalMs: s.typingIntervalMs,
      prefixLines: s.typingPrefixLines, suffixLines: s.typingSuffixLines, maxTokens: s.infillGen, aborted,
      promptCounterBefore: before, promptCounterAfter: after,
    };
    return out;
  },
};
