// What a saved session keeps so that the server restoring it knows its tokens by their text
// (chat/token-memory.ts): a chat session's tokens hold the model's own answers as it sampled them,
// which re-tokenizing the messages would not give back, so without this the first request after a
// restore would diverge at the first answer and read the conversation again. Stored in the file's
// description: the rendered conversation's text and, at the places where its tokens are known
// (the end of a remembered answer, the end of the conversation), how many tokens that text is and
// a hash of them, so a restore uses a cut only when the restored tokens are those very tokens.
import { createHash } from 'node:crypto';
import type { TokenMemory } from '../chat/token-memory.js';

export interface HeldText {
  text: string;
  /** The tokens start with a BOS the text does not hold (the vocabulary added it). */
  bos: boolean;
  cuts: Array<{ chars: number; tokens: number; hash: string }>;
}

function hashOf(tokens: readonly number[] | Int32Array, n: number): string {
  return createHash('sha256').update(new Uint8Array(Int32Array.from(tokens.slice(0, n)).buffer)).digest('hex').slice(0, 32);
}

/** The held text of a conversation rendered as `text` and tokenized as `tokens` (the first `known.tokens` of them remembered). */
export function heldTextOf(text: string, bos: boolean, tokens: readonly number[], known: { chars: number; tokens: number } | null): HeldText {
  const cuts = [...(known ? [known] : []), { chars: text.length, tokens: tokens.length }];
  return { text, bos, cuts: cuts.map((c) => ({ ...c, hash: hashOf(tokens, c.tokens) })) };
}

/** The held text in a session's description (its JSON), or null (none, or not one this version wrote). */
export function heldTextIn(description: string): HeldText | null {
  try {
    const h = (JSON.parse(description) as { held_text?: unknown }).held_text as Partial<HeldText> | undefined;
    if (!h || typeof h.text !== 'string' || typeof h.bos !== 'boolean' || !Array.isArray(h.cuts)) return null;
    const cuts = h.cuts.filter((c): c is HeldText['cuts'][number] => Number.isSafeInteger(c?.chars) && Number.isSafeInteger(c?.tokens) && typeof c?.hash === 'string'
      && c.chars > 0 && c.chars <= h.text!.length && c.tokens > 0);
    return { text: h.text, bos: h.bos, cuts };
  } catch {
    return null;
  }
}

/** Remembers the longest cut the restored `tokens` begin with exactly; false when none fits. */
export function rememberHeld(memory: TokenMemory, held: HeldText, tokens: readonly number[]): boolean {
  const fits = held.cuts.filter((c) => c.tokens <= tokens.length && hashOf(tokens, c.tokens) === c.hash).sort((a, b) => b.tokens - a.tokens);
  const cut = fits[0];
  if (!cut) return false;
  memory.remember(held.text.slice(0, cut.chars), tokens.slice(0, cut.tokens), held.bos);
  return true;
}
