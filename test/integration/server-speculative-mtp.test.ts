// The server with a model that carries an MTP head: `--spec auto` (the default) drafts with it,
// /v1/models and /metrics say so, the acceptance per draft position adds up to the totals, and the
// answers are the answers without drafts, also with several requests at once; `--spec none` drafts
// nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, metrics, raw, startServer, type Running } from './server-helpers.js';

let srv: Running;
let model = '';

beforeAll(async () => {
  model = await ensureTestModel({ shape: 'mtp', logitScale: 4 });
  srv = await startServer(model, { ctx: 512, slots: 3, draftMax: 3, draftPMin: 0 });
});
afterAll(async () => { await srv?.close(); });

type Timings = { draft_n?: number; draft_n_accepted?: number };
const ask = (content: string, extra: object = {}) => ({
  messages: [{ role: 'user', content }], temperature: 0, max_tokens: 16, ignore_eos: true, ...extra,
});

describe('MTP drafts through the server', () => {
  it('drafts by default; the answers equal those without drafts, three at once; acceptance per position adds up', async () => {
    const m0 = await metrics(srv.port);
    expect(m0.model.speculative).toEqual({ ngram: false, ngramKind: null, mtp: true, draftModel: null, draftKind: null, draftMax: 3 });
    const models = await json(srv.port, 'GET', '/v1/models');
    expect(JSON.stringify(models.body)).toContain('"mtp":true');
    const questions = ['Name a river.', 'Count to five.', 'Say hello.'];
    const plain: Array<{ choices: Array<{ message: { content: string } }> }> = [];
    for (const q of questions) plain.push((await json(srv.port, 'POST', '/v1/chat/completions', ask(q, { speculative: { n_max: 0 } }))).body as (typeof plain)[number]);
    const spec = await Promise.all(questions.map((q) => json(srv.port, 'POST', '/v1/chat/completions', ask(q))));
    spec.forEach((r, i) => expect(r.body.choices[0].message.content, questions[i]).toBe(plain[i]!.choices[0]!.message.content));
    const drafted = spec.reduce((n, r) => n + ((r.body.timings as Timings).draft_n ?? 0), 0);
    expect(drafted).toBeGreaterThan(0);
    const m = await metrics(srv.port);
    const positions = m.totals.draft_positions as Array<{ position: number; drafted: number; accepted: number }>;
    expect(positions.map((p) => p.position)).toEqual(positions.map((_, i) => i + 1));
    expect(positions.length).toBeLessThanOrEqual(3);
    expect(m.totals.accepted_tokens).toBeGreaterThan(0);
    expect(positions.reduce((n, p) => n + p.drafted, 0)).toBe(m.totals.drafted_tokens);
    expect(positions.reduce((n, p) => n + p.accepted, 0)).toBe(m.totals.accepted_tokens);
    for (let i = 1; i < positions.length; i++) expect(positions[i]!.drafted).toBeLessThanOrEqual(positions[i - 1]!.drafted);
    const prom = (await raw(srv.port, 'GET', '/metrics/prometheus')).body;
    expect(prom).toMatch(new RegExp(`^strata:draft_position_drafted_total\\{position="1"\\} ${positions[0]!.drafted}$`, 'm'));
  });

  it('--spec none: no drafts, the same answer', async () => {
    const none = await startServer(model, { ctx: 512, slots: 1, spec: 'none', draftPMin: 0 });
    try {
      expect((await metrics(none.port)).model.speculative).toEqual({ ngram: false, ngramKind: null, mtp: false, draftModel: null, draftKind: null, draftMax: 0 });
      const r = await json(none.port, 'POST', '/v1/chat/completions', ask('Say hello.'));
      expect((r.body.timings as Timings).draft_n).toBeUndefined();
      const ref = await json(srv.port, 'POST', '/v1/chat/completions', ask('Say hello.'));
      expect(r.body.choices[0].message.content).toBe(ref.body.choices[0].message.content);
    } finally {
      await none.close();
    }
  });
});
