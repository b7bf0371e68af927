// POST /v1/edits/next on the real server. The copy test model (hand-set weights that continue the
// latest text they saw) answers a Zeta prompt with excerpt text, part of it the region, which the
// region as prediction drafts (accepted tokens); random tiny models answer noise, which is
// unparsed. How answers parse (edited, unchanged, unparsed) is tested on golden answers in
// test/unit/next-edit-formats.test.ts. Also: supersede by key (409), request text never parsed as
// control tokens, the counters in /metrics and Prometheus, the trace, and bad input named.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNextEditBody } from '../../contract/next-edit.js';
import { ensureTestModel } from '../helpers/models.js';
import { json, metrics, raw, startServer, stream, until, type Running } from './server-helpers.js';

const lines = Array.from({ length: 8 }, (_, i) => `  const total${i} = merge(items, ${i * 7}) + offset;`);
const request = {
  file: 'src/merge.ts', language: 'typescript', format: 'zeta',
  before: 'export function run(items: number[], offset: number) {\n', region: `${lines.join('\n')}\n`, after: '  return total0;\n}\n',
  cursor: 12, start_of_file: true,
  edits: [{ file: 'src/merge.ts', diff: '@@ -2,1 +2,1 @@\n-  const sum0 = merge(items, 0) + offset;\n+  const total0 = merge(items, 0) + offset;' }],
};

describe('next edit with the copy model (zeta layout)', () => {
  let srv: Running;
  beforeAll(async () => { srv = await startServer(await ensureTestModel({ shape: 'copy' }), { ctx: 2048, batch: 256 }); });
  afterAll(async () => { await srv?.close(); });

  it('drafts the answer from the region; counted in /metrics, Prometheus and the trace', async () => {
    const before = (await metrics(srv.port)).next_edit;
    // The copy model follows its last two tokens, which the markers share ("|>", "\n"), so it copies
    // excerpt text from one marker or another: some of it is the region's, drafted and accepted.
    const r = await raw(srv.port, 'POST', '/v1/edits/next', { ...request, max_tokens: 120 });
    expect(r.status, r.body).toBe(200);
    const body = parseNextEditBody(JSON.parse(r.body));
    expect(body.format).toBe('zeta');
    const d = body.usage.completion_tokens_details;
    expect(d.accepted_prediction_tokens).toBeGreaterThan(0);
    expect(body.timings.draft_n).toBeGreaterThanOrEqual(d.accepted_prediction_tokens + d.rejected_prediction_tokens);
    if (body.outcome !== 'edited') expect(body.region).toBe(request.region);

    const m = await metrics(srv.port);
    expect(m.next_edit.requests[body.outcome] - before.requests[body.outcome]).toBe(1);
    expect(m.next_edit.accepted_prediction_tokens - before.accepted_prediction_tokens).toBe(d.accepted_prediction_tokens);
    expect(m.next_edit.rejected_prediction_tokens - before.rejected_prediction_tokens).toBe(d.rejected_prediction_tokens);
    expect(m.requests.at(-1).kind).toBe('next_edit');
    const prom = (await raw(srv.port, 'GET', '/metrics/prometheus')).body;
    expect(prom).toMatch(new RegExp(`strata:next_edit_requests_total\\{outcome="${body.outcome}"\\} [1-9]`));
    expect(prom).toMatch(/strata:next_edit_prediction_tokens_total\{result="accepted"\} [1-9]/);
    const trace = (await json(srv.port, 'GET', `/v1/traces/${r.headers['x-request-id']}`)).body;
    expect(trace.request.kind).toBe('next_edit');
    expect(trace.request.drafted).toBeGreaterThan(0);
    expect(trace.request.engine.accepted).toBeGreaterThan(0);
  });
});

describe('next edit on a random model', () => {
  let srv: Running;
  beforeAll(async () => { srv = await startServer(await ensureTestModel({}), { ctx: 1024, slots: 1 }); });
  afterAll(async () => { await srv?.close(); });

  it('noise is unparsed; the region comes back as it was', async () => {
    const r = await json(srv.port, 'POST', '/v1/edits/next', { ...request, format: 'generic', max_tokens: 12 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const body = parseNextEditBody(r.body);
    expect(body.format).toBe('generic');
    expect(body.outcome).toBe('unparsed');
    expect(body.region).toBe(request.region);
    expect(body.finish_reason).toBe('length');
    expect(body.usage.completion_tokens).toBe(12);
  });

  it('auto picks the generic layout for a model not named zeta or instinct', async () => {
    const r = await json(srv.port, 'POST', '/v1/edits/next', { ...request, format: undefined, max_tokens: 2 });
    expect(parseNextEditBody(r.body).format).toBe('generic');
  });

  it('request text that spells a control token is plain text', async () => {
    const tokens = async (region: string) => (await json(srv.port, 'POST', '/v1/edits/next', { ...request, region, cursor: null, max_tokens: 1 })).body.usage.prompt_tokens as number;
    // <|im_end|> is one control token in this vocabulary; as text it is several.
    const control = (await json(srv.port, 'POST', '/v1/tokenize', { content: '<|im_end|>', parse_special: true })).body.tokens.length;
    expect(control).toBe(1);
    expect(await tokens('a<|im_end|>b\n') - await tokens('ab\n')).toBeGreaterThan(1);
  });

  it('a newer request with the same supersede_key ends a queued one with 409', async () => {
    const occupant = stream(srv.port, '/v1/completions', { prompt: 'hold the slot', max_tokens: 400, ignore_eos: true, temperature: 0 });
    await occupant.pieces(1);
    const queued = json(srv.port, 'POST', '/v1/edits/next', { ...request, max_tokens: 4, supersede_key: 'file:///src/merge.ts' });
    await until('the next edit to queue', () => metrics(srv.port), (m) => m.live.queued === 1);
    const before = (await metrics(srv.port)).next_edit.requests.failed;
    const newer = json(srv.port, 'POST', '/v1/edits/next', { ...request, max_tokens: 4, supersede_key: 'file:///src/merge.ts' });
    const q = await queued;
    expect(q.status).toBe(409);
    expect(q.body.error).toMatchObject({ code: 'superseded', param: 'supersede_key' });
    occupant.abort();
    expect((await newer).status).toBe(200);
    expect((await metrics(srv.port)).next_edit.requests.failed - before).toBe(1);
  });

  it('a running one is ended by a newer one with its key', async () => {
    const key = 'file:///src/other.ts';
    const first = json(srv.port, 'POST', '/v1/edits/next', { ...request, format: 'generic', max_tokens: 300, supersede_key: key });
    await until('the next edit to decode', () => metrics(srv.port), (m) => m.live.requests.some((r: { kind: string; generated: number }) => r.kind === 'next_edit' && r.generated > 0));
    const second = await json(srv.port, 'POST', '/v1/edits/next', { ...request, max_tokens: 4, supersede_key: key });
    expect(second.status).toBe(200);
    const f = await first;
    expect(f.status).toBe(409);
    expect(f.body.error.code).toBe('superseded');
  });

  it.each([
    [{ ...request, region: undefined }, 'region'],
    [{ ...request, file: '' }, 'file'],
    [{ ...request, cursor: 10_000 }, 'cursor'],
    [{ ...request, format: 'fim' }, 'format'],
    [{ ...request, edits: [{ file: 'a' }] }, 'edits[0].diff'],
    [{ ...request, context: 'x' }, 'context'],
    [{ ...request, max_tokens: 0 }, 'max_tokens'],
    [{ ...request, supersede_key: 5 }, 'supersede_key'],
  ])('bad input is a 400 naming the field (%#)', async (bad, param) => {
    const r = await json(srv.port, 'POST', '/v1/edits/next', bad);
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe(param);
  });
});
