// Tokens per second over a sliding window (the live tok/s of a running request).
export class RateMeter {
  private samples: Array<[number, number]> = [];
  private first: number | null = null;

  constructor(private readonly windowMs: number, private readonly now: () => number = Date.now) {}

  add(count: number): void {
    const t = this.now();
    if (this.first === null) this.first = t;
    this.samples.push([t, count]);
    this.trim(t);
  }

  /** Tokens per second over the window (or since the first tokens, which start the clock); null before that. */
  perSecond(): number | null {
    const t = this.now();
    this.trim(t);
    if (this.first === null) return null;
    const from = Math.max(this.first, t - this.windowMs);
    const span = t - from;
    if (span <= 0) return null;
    let n = 0;
    for (const [at, c] of this.samples) if (at > from) n += c;
    return Math.round((n * 1000 / span) * 10) / 10;
  }

  private trim(t: number): void {
    while (this.samples.length > 0 && this.samples[0]![0] <= t - this.windowMs) this.samples.shift();
  }
}
