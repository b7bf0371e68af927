// A minimal test runner for inside the extension host (no mocha: nothing to install into VS Code).
// Runs tests in order, each with a deadline; prints one line per test and writes the results as
// JSON to $STRATA_E2E_RESULTS when set (the harness reads them); rejects when any test failed, which
// makes VS Code end the run with a non-zero exit code.
import { writeFileSync } from 'node:fs';

export interface ExtHostTest {
  name: string;
  timeoutMs: number;
  /** Names of earlier tests that must have passed; otherwise this one is skipped (and counted). */
  needs?: string[];
  fn: () => Promise<void>;
}

export interface ExtHostTestResult { name: string; outcome: 'passed' | 'failed' | 'skipped'; ms: number; detail?: string }

export async function runTests(suite: string, tests: ExtHostTest[]): Promise<void> {
  const results: ExtHostTestResult[] = [];
  for (const t of tests) {
    const unmet = (t.needs ?? []).filter((n) => !results.some((r) => r.name === n && r.outcome === 'passed'));
    if (unmet.length) {
      results.push({ name: t.name, outcome: 'skipped', ms: 0, detail: `needs ${unmet.join(', ')}` });
      console.log(`[${suite}] skip ${t.name} (needs ${unmet.join(', ')})`);
      continue;
    }
    const t0 = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        t.fn(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`timed out after ${t.timeoutMs / 1000} s`)), t.timeoutMs);
        }),
      ]);
      results.push({ name: t.name, outcome: 'passed', ms: Date.now() - t0 });
    } catch (err) {
      // Our own assertion and timeout messages say it all; anything else gets its stack.
      const detail = err instanceof Error ? (err.constructor === Error ? err.message : (err.stack ?? err.message)) : String(err);
      results.push({ name: t.name, outcome: 'failed', ms: Date.now() - t0, detail });
    } finally {
      clearTimeout(timer);
    }
    const r = results[results.length - 1]!;
    console.log(`[${suite}] ${r.outcome === 'passed' ? 'ok  ' : 'FAIL'} ${r.name} (${(r.ms / 1000).toFixed(1)} s)${r.detail ? `\n${r.detail}` : ''}`);
  }
  const file = process.env.STRATA_E2E_RESULTS;
  if (file) writeFileSync(file, JSON.stringify({ suite, results }, null, 2));
  const failed = results.filter((r) => r.outcome === 'failed').length;
  const skipped = results.filter((r) => r.outcome === 'skipped').length;
  console.log(`[${suite}] ${results.length - failed - skipped} passed, ${failed} failed, ${skipped} skipped`);
  if (failed || skipped) throw new Error(`${failed} of ${results.length} extension-host tests failed, ${skipped} skipped`);
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** Polls `probe` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() >= end) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
