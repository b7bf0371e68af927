// Robustness on a real engine: many concurrent clients get only their own text (canaries
// compared with solo greedy runs); two long prompts on two slots plus a third request all
// complete while /metrics never loses a waiting client (the reference's "running 0 / queued 0
// / client still waiting" hang); a disconnect frees its slot at once; a killed engine ends
// its stream with an error promptly and the next request runs on a new epoch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, metrics, startServer, stream, until, type Running } from './server-helpers.js';

let srv: Running;

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { slots: 2, ctx: 2048, batch: 32 });
});
afterAll(async () => { await srv?.close(); });

const words = ['apple', 'river', 'copper', 'violet', 'thunder', 'maple'];

describe('robustness (real engine)', () => {
  it('canary interleaving: concurrent clients each get exactly their solo greedy text', async () => {
    const prompts = words.map((w, i) => `Canary ${i}: the secret word is ${w}. Repeat the word ${w}`);
    const solo: string[] = [];
    for (const p of prompts) {
      const r = await srv.openai.completions.create({ model: 'any', prompt: p, ...greedy(4) });
      solo.push(r.choices[0]!.text);
    }
    // Distinct prompts should give (mostly) distinct texts, or the check proves little.
    expect(new Set(solo).size).toBeGreaterThan(prompts.length / 2);
    const runs = prompts.map((p) => stream(srv.port, '/v1/completions', { prompt: p, ...greedy(4) }));
    const ends = await Promise.all(runs.map((r) => r.end));
    ends.forEach((e, i) => {
      expect(e.how).toBe('done');
      expect(e.text).toBe(solo[i]);
    });
    const m = await metrics(srv.port);
    expect(m.totals.invariant_violations).toBe(0);
    expect(m.stale_frames).toBe(0);
  });

  it('two long prompts on two slots and a third request: all complete, no waiting client is ever in no state', async () => {
    const long = (seed: string) => Array.from({ length: 100 }, (_, i) => `${seed}${i}`).join(' ');
    const outstanding = new Map<number, boolean>(); // server id -> still waiting
    const runs = [
      stream(srv.port, '/v1/completions', { prompt: long('alpha'), ...greedy(4) }),
      stream(srv.port, '/v1/completions', { prompt: long('beta'), ...greedy(4) }),
      stream(srv.port, '/v1/completions', { prompt: 'Short one:', ...greedy(4) }),
    ];
    for (const r of runs) {
      void r.id.then((id) => { outstanding.set(id, true); void r.end.then(() => outstanding.set(id, false)); });
    }
    let polls = 0;
    let done = false;
    const all = Promise.all(runs.map((r) => r.end)).finally(() => { done = true; });
    while (!done) {
      const before = new Set([...outstanding].filter(([, w]) => w).map(([id]) => id));
      const m = await metrics(srv.port);
      const after = new Set([...outstanding].filter(([, w]) => w).map(([id]) => id));
      const live = new Map<number, string>(m.live.requests.map((r: { id: number; state: string }) => [r.id, r.state]));
      for (const id of before) {
        if (!after.has(id)) continue; // finished during the poll
        expect(['queued', 'admitting', 'running', 'finishing']).toContain(live.get(id));
      }
      const c = m.live;
      expect(c.queued + c.admitting + c.running + c.finishing).toBe(m.live.requests.length);
      polls++;
      await new Promise((r) => setTimeout(r, 20));
    }
    const ends = await all;
    for (const e of ends) expect(e.how).toBe('done');
    expect(polls).toBeGreaterThan(0);
    // Never more requests on the engine than slots: the three [dispatched, engine done]
    // intervals never overlap three deep (so the third waited in the queue for a slot).
    const traces = (await json(srv.port, 'GET', '/v1/traces')).body.requests as Array<{ id: number; accepted: string; marks: { dispatched: number; engine_done: number } }>;
    const ids = await Promise.all(runs.map((r) => r.id));
    const spans = ids.map((id) => {
      const t = traces.find((x) => x.id === id)!;
      const at = Date.parse(t.accepted);
      return [at + t.marks.dispatched, at + t.marks.engine_done] as const;
    });
    const overlapAll = Math.max(...spans.map((s) => s[0])) < Math.min(...spans.map((s) => s[1]));
    expect(overlapAll).toBe(false);
    const m = await metrics(srv.port);
    expect(m.live).toMatchObject({ queued: 0, admitting: 0, running: 0, finishing: 0 });
    expect(m.missed_dispatches).toBe(0);
  });

  it('a client that disconnects mid-stream frees its slot at once', async () => {
    const run = stream(srv.port, '/v1/completions', { prompt: 'Tell a very long story', temperature: 0, max_tokens: 1500, ignore_eos: true });
    const id = await run.id;
    await run.pieces(2);
    run.abort();
    const m = await until('the slot to be free', () => metrics(srv.port),
      (x) => x.live.running === 0 && x.live.finishing === 0 && x.live.slots.every((s: { state: string }) => s.state === 'idle'), 10_000);
    const row = m.requests.find((r: { id: number }) => r.id === id);
    expect(row.finish).toBe('disconnected');
    expect(row.output_tokens).toBeLessThan(1500);
  });

  it('killing the engine mid-stream ends that stream with an error promptly; the next request runs on a new epoch', async () => {
    const before = await metrics(srv.port);
    const pid = before.engines[0].pid as number;
    const epoch = before.engines[0].epoch as number;
    const run = stream(srv.port, '/v1/completions', { prompt: 'Count to one thousand:', temperature: 0, max_tokens: 1500, ignore_eos: true });
    await run.pieces(2);
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    const end = await run.end;
    expect(Date.now() - killedAt).toBeLessThan(5000);
    expect(end.how).toBe('error');
    expect(end.error.code).toBe('engine_unavailable');
    await until('the engine to be back', () => json(srv.port, 'GET', '/health'), (h) => h.status === 200, 60_000);
    const res = await srv.openai.completions.create({ model: 'any', prompt: 'Hello again', ...greedy(3) });
    expect(res.choices[0]!.text.length).toBeGreaterThan(0);
    const after = await metrics(srv.port);
    expect(after.engines[0].epoch).toBe(epoch + 1);
    expect(after.engines[0].restarts).toBeGreaterThanOrEqual(1);
    expect(after.engines[0].pid).not.toBe(pid);
    expect(after.requests.at(-1).epoch).toBe(epoch + 1);
    expect(after.totals.invariant_violations).toBe(0);
  });
});
