import { describe, expect, it } from 'vitest';
import { buildMetrics } from '../../backend/metrics/metrics-json.js';
import { prometheusText } from '../../backend/metrics/prometheus.js';
import { RequestLedger } from '../../backend/scheduler/request-ledger.js';
import { Scheduler } from '../../backend/scheduler/scheduler.js';
import { FakeEngineClient } from '../helpers/fake-engine-client.js';

describe('metrics', () => {
  it('shows every live request in one state, keeps unreported figures null, and renders Prometheus text', async () => {
    const engine = new FakeEngineClient({ slots: 1 });
    await engine.start();
    const ledger = new RequestLedger();
    const scheduler = new Scheduler([engine], ledger, { auditMs: 0 });
    const running = scheduler.submit(ledger.accept('chat', true), { prompt: [1, 2, 3], maxTokens: 5 });
    const waiting = scheduler.submit(ledger.accept('infill', false), { prompt: [4], maxTokens: 5 });
    const r = engine.all[0]!;
    r.admit(0, 2);
    r.tokens([7, 8], 'ab');
    await new Promise((res) => setImmediate(res));
    const src = { ledger, scheduler, engines: [engine], model: null, stopping: false, startedAt: Date.now(), logDropped: 0 };
    const live = await buildMetrics(src);
    expect(live.live).toMatchObject({ state: 'generating', queued: 1, admitting: 0, running: 1, finishing: 0 });
    expect(live.live.requests.map((x) => [x.id, x.state])).toEqual([[running.record.id, 'running'], [waiting.record.id, 'queued']]);
    expect(live.engines[0]).toMatchObject({ replica: 0, epoch: 1, alive: true, restarts: 0, in_flight: 1, slots: 1 });

    // Cancelled while queued: no engine figures (null), not zeros.
    waiting.cancel('cancel');
    for await (const _ of waiting.events) { /* drain */ }
    ledger.end(waiting.record, 'cancel');
    r.finish('stop', { promptMs: 4, decodeMs: 20, generated: 2, reused: 2 });
    for await (const _ of running.events) { /* drain */ }
    ledger.end(running.record, 'stop');
    const after = await buildMetrics(src);
    expect(after.live).toMatchObject({ queued: 0, admitting: 0, running: 0, finishing: 0, state: 'idle' });
    const [cancelled, done] = [after.requests[0]!, after.requests[1]!];
    expect(cancelled).toMatchObject({ finish: 'cancel', prompt_ms: null, decode_ms: null, reused: null, decode_tok_s: null, output_tokens: 0 });
    expect(done).toMatchObject({ finish: 'stop', prompt_tokens: 3, reused: 2, output_tokens: 2, prompt_ms: 4, decode_ms: 20, decode_tok_s: 100 });
    expect(after.totals).toMatchObject({ prompt_tokens: 3, reused_tokens: 2, prompt_tokens_processed: 1, output_tokens: 2, prompt_ms_requests: 1 });
    // What the engine decoded, the cancelled requests' work included (llama-server's meaning of prompt_tokens_total).
    engine.promptComputed = 7;
    const computed = await buildMetrics(src);
    expect(computed.totals.prompt_tokens_computed).toBe(7);
    expect(computed.totals.draft_positions).toEqual([]);

    const text = prometheusText(computed);
    expect(text).toMatch(/^llamacpp:prompt_tokens_total 7$/m);
    expect(text).toMatch(/^llamacpp:tokens_predicted_total 2$/m);
    expect(text).toMatch(/^llamacpp:requests_processing 0$/m);
    expect(text).toMatch(/^strata:requests_total\{finish="cancel"\} 1$/m);
    expect(text).toMatch(/^strata:engine_up\{replica="0"\} 1$/m);
    expect(text).toMatch(/# TYPE llamacpp:prompt_tokens_total counter/);
    scheduler.close();
  });
});
