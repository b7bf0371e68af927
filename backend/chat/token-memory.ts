// The tokens the server knows a prompt text to be. A chat answer's tokens are what the model
// sampled, which is often not how its text tokenizes again (a grammar lets "<tool_call>" come as
// several pieces; BPE merges differently across what was sampled token by token), so when the
// next request carries the answer back, re-tokenizing the rendered conversation would change the
// tokens right after the previous prompt and the engine would read the answer, and everything
// after it, again. So each answer is remembered as (prompt text + answer text -> prompt tokens +
// sampled tokens), a restored session as (its tokens' text -> its tokens), and a prompt whose
// rendered text starts with a remembered text starts with those tokens; only the rest is
// tokenized (chat-prompt.ts). The text must match exactly, and the cut may not fall inside a
// special token's text in the template's part, so the model reads the same text either way:
// what a client typed is still never parsed as control tokens (client-text.ts), and tokens in a
// remembered sequence are the model's own output or a session's saved state.
import type { PromptSegment } from '../../native/lib/addon.js';
import type { ClientTextGuard } from './client-text.js';

/** What a cut needs to know of a rendered prompt. */
export interface CutPrompt {
  readonly text: string;
  readonly segments: readonly PromptSegment[];
  /** The vocabulary adds BOS before the text's tokens (not written by the template). */
  readonly addSpecial: boolean;
}

interface Entry {
  text: string;
  tokens: Int32Array;
  /** Its tokens start with a BOS the text does not hold. */
  bos: boolean;
}

export interface TokenMemoryLimits {
  /** Remembered texts (default 64). */
  entries: number;
  /** Their tokens together (default 2M). */
  tokens: number;
}

export class TokenMemory {
  /** Most recently used first. */
  private entries: Entry[] = [];
  private total = 0;

  constructor(
    private readonly guard: ClientTextGuard,
    /** The vocabulary adds BOS to a prompt (ModelView.bosPrefix is not empty). */
    private readonly addsBos: boolean,
    private readonly limits: TokenMemoryLimits = { entries: 64, tokens: 2_000_000 },
  ) {}

  /** `text` (as a rendered prompt holds it; `bos`: the tokens start with the vocabulary's BOS besides) is `tokens`. */
  remember(text: string, tokens: readonly number[] | Int32Array, bos: boolean): void {
    if (text === '' || tokens.length === 0 || tokens.length > this.limits.tokens) return;
    const same = this.entries.findIndex((e) => e.text === text && e.bos === bos);
    if (same >= 0) this.drop(same);
    this.entries.unshift({ text, tokens: Int32Array.from(tokens), bos });
    this.total += tokens.length;
    while (this.entries.length > this.limits.entries || this.total > this.limits.tokens) this.drop(this.entries.length - 1);
  }

  /** Whether prompts of this shape start with a BOS token their text does not hold. */
  bosOf(prompt: Pick<CutPrompt, 'addSpecial'>): boolean { return prompt.addSpecial && this.addsBos; }

  /** The longest remembered text `prompt` starts with (cut where no special token's text spans), or null. */
  find(prompt: CutPrompt): { length: number; tokens: Int32Array } | null {
    const bos = this.bosOf(prompt);
    let best = -1;
    for (let i = 0; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (e.bos !== bos || e.text.length > prompt.text.length) continue;
      if (best >= 0 && e.text.length <= this.entries[best]!.text.length) continue;
      if (prompt.text.startsWith(e.text) && this.cutIsClean(prompt, e.text.length)) best = i;
    }
    if (best < 0) return null;
    const [hit] = this.entries.splice(best, 1);
    this.entries.unshift(hit!);
    return { length: hit!.text.length, tokens: hit!.tokens };
  }

  get size(): number { return this.entries.length; }

  private drop(i: number): void {
    const [gone] = this.entries.splice(i, 1);
    if (gone) this.total -= gone.tokens.length;
  }

  /** No special token's text in the template's segments starts before `at` and ends after it. */
  private cutIsClean(prompt: CutPrompt, at: number): boolean {
    let start = 0;
    for (const seg of prompt.segments) {
      const end = start + seg.text.length;
      if (at <= start) return true;
      if (at < end) return seg.plain === true || !this.guard.spans(seg.text, at - start);
      start = end;
    }
    return true;
  }
}

/** The segments of a rendered prompt from character `at` on (the one cut there split). */
export function segmentsFrom(segments: readonly PromptSegment[], at: number): PromptSegment[] {
  const out: PromptSegment[] = [];
  let start = 0;
  for (const seg of segments) {
    const end = start + seg.text.length;
    if (end > at) {
      const text = at > start ? seg.text.slice(at - start) : seg.text;
      out.push(seg.plain ? { text, plain: true } : { text });
    }
    start = end;
  }
  return out;
}
