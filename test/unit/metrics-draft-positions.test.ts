// Acceptance per draft position in /metrics, Prometheus and the panel's view of the metrics: the
// engines' counts summed position by position, the share per position, and nothing (not zeros)
// where nothing was drafted.
import { describe, expect, it } from 'vitest';
import { buildMetrics } from '../../backend/metrics/metrics-json.js';
import { metricsView } from '../../contract/metrics.js';
import { prometheusText } from '../../backend/metrics/prometheus.js';
import { RequestLedger } from '../../backend/scheduler/request-ledger.js';
import { Scheduler } from '../../backend/scheduler/scheduler.js';
import { FakeEngineClient } from '../helpers/fake-engine-client.js';

describe('draft acceptance per position', () => {
  it('sums the engines\' counts per position and renders them per position in Prometheus', async () => {
    const engines = [new FakeEngineClient({ slots: 1 }), new FakeEngineClient({ slots: 1 })];
    for (const e of engines) await e.start();
    const ledger = new RequestLedger();
    const scheduler = new Scheduler(engines, ledger, { auditMs: 0 });
    const src = { ledger, scheduler, engines, model: null, stopping: false, startedAt: Date.now(), logDropped: 0 };
    expect((await buildMetrics(src)).totals.draft_positions).toEqual([]);
    expect(metricsView(await buildMetrics(src)).draftPositions).toEqual([]);
    expect(prometheusText(await buildMetrics(src))).not.toMatch(/^strata:draft_position_drafted_total\{/m);

    engines[0]!.draftPositions = [{ drafted: 10, accepted: 6 }, { drafted: 8, accepted: 2 }];
    engines[1]!.draftPositions = [{ drafted: 10, accepted: 4 }, { drafted: 9, accepted: 1 }, { drafted: 3, accepted: 0 }];
    const m = await buildMetrics(src);
    expect(m.totals.draft_positions).toEqual([
      { position: 1, drafted: 20, accepted: 10, acceptance: 0.5 },
      { position: 2, drafted: 17, accepted: 3, acceptance: 0.18 },
      { position: 3, drafted: 3, accepted: 0, acceptance: 0 },
    ]);
    expect(metricsView(m).draftPositions).toEqual(m.totals.draft_positions);
    const text = prometheusText(m);
    expect(text).toMatch(/^strata:draft_position_drafted_total\{position="1"\} 20$/m);
    expect(text).toMatch(/^strata:draft_position_accepted_total\{position="2"\} 3$/m);
    expect(text).toMatch(/^strata:draft_position_drafted_total\{position="3"\} 3$/m);
    expect(text).toMatch(/# TYPE strata:draft_position_accepted_total counter/);
  });
});
