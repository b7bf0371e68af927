// Counters for inline completions, shown in the panel: how often we asked, served from cache,
// showed, got accepted, and how long the server took.
import type { CompletionStatsView } from '../../contract/panel.js';

export class CompletionStats {
  private counts = { requests: 0, cacheHits: 0, shown: 0, accepted: 0, cancelled: 0, errors: 0 };
  private latencies: number[] = [];
  private last: number | null = null;

  constructor(private readonly window = 200) {}

  request(): void { this.counts.requests++; }
  cacheHit(): void { this.counts.cacheHits++; }
  shown(): void { this.counts.shown++; }
  accepted(): void { this.counts.accepted++; }
  cancelled(): void { this.counts.cancelled++; }
  error(): void { this.counts.errors++; }

  latency(ms: number): void {
    this.last = ms;
    this.latencies.push(ms);
    if (this.latencies.length > this.window) this.latencies.shift();
  }

  view(): CompletionStatsView {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const pct = (p: number): number | null => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : null);
    const avg = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null;
    return { ...this.counts, latencyAvgMs: avg, latencyP50Ms: pct(0.5), latencyP90Ms: pct(0.9), lastLatencyMs: this.last };
  }
}
