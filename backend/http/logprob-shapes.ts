// Log-probabilities in OpenAI's shapes, from the engine's per-token records: chat's
// choices[].logprobs.content entries and the legacy completions' parallel arrays. Pure functions.
import type { TokenLogprob } from '../../native/lib/addon.js';

export interface ChatLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Array<Record<string, number>>;
  text_offset: number[];
}

const utf8 = new TextDecoder('utf-8');

/** A token's text as a string (a token that holds part of a character shows U+FFFD there). */
export function tokenText(bytes: readonly number[]): string {
  return utf8.decode(Uint8Array.from(bytes));
}

/** Chat entries; `top` is how many alternatives the request asked for (the engine may send as many). */
export function chatLogprobs(lps: readonly TokenLogprob[], top: number): ChatLogprob[] {
  return lps.map((lp) => ({
    token: tokenText(lp.bytes), logprob: lp.logprob, bytes: lp.bytes,
    top_logprobs: lp.top.slice(0, top).map((t) => ({ token: tokenText(t.bytes), logprob: t.logprob, bytes: t.bytes })),
  }));
}

/**
 * Completions' arrays; text_offset counts characters of the whole completion, starting at `offset`
 * (the characters of the tokens before these). Returns the offset after them too.
 */
export function completionLogprobs(lps: readonly TokenLogprob[], top: number, offset: number): { logprobs: CompletionLogprobs; offset: number } {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let at = offset;
  for (const lp of lps) {
    const text = tokenText(lp.bytes);
    out.tokens.push(text);
    out.token_logprobs.push(lp.logprob);
    const alts: Record<string, number> = {};
    for (const t of lp.top.slice(0, top)) {
      const k = tokenText(t.bytes);
      if (!(k in alts)) alts[k] = t.logprob;
    }
    out.top_logprobs.push(alts);
    out.text_offset.push(at);
    at += text.length;
  }
  return { logprobs: out, offset: at };
}

/** Several completions' arrays as one (a non-streamed answer joins every step's). */
export function joinCompletionLogprobs(parts: readonly CompletionLogprobs[]): CompletionLogprobs {
  return {
    tokens: parts.flatMap((p) => p.tokens),
    token_logprobs: parts.flatMap((p) => p.token_logprobs),
    top_logprobs: parts.flatMap((p) => p.top_logprobs),
    text_offset: parts.flatMap((p) => p.text_offset),
  };
}
