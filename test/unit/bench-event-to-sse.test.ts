// The bench's reading of the server's per-token overhead: from our JSON /metrics or from
// Prometheus text, nothing from a server without it (llama-server), and a run's share as
// diagnostic figures.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventToSseFromPrometheus, eventToSseMetrics, scrapeEventToSse } from '../../backend/bench/server-info.js';
import { LatencyHistogram } from '../../backend/metrics/latency-histogram.js';

const clock = { t: 100 };
const hist = new LatencyHistogram([0.5, 1, 10], () => clock.t);
let body: { type: string; text: string } | null = null;
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (!req.url?.startsWith('/metrics') || !body) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': body.type });
    res.end(body.text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const PROM = [
  '# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.',
  '# TYPE llamacpp:prompt_tokens_total counter',
  'llamacpp:prompt_tokens_total 12',
  '# TYPE strata:event_to_sse_seconds histogram',
  'strata:event_to_sse_seconds_bucket{le="0.0005"} 3',
  'strata:event_to_sse_seconds_bucket{le="0.001"} 4',
  'strata:event_to_sse_seconds_bucket{le="+Inf"} 4',
  'strata:event_to_sse_seconds_sum 0.0016',
  'strata:event_to_sse_seconds_count 4',
  '',
].join('\n');

describe('bench: server overhead per token event', () => {
  it('reads our JSON /metrics, Prometheus text, and nothing from a server without the histogram', async () => {
    const target = { url, model: 'm' };
    body = null;
    expect(await scrapeEventToSse(target)).toBeNull(); // 404, as llama-server without --metrics
    body = { type: 'text/plain', text: 'llamacpp:prompt_tokens_total 12\n' };
    expect(await scrapeEventToSse(target)).toBeNull(); // llama-server's metrics
    body = { type: 'application/json', text: JSON.stringify({ uptime_s: 1, event_to_sse: null }) };
    expect(await scrapeEventToSse(target)).toBeNull();

    clock.t = 200;
    hist.observeSince(199.6);
    body = { type: 'application/json', text: JSON.stringify({ uptime_s: 1, event_to_sse: hist.snapshot() }) };
    expect(await scrapeEventToSse(target)).toMatchObject({ count: 1, buckets: [{ le_ms: 0.5, count: 1 }, { le_ms: 1, count: 1 }, { le_ms: 10, count: 1 }] });

    body = { type: 'text/plain', text: PROM };
    const h = await scrapeEventToSse(target);
    expect(h).toMatchObject({ count: 4, buckets: [{ le_ms: 0.5, count: 3 }, { le_ms: 1, count: 4 }] });
    expect(h!.sum_ms).toBeCloseTo(1.6, 9);
    expect(eventToSseFromPrometheus('strata:event_to_sse_seconds_bucket{le="0.001"} 4\n')).toBeNull(); // no count/sum
  });

  it('reports a run\'s share as p50/p95 diagnostics, and nothing for a run that streamed no token', () => {
    const h = new LatencyHistogram([0.5, 1, 10], () => clock.t);
    clock.t = 300;
    h.observeSince(295); // 5 ms, before the run
    const before = h.snapshot();
    for (let i = 0; i < 19; i++) h.observeSince(299.75); // 0.25 ms
    h.observeSince(299.2); // 0.8 ms
    const metrics = eventToSseMetrics('single', before, h.snapshot());
    expect(metrics.map((m) => [m.key, m.unit, m.better])).toEqual([
      ['single_event_to_sse_p50_ms', 'ms', 'info'], ['single_event_to_sse_p95_ms', 'ms', 'info'],
    ]);
    expect(metrics[0]!.value).toBeCloseTo(0.5 * 10 / 19, 9); // rank 10 of 19 in (0, 0.5]
    expect(metrics[1]!.value).toBeCloseTo(0.5, 9); // rank 19 of 20: the top of (0, 0.5]
    expect(eventToSseMetrics('single', before, before)).toEqual([]);
    expect(eventToSseMetrics('single', before, null)).toEqual([]);
  });
});
