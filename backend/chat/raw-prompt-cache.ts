// The tokens of the last few raw prompts (completions, sessions saved from prompt text), by their
// exact text. Only an exact match counts: a prefix's tokens followed by the rest's are not always
// the whole text's tokens (BPE merges across the cut), so a hit is exactly what the tokenizer would
// give. It spares the tokenizer (an engine call: 3-6 ms for 1.2K tokens on a 2-core CPU) when the
// same text comes again: the save of a conversation just served, a retried or repeated request.

export interface RawPromptCacheLimits {
  /** Texts kept (default 16). */
  entries: number;
  /** Their characters together (default 4M). */
  chars: number;
}

export class RawPromptCache {
  /** Map order is recency: the oldest first. */
  private readonly entries = new Map<string, Int32Array>();
  private chars = 0;

  constructor(private readonly limits: RawPromptCacheLimits = { entries: 16, chars: 4_000_000 }) {}

  get(text: string): number[] | null {
    const tokens = this.entries.get(text);
    if (!tokens) return null;
    this.entries.delete(text);
    this.entries.set(text, tokens);
    return Array.from(tokens);
  }

  put(text: string, tokens: readonly number[]): void {
    if (text.length > this.limits.chars) return;
    if (this.entries.delete(text)) this.chars -= text.length;
    this.entries.set(text, Int32Array.from(tokens));
    this.chars += text.length;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.limits.entries && this.chars <= this.limits.chars) break;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
  }

  get size(): number { return this.entries.size; }
}
