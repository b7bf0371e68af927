// Progress of a running `strata bench` read from its log lines on stderr:
//   "[bench] run 2/3: single"                -> scenario run starts
//   "[bench] run 2/3: single done (4.1 s)"   -> it ended (or "... FAILED: why (4.1 s)")
// The estimate of what is left uses the measured time per scenario as runs finish. Pure.
import type { BenchProgress } from '../../contract/bench.js';
import { scenarioSeconds, totalSteps, type BenchPlan } from './bench-plan.js';
import type { BenchRun } from '../../contract/bench.js';

const START = /^\[bench\] run (\d+)\/(\d+): (\w+)$/;
const END = /^\[bench\] run (\d+)\/(\d+): (\w+) (?:done|FAILED: .*) \(([\d.]+) s\)$/;

export class BenchProgressTracker {
  private done = 0;
  private current: string | null = null;
  private currentStarted = 0;
  /** Measured seconds per scenario in this benchmark. */
  private readonly measured = new Map<string, number[]>();
  private label = '';

  constructor(private readonly plan: BenchPlan, private readonly url: string, private readonly history: readonly BenchRun[], private readonly startedAt: number, private readonly now: () => number = Date.now) {}

  /** Durations measured so far, ms per scenario (stored with the run for later estimates). */
  durations(): Record<string, number[]> {
    return Object.fromEntries([...this.measured].map(([k, v]) => [k, v.map((s) => Math.round(s * 1000))]));
  }

  /** The comparison server's part begins: its steps follow ours. */
  startBaseline(): void {
    this.label = ' (other server)';
  }

  /** Feeds one line; returns the new progress when the line changed it. */
  line(line: string): BenchProgress | null {
    const end = END.exec(line.trim());
    if (end) {
      const secs = Number(end[4]);
      if (!this.label) this.measured.set(end[3]!, [...(this.measured.get(end[3]!) ?? []), secs]);
      this.done = Math.min(totalSteps(this.plan), this.done + 1);
      this.current = null;
      return this.view();
    }
    const start = START.exec(line.trim());
    if (start) {
      this.current = `${start[3]}, run ${start[1]} of ${start[2]}${this.label}`;
      this.currentStarted = this.now();
      return this.view();
    }
    return null;
  }

  view(): BenchProgress {
    return { done: this.done, total: totalSteps(this.plan), current: this.current, etaS: this.eta(), startedAt: this.startedAt };
  }

  /** Seconds left: the steps not yet done at their (measured, else estimated) time, minus what the current one has run. */
  private eta(): number | null {
    const per = (s: string): number => {
      const m = this.measured.get(s);
      return m?.length ? m.reduce((a, b) => a + b, 0) / m.length : scenarioSeconds(s, this.url, this.history).seconds;
    };
    const order: string[] = [];
    for (let pass = 0; pass < (this.plan.baselineUrl ? 2 : 1); pass++) {
      for (let r = 0; r < this.plan.runs; r++) order.push(...this.plan.scenarios);
    }
    let left = order.slice(this.done).reduce((n, s) => n + per(s), 0);
    if (this.current !== null) left -= Math.min(per(order[this.done] ?? ''), (this.now() - this.currentStarted) / 1000);
    return Math.max(0, Math.round(left));
  }
}
