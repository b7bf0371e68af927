// Completion results keyed by the text around the cursor. Also answers while the user types
// along a suggestion: if the new prefix is an old prefix plus text that the old completion
// starts with, the rest of that completion is still the answer, without asking the server.
// An entry holds every candidate of its request (several when the candidates setting is above 1).

interface Entry { prefix: string; suffix: string; completions: string[] }

export class CompletionCache {
  /** Most recently used last. */
  private entries: Entry[] = [];

  constructor(private readonly capacity = 128) {}

  get size(): number {
    return this.entries.length;
  }

  put(prefix: string, suffix: string, completion: string): void {
    this.putAll(prefix, suffix, [completion]);
  }

  /** The candidates of one request, in the order to show them (an empty list: the server had nothing). */
  putAll(prefix: string, suffix: string, completions: readonly string[]): void {
    this.entries = this.entries.filter((e) => !(e.prefix === prefix && e.suffix === suffix));
    this.entries.push({ prefix, suffix, completions: [...completions] });
    if (this.entries.length > this.capacity) this.entries.splice(0, this.entries.length - this.capacity);
  }

  /**
   * The completion for this cursor context: an exact hit (possibly '' = the server had nothing),
   * or the unconsumed rest of a suggestion the user has been typing along. undefined = unknown.
   */
  get(prefix: string, suffix: string): string | undefined {
    const all = this.getAll(prefix, suffix);
    return all && (all[0] ?? '');
  }

  /** Every candidate for this cursor context (the rests of those the user typed along), or undefined. */
  getAll(prefix: string, suffix: string): string[] | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.suffix !== suffix) continue;
      if (e.prefix === prefix) return [...this.touch(i).completions];
      if (prefix.length > e.prefix.length && prefix.startsWith(e.prefix)) {
        const typed = prefix.slice(e.prefix.length);
        const rests = e.completions.filter((c) => c.length > typed.length && c.startsWith(typed)).map((c) => c.slice(typed.length));
        if (rests.length) {
          this.touch(i);
          return rests;
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
