// Keystroke bursts on the real server and engine (tiny generated FIM models): a newer infill
// with the same supersede_key replaces the older one (queued: at once; running: at the next
// step), a burst is held so superseded keystrokes cost no prompt work, and in SPM order a
// keystroke reads only what was typed while PSM reads the suffix again; the completion for the
// final cursor position is the same as a cold request's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, metrics, startServer, stream, until, type Running } from './server-helpers.js';

const open: Running[] = [];
afterAll(async () => { await Promise.all(open.map((s) => s.close())); });

async function server(vocab: string, over: Parameters<typeof startServer>[1] = {}): Promise<Running> {
  const s = await startServer(await ensureTestModel({ vocab }), { ctx: 1024, batch: 512, ...over });
  open.push(s);
  return s;
}

// A small source file; the cursor sits at the end of `res`, in the middle of it.
const before = Array.from({ length: 12 }, (_, i) => `    total_${i} = compute(value_${i}, ${i})`).join('\n');
const after = `\n${Array.from({ length: 10 }, (_, i) => `    check(total_${i}, limit_${i})`).join('\n')}\n    return total\n`;
const at = (typed: string) => ({ input_prefix: `${before}\n    res${typed}`, input_suffix: after, ...greedy(4) });

/** Prompt tokens a keystroke read: evaluated minus taken from the cache. */
const read = (b: { tokens_evaluated: number; tokens_cached: number }) => b.tokens_evaluated - b.tokens_cached;

describe('infill order and the KV a keystroke keeps', () => {
  let spm: Running;
  let psm: Running;
  let cold: Running;
  beforeAll(async () => {
    [spm, psm, cold] = await Promise.all([server('starcoder'), server('starcoder', { fimOrder: 'psm' }), server('starcoder')]);
  });

  it('SPM (auto for StarCoder): a keystroke reads only the typed tokens; PSM reads the cursor line and the suffix again', async () => {
    const keys = ['', 'u', 'ul', 'ult'];
    const readSpm: number[] = [];
    const readPsm: number[] = [];
    for (const k of keys) {
      const a = await json(spm.port, 'POST', '/v1/infill', at(k));
      const b = await json(psm.port, 'POST', '/v1/infill', at(k));
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(b.status, JSON.stringify(b.body)).toBe(200);
      readSpm.push(read(a.body));
      readPsm.push(read(b.body));
    }
    const suffixTokens = (await json(spm.port, 'POST', '/v1/tokenize', { content: after })).body.tokens.length;
    for (let i = 1; i < keys.length; i++) {
      expect(readSpm[i], `SPM keystroke ${i}`).toBeLessThanOrEqual(3);
      expect(readPsm[i], `PSM keystroke ${i}`).toBeGreaterThan(suffixTokens);
    }
  });

  it('the completion at the final cursor position is the same as a cold request\'s', async () => {
    const warm = await json(spm.port, 'POST', '/v1/infill', at('ult = '));
    expect(warm.body.tokens_cached).toBeGreaterThan(0);
    const c = await json(cold.port, 'POST', '/v1/infill', at('ult = '));
    expect(c.body.tokens_cached).toBe(0);
    expect(warm.body.content).toBe(c.body.content);
  });
});

describe('supersede_key: latest wins', () => {
  let one: Running;
  beforeAll(async () => { one = await server('starcoder', { slots: 1, infillDelayMs: 0 }); });

  it('a running infill is cancelled by a newer one with its key (409 superseded, streamed: an error event)', async () => {
    const first = stream(one.port, '/v1/infill', { ...at(''), max_tokens: 400, ignore_eos: true, supersede_key: 'file:///a.py' });
    await first.pieces(1);
    const second = await json(one.port, 'POST', '/v1/infill', { ...at('u'), supersede_key: 'file:///a.py' });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const end = await first.end;
    expect(end.how).toBe('error');
    expect(end.error).toMatchObject({ code: 'superseded', param: 'supersede_key' });
    const m = await metrics(one.port);
    expect(m.totals.by_finish.superseded).toBe(1);
  });

  it('a queued infill leaves at once with 409 when a newer one with its key arrives', async () => {
    const occupant = stream(one.port, '/v1/completions', { prompt: 'hold the slot', max_tokens: 400, ignore_eos: true, temperature: 0 });
    await occupant.pieces(1);
    const queued = json(one.port, 'POST', '/v1/infill', { ...at('x'), supersede_key: 'doc' });
    await until('the infill to queue', () => metrics(one.port), (m) => m.live.queued === 1);
    const newer = json(one.port, 'POST', '/v1/infill', { ...at('xy'), supersede_key: 'doc' });
    const q = await queued;
    expect(q.status).toBe(409);
    expect(q.body.error).toMatchObject({ code: 'superseded', param: 'supersede_key' });
    occupant.abort();
    expect((await newer).status).toBe(200);
  });
});

describe('infill admission delay', () => {
  const DELAY = 5000;
  let held: Running;
  beforeAll(async () => { held = await server('starcoder', { infillDelayMs: DELAY }); });

  it('a burst\'s superseded keystrokes never reach the engine; the last one runs once the delay has passed', async () => {
    const computed = async () => (await metrics(held.port)).totals.prompt_tokens_computed as number;
    // The first of a burst goes at once (nothing of its key arrived just before).
    const a = await json(held.port, 'POST', '/v1/infill', { ...at(''), supersede_key: 'doc' });
    expect(a.status).toBe(200);
    const base = await computed();
    // The next ones arrive within the delay: each waits, and the one after replaces it.
    const b = json(held.port, 'POST', '/v1/infill', { ...at('u'), supersede_key: 'doc' });
    await until('the keystroke to be held', () => metrics(held.port), (m) => m.live.queued === 1);
    const t0 = Date.now();
    const c = json(held.port, 'POST', '/v1/infill', { ...at('ul'), supersede_key: 'doc' });
    const rb = await b;
    expect(rb.status).toBe(409);
    expect(rb.body.error.code).toBe('superseded');
    expect(await computed()).toBe(base);
    // Another key is not held, and does not release the held one.
    const other = await json(held.port, 'POST', '/v1/infill', { ...at(''), supersede_key: 'other-doc' });
    expect(other.status).toBe(200);
    expect((await metrics(held.port)).live.queued).toBe(1);
    const rc = await c;
    expect(rc.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(DELAY - 50);
    expect(rc.body.content).toBe((await json(held.port, 'POST', '/v1/infill', at('ul'))).body.content);
  });
});
