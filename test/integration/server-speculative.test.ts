// Speculative decoding through the server: a draft model (here the model itself, so every draft
// is accepted) shows in each answer's timings (llama-server's draft_n, draft_n_accepted), in
// /metrics and Prometheus, and in the request's trace; speculative.n_max 0 turns it off per request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { codeLines } from './engine-driver.js';
import { json, metrics, raw, startServer, type Running } from './server-helpers.js';

let srv: Running;

beforeAll(async () => {
  const model = await ensureTestModel({});
  srv = await startServer(model, { ctx: 512, draftModel: model, draftMax: 4, draftPMin: 0 });
});
afterAll(async () => { await srv?.close(); });

type Timings = { draft_n?: number; draft_n_accepted?: number; predicted_n: number };

describe('speculative decoding in the server', () => {
  it('reports drafts in timings, /metrics, Prometheus and the trace; the answer equals the one without drafts', async () => {
    const body = { messages: [{ role: 'user', content: 'Write a short poem.' }], temperature: 0, max_tokens: 20, ignore_eos: true };
    const off = await json(srv.port, 'POST', '/v1/chat/completions', { ...body, speculative: { n_max: 0 } });
    expect((off.body.timings as Timings).draft_n).toBeUndefined();
    const before = (await metrics(srv.port)).totals;
    const r = await raw(srv.port, 'POST', '/v1/chat/completions', body);
    const on = JSON.parse(r.body);
    expect(on.choices[0].message.content).toBe(off.body.choices[0].message.content);
    const t = on.timings as Timings;
    expect(t.draft_n).toBeGreaterThan(0);
    expect(t.draft_n_accepted).toBe(t.draft_n);
    const m = await metrics(srv.port);
    expect(m.totals.drafted_tokens - before.drafted_tokens).toBe(t.draft_n);
    expect(m.totals.accepted_tokens - before.accepted_tokens).toBe(t.draft_n_accepted);
    expect(m.totals.draft_acceptance).toBe(1);
    expect(m.model.speculative).toEqual({ ngram: false, ngramKind: null, mtp: false, draftModel: expect.any(String), draftKind: 'model', draftMax: 4 });
    const last = m.requests.at(-1);
    expect(last.drafted).toBe(t.draft_n);
    const prom = (await raw(srv.port, 'GET', '/metrics/prometheus')).body;
    expect(prom).toMatch(new RegExp(`strata:draft_tokens_total ${m.totals.drafted_tokens}\\b`));
    expect(prom).toMatch(/strata:draft_accepted_tokens_total \d+/);
    const trace = (await json(srv.port, 'GET', `/v1/traces/${r.headers['x-request-id']}`)).body;
    expect(trace.request.drafted).toBe(t.draft_n);
    expect(trace.request.engine.accepted).toBe(t.draft_n_accepted);
    expect(trace.steps.some((s: { draftTokens: number }) => s.draftTokens > 0)).toBe(true);
  });

  it('streams the same text with drafts, several tokens per chunk', async () => {
    const body = { messages: [{ role: 'user' as const, content: 'Tell me about rivers.' }], temperature: 0, max_tokens: 16, ignore_eos: true };
    const whole = await srv.openai.chat.completions.create({ model: 'm', ...body, speculative: { n_max: 0 } } as never) as unknown as { choices: Array<{ message: { content: string } }> };
    const s = await srv.openai.chat.completions.create({ model: 'm', ...body, stream: true });
    let text = '';
    let chunks = 0;
    for await (const c of s) { if (c.choices[0]?.delta.content) { text += c.choices[0].delta.content; chunks++; } }
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(chunks).toBeLessThan(16);
  });

  it('refuses a bad speculative.n_max naming it', async () => {
    const r = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }], speculative: { n_max: -1 } });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('speculative.n_max');
  });

  it('an EAGLE-3 drafter as the draft model: /v1/models and /metrics say so, and the answer equals the one without drafts', async () => {
    const model = await ensureTestModel({});
    const drafter = await ensureTestModel({ shape: 'eagle3' });
    const eagle = await startServer(model, { ctx: 512, draftModel: drafter, draftMax: 3, draftPMin: 0 });
    try {
      const listed = (await json(eagle.port, 'GET', '/v1/models')).body.data[0];
      expect(listed.meta.speculative).toMatchObject({ ngram: false, ngramKind: null, mtp: false, draftKind: 'eagle3', draftMax: 3 });
      const body = { messages: [{ role: 'user', content: 'Name three rivers.' }], temperature: 0, max_tokens: 12, ignore_eos: true };
      const off = await json(eagle.port, 'POST', '/v1/chat/completions', { ...body, speculative: { n_max: 0 } });
      const on = await json(eagle.port, 'POST', '/v1/chat/completions', body);
      expect(on.body.choices[0].message.content).toBe(off.body.choices[0].message.content);
      expect((on.body.timings as Timings).draft_n).toBeGreaterThan(0);
      expect((await metrics(eagle.port)).model.speculative.draftKind).toBe('eagle3');
    } finally {
      await eagle.close();
    }
  });

  it('--spec-ngram-kind map-k: llama.cpp\'s n-gram drafter, named in /v1/models; the answer equals the one without drafts', async () => {
    const copy = await ensureTestModel({ shape: 'copy' });
    const srv2 = await startServer(copy, { ctx: 1024, specNgramKind: 'map-k' });
    try {
      const listed = (await json(srv2.port, 'GET', '/v1/models')).body.data[0];
      expect(listed.meta.speculative).toMatchObject({ ngram: true, ngramKind: 'map-k', mtp: false, draftKind: null });
      const lines = codeLines(12).join('\n');
      const body = { prompt: `${lines}\n\n${lines}\n\n${lines.slice(0, 40)}`, temperature: 0, max_tokens: 40, ignore_eos: true };
      const off = await json(srv2.port, 'POST', '/v1/completions', { ...body, speculative: { n_max: 0 } });
      const on = await json(srv2.port, 'POST', '/v1/completions', body);
      expect(on.body.choices[0].text).toBe(off.body.choices[0].text);
      expect((on.body.timings as Timings).draft_n_accepted).toBeGreaterThan(0);
    } finally {
      await srv2.close();
    }
  });

  it('--spec auto (the default): infill drafts from its own n-grams, with the answer of --spec none', async () => {
    const copy = await ensureTestModel({ shape: 'copy', vocab: 'starcoder' });
    const lines = codeLines(12).join('\n');
    const body = { input_prefix: `${lines}\n\n${lines.slice(0, 40)}`, input_suffix: '\n}\n', max_tokens: 40, ignore_eos: true, temperature: 0 };
    const answers: Array<{ content: string; timings: Timings }> = [];
    for (const spec of ['auto', 'none'] as const) {
      const s = await startServer(copy, { ctx: 1024, spec });
      try {
        answers.push((await json(s.port, 'POST', '/v1/infill', body)).body);
        if (spec === 'auto') {
          const off = (await json(s.port, 'POST', '/v1/infill', { ...body, speculative: { n_max: 0 } })).body;
          expect(off.content).toBe(answers[0]!.content);
          expect(off.timings.draft_n ?? 0).toBe(0);
        }
      } finally {
        await s.close();
      }
    }
    const [auto, none] = answers;
    expect(auto!.content).toBe(none!.content);
    expect(auto!.timings.draft_n_accepted!).toBeGreaterThan(auto!.timings.draft_n! * 0.8);
    expect(none!.timings.draft_n ?? 0).toBe(0);
  });
});
