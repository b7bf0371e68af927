// Completion results keyed by the text around the cursor. Also answers while the user types
// along a suggestion: if the new prefix is an old prefix plus text that the old completion
// starts with, the rest of that completion is still the answer, without asking the server.

interface Entry { prefix: string; suffix: string; completion: string }

export class CompletionCache {
  /** Most recently used last. */
  private entries: Entry[] = [];

  constructor(private readonly capacity = 128) {}

  get size(): number {
    return this.entries.length;
  }

  put(prefix: string, suffix: string, completion: string): void {
    this.entries = this.entries.filter((e) => !(e.prefix === prefix && e.suffix === suffix));
    this.entries.push({ prefix, suffix, completion });
    if (this.entries.length > this.capacity) this.entries.splice(0, this.entries.length - this.capacity);
  }

  /**
   * The completion for this cursor context: an exact hit (possibly '' = the server had nothing),
   * or the unconsumed rest of a suggestion the user has been typing along. undefined = unknown.
   */
  get(prefix: string, suffix: string): string | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.suffix !== suffix) continue;
      if (e.prefix === prefix) return this.touch(i).completion;
      if (prefix.length > e.prefix.length && prefix.startsWith(e.prefix)) {
        const typed = prefix.slice(e.prefix.length);
        if (e.completion.length > typed.length && e.completion.startsWith(typed)) {
          this.touch(i);
          return e.completion.slice(typed.length);
        }
      }
    }
    return undefined;
  }

  clear(): void {
    this.entries = [];
  }

  private touch(i: number): Entry {
    const [e] = this.entries.splice(i, 1);
    this.entries.push(e!);
    return e!;
  }
}
