import { describe, expect, it } from 'vitest';
import { ratioMarkdown, ratioRows } from '../../tools/bench-compare/compare.js';
import { notesOf, summaryTable } from '../../backend/bench/report.js';
import { summarize, tallies } from '../../backend/bench/runner.js';
import type { RunRecord } from '../../contract/bench.js';
import type { Metric, RequestTally, ScenarioName } from '../../contract/bench.js';

const requests = (sent: number, failed: number, deliveredTokens: number): RequestTally =>
  ({ sent, completed: sent - failed, failed, deliveredTokens, failures: failed > 0 ? ['/v1/completions: HTTP 500: does not match'] : [] });

function rec(scenario: ScenarioName, run: number, metrics: Metric[], error: string | null = null, tally = requests(1, 0, 10)): RunRecord {
  return {
    scenario, run, startedAt: '2026-01-01T00:00:00Z', durationMs: 1, loadavg: [0, 0], error,
    result: error ? null : { requests: tally, metrics, conditions: {}, samples: {}, notes: [] },
  };
}
const m = (key: string, value: number, better: Metric['better'] = 'higher', unit: Metric['unit'] = 'tok/s'): Metric =>
  ({ key, label: key, unit, better, value });

describe('bench summaries and ratios', () => {
  it('summarises each figure over runs: median, min, max, values in run order', () => {
    const s = summarize([
      rec('single', 0, [m('single_decode_tok_s', 30), m('single_ttft_ms', 200, 'lower', 'ms')]),
      rec('single', 1, [m('single_decode_tok_s', 10), m('single_ttft_ms', 100, 'lower', 'ms')]),
      rec('single', 2, [], 'boom'),
      rec('single', 3, [m('single_decode_tok_s', 20)]),
    ]);
    expect(s.map((x) => x.key)).toEqual(['single_decode_tok_s', 'single_ttft_ms']);
    expect(s[0]).toMatchObject({ values: [30, 10, 20], n: 3, median: 20, min: 10, max: 30, scenario: 'single' });
    expect(s[1]).toMatchObject({ values: [200, 100], n: 2, median: 150 });
  });

  it('orders figures by scenario even when an earlier run failed', () => {
    const s = summarize([
      rec('concurrent', 0, [], 'engine died'),
      rec('infill', 0, [m('infill_p50_ms', 5, 'lower', 'ms')]),
      rec('concurrent', 1, [m('c4_output_tok_s', 9)]),
    ]);
    expect(s.map((x) => x.key)).toEqual(['c4_output_tok_s', 'infill_p50_ms']);
  });

  it('pairs figures by key, ratio ours / theirs, judged against the targets', () => {
    const ours = summarize([rec('single', 0, [m('single_decode_tok_s', 19), m('single_ttft_ms', 120, 'lower', 'ms')]),
      rec('mixed', 0, [m('mixed_short_ttft_p95_ms', 300, 'lower', 'ms')])]);
    const theirs = summarize([rec('single', 0, [m('single_decode_tok_s', 20), m('single_ttft_ms', 100, 'lower', 'ms')]),
      rec('mixed', 0, [m('mixed_short_ttft_p95_ms', 3000, 'lower', 'ms'), m('mixed_long_ttft_ms', 9000, 'info', 'ms')])]);
    const rows = ratioRows(ours, theirs);
    const by = Object.fromEntries(rows.map((r) => [r.key, r]));
    expect(by.single_decode_tok_s!.ratio).toBeCloseTo(0.95, 10);
    expect(by.single_decode_tok_s!.met).toBe(false); // needs >= 0.97
    expect(by.single_ttft_ms!.ratio).toBeCloseTo(1.2, 10);
    expect(by.single_ttft_ms!.met).toBe(false); // needs <= 1.10
    expect(by.mixed_short_ttft_p95_ms!.ratio).toBeCloseTo(0.1, 10);
    expect(by.mixed_short_ttft_p95_ms!.met).toBe(true); // needs <= 0.20
    expect(by.mixed_long_ttft_ms!.ours).toBeNull();
    expect(Number.isNaN(by.mixed_long_ttft_ms!.ratio)).toBe(true);
    expect(by.mixed_long_ttft_ms!.met).toBeNull();
  });

  it('writes a markdown table with verdicts, diagnostics apart', () => {
    const ours = summarize([rec('repeat', 0, [m('repeat_ttft_ms', 50, 'lower', 'ms'), m('repeat_reused_tokens', 4000, 'info', 'tokens')]),
      rec('repeat', 1, [m('repeat_ttft_ms', 70, 'lower', 'ms'), m('repeat_reused_tokens', 4000, 'info', 'tokens')])]);
    const theirs = summarize([rec('repeat', 0, [m('repeat_ttft_ms', 100, 'lower', 'ms'), m('repeat_reused_tokens', 3900, 'info', 'tokens')])]);
    const md = ratioMarkdown(ratioRows(ours, theirs), { ours: 'strata', theirs: 'llama-server' });
    expect(md).toContain('| repeat | repeat_ttft_ms | ms | 60.0 (50.0–70.0) | 100 | 0.600 | lower | <= 0.80 | yes |');
    expect(md).toContain('Diagnostics (no better direction):');
    expect(md).toContain('| repeat | repeat_reused_tokens | tokens | 4000 (4000–4000) | 3900 | 1.026 |');
  });

  it('sums each scenario\'s requests over its runs', () => {
    const t = tallies([rec('concurrent', 0, [], null, requests(8, 1, 100)), rec('concurrent', 1, [], null, requests(8, 2, 90)), rec('single', 0, [], null, requests(1, 0, 64))]);
    expect(t.get('concurrent')).toMatchObject({ sent: 16, completed: 13, failed: 3, deliveredTokens: 190 });
    expect(t.get('single')).toMatchObject({ sent: 1, failed: 0, deliveredTokens: 64 });
  });

  it('marks a ratio not comparable when either side failed more than a few percent, and says so beside the figure', () => {
    const c8 = (v: number) => [m('c8_output_tok_s', v)];
    const ours = [rec('concurrent', 0, c8(40), null, requests(32, 0, 1024)), rec('concurrent', 1, c8(42), null, requests(32, 0, 1024))];
    const theirs = [rec('concurrent', 0, c8(50), null, requests(32, 15, 700)), rec('concurrent', 1, c8(52), null, requests(32, 14, 720))];
    const rows = ratioRows(summarize(ours), summarize(theirs), { ours: tallies(ours), theirs: tallies(theirs) });
    expect(rows[0]).toMatchObject({ key: 'c8_output_tok_s', comparable: false, met: null });
    const md = ratioMarkdown(rows, { ours: 'strata', theirs: 'llama-server' });
    expect(md).toContain('| concurrent | c8_output_tok_s | tok/s | 41.0 (40.0–42.0) | 51.0 (50.0–52.0) | 0.804 n/c | higher | >= 1.00 | n/c | 0/64 failed, 2048 tok | 29/64 failed, 1420 tok |');
    // One failure in 64 (1.6%) stays comparable.
    const fine = [rec('concurrent', 0, c8(50), null, requests(64, 1, 2000))];
    expect(ratioRows(summarize(ours), summarize(fine), { ours: tallies(ours), theirs: tallies(fine) })[0]).toMatchObject({ comparable: true, met: false });
  });

  it('strata bench prints each scenario\'s requests beside its figures and notes the failures', () => {
    const records = [rec('infill', 0, [m('infill_p50_ms', 900, 'lower', 'ms')], null, requests(7, 7, 0)), rec('single', 0, [m('single_ttft_ms', 90, 'lower', 'ms')])];
    const table = summaryTable(summarize(records), records);
    expect(table).toMatch(/infill\s+infill_p50_ms\s+900\s+900\s+900\s+ms\s+1\s+lower\s+7\/7 failed, 0 tok !/);
    expect(table).toMatch(/single\s+single_ttft_ms\s+90\.0.*0\/1 failed, 10 tok$/m);
    expect(notesOf(records)).toContain('infill: 7 of 7 requests failed (over 3%: not comparable), e.g. /v1/completions: HTTP 500: does not match');
  });
});
