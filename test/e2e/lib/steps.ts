// A tiny sequential test runner for the e2e suites: named steps, each with its own deadline, a
// screenshot on failure, skips for steps whose prerequisite failed, and a closing summary line.

export type Outcome = 'passed' | 'failed' | 'skipped';
export interface StepResult { name: string; outcome: Outcome; ms: number; detail?: string }

export interface StepOptions {
  timeoutMs?: number;
  /** Names of earlier steps that must have passed; otherwise this step is skipped. */
  needs?: string[];
}

export class StepRunner {
  readonly results: StepResult[] = [];

  constructor(
    private readonly suite: string,
    /** Called with the step name after a failure (e.g. to take a screenshot). */
    private readonly onFailure?: (name: string) => Promise<void>,
  ) {}

  passed(name: string): boolean {
    return this.results.some((r) => r.name === name && r.outcome === 'passed');
  }

  async step(name: string, fn: () => Promise<void>, opts: StepOptions = {}): Promise<boolean> {
    const unmet = (opts.needs ?? []).filter((n) => !this.passed(n));
    if (unmet.length) {
      this.record({ name, outcome: 'skipped', ms: 0, detail: `needs ${unmet.join(', ')}` });
      return false;
    }
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const t0 = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        fn(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`step timed out after ${timeoutMs / 1000} s`)), timeoutMs);
        }),
      ]);
      this.record({ name, outcome: 'passed', ms: Date.now() - t0 });
      return true;
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      this.record({ name, outcome: 'failed', ms: Date.now() - t0, detail });
      try {
        await this.onFailure?.(name);
      } catch {
        // a failed screenshot must not hide the step's own error
      }
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Records an outcome decided elsewhere (e.g. results reported by the extension host). */
  record(r: StepResult): void {
    this.results.push(r);
    const mark = r.outcome === 'passed' ? 'ok  ' : r.outcome === 'failed' ? 'FAIL' : 'skip';
    const secs = (r.ms / 1000).toFixed(1);
    console.log(`[${this.suite}] ${mark} ${r.name} (${secs} s)${r.detail ? `\n        ${r.detail.split('\n').join('\n        ')}` : ''}`);
  }
}

export function summarize(results: StepResult[]): { line: string; failed: number } {
  const count = (o: Outcome): number => results.filter((r) => r.outcome === o).length;
  const failed = count('failed');
  const skipped = count('skipped');
  return { line: `${count('passed')} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`, failed };
}
