// Infill with n > 1 (completion candidates): n sequences share one prompt read, stream their
// pieces by choices[].index, and each ends with its own finish chunk; greedy candidates equal the
// single completion, sampled ones differ. n past the slots is a 400 naming n.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, stream, type Running } from './server-helpers.js';

let srv: Running;
beforeAll(async () => { srv = await startServer(await ensureTestModel({ vocab: 'starcoder' }), { ctx: 1024, slots: 3 }); });
afterAll(async () => { await srv?.close(); });

const body = { input_prefix: 'def add(a, b):\n    return', input_suffix: '\n\nprint(add(1, 2))\n', max_tokens: 12, ignore_eos: true };

describe('infill candidates', () => {
  it('streams n greedy candidates by index, each the single completion, each with its end', async () => {
    const one = await json(srv.port, 'POST', '/v1/infill', { ...body, temperature: 0 });
    expect(one.status).toBe(200);
    const s = await stream(srv.port, '/v1/infill', { ...body, temperature: 0, n: 3 }).end;
    expect(s.how).toBe('done');
    const texts = ['', '', ''];
    const ends: number[] = [];
    let usage: { prompt_tokens: number } | undefined;
    for (const e of s.events) {
      for (const c of e.choices ?? []) {
        texts[c.index] += c.text;
        if (c.finish_reason) ends.push(c.index);
      }
      if (e.usage) usage = e.usage;
    }
    expect(texts).toEqual([one.body.content, one.body.content, one.body.content]);
    expect(ends.sort()).toEqual([0, 1, 2]);
    // One prompt, read once for all three.
    expect(usage!.prompt_tokens).toBe(one.body.usage.prompt_tokens);
  });

  it('answers n sampled candidates whole; they differ', async () => {
    const r = await json(srv.port, 'POST', '/v1/infill', { ...body, temperature: 1, seed: 7, n: 3 });
    expect(r.status).toBe(200);
    expect(r.body.choices.map((c: { index: number }) => c.index)).toEqual([0, 1, 2]);
    expect(r.body.content).toBe(r.body.choices[0].text);
    expect(new Set(r.body.choices.map((c: { text: string }) => c.text)).size).toBeGreaterThan(1);
  });

  it('refuses more candidates than slots, naming n (also streamed)', async () => {
    const r = await json(srv.port, 'POST', '/v1/infill', { ...body, n: 4 });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('n');
    const s = await stream(srv.port, '/v1/infill', { ...body, n: 4 }).end;
    expect(s.error.status).toBe(400);
    expect(s.error.error.param).toBe('n');
  });
});
