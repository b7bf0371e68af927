import { describe, expect, it } from 'vitest';
import { ratioMarkdown, ratioRows } from '../../backend/bench/compare.js';
import { summarize, type RunRecord } from '../../backend/bench/runner.js';
import type { Metric, ScenarioName } from '../../backend/bench/types.js';

function rec(scenario: ScenarioName, run: number, metrics: Metric[], error: string | null = null): RunRecord {
  return {
    scenario, run, startedAt: '2026-01-01T00:00:00Z', durationMs: 1, loadavg: [0, 0], error,
    result: error ? null : { metrics, conditions: {}, samples: {}, notes: [] },
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
});
