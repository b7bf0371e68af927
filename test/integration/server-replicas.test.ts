// Two engine replicas (two child processes): requests are routed by cached prompt prefix
// plus load, and a replica that dies costs only its own in-flight request; the other keeps
// serving while the dead one restarts on a new epoch with its prefix index forgotten.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, metrics, startServer, stream, until, type Running } from './server-helpers.js';

let srv: Running;
beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { replicas: 2, slots: 1, ctx: 1024, threads: 1 });
  // The server serves once one replica is up; routing is tested with both (a loaded machine starts them apart).
  await until('both replicas ready', () => metrics(srv.port), (m) => m.engines.every((e: { state: string }) => e.state === 'ready'));
});
afterAll(async () => { await srv?.close(); });

// Long enough for several 64-token routing blocks.
const doc = (topic: string) => `Notes on ${topic}: ${Array.from({ length: 60 }, (_, i) => `${topic} fact ${i}.`).join(' ')}`;

describe('replicas (real engines)', () => {
  it('routes a follow-up to the replica that holds its prefix', async () => {
    const [a, b] = [doc('owls'), doc('ferns')];
    const first = [stream(srv.port, '/v1/completions', { prompt: a, ...greedy(3) }), stream(srv.port, '/v1/completions', { prompt: b, ...greedy(3) })];
    const ids = await Promise.all(first.map((r) => r.id));
    const ends = await Promise.all(first.map((r) => r.end));
    expect(ends.map((e) => e.how)).toEqual(['done', 'done']);
    let m = await metrics(srv.port);
    const replicaOf = (id: number) => m.requests.find((r: { id: number }) => r.id === id).replica as number;
    const [ra, rb] = [replicaOf(ids[0]!), replicaOf(ids[1]!)];
    expect(new Set([ra, rb]).size).toBe(2); // the load term spread them
    // Follow-ups one at a time (both replicas free): the cached prefix decides.
    for (const [prompt, reply, want] of [[b, ends[1]!.text, rb], [a, ends[0]!.text, ra]] as const) {
      const res = await srv.openai.completions.create({ model: 'any', prompt: `${prompt}${reply} And more:`, ...greedy(2) });
      expect(res.usage?.prompt_tokens_details?.cached_tokens ?? 0).toBeGreaterThan(0);
      m = await metrics(srv.port);
      expect(m.requests.at(-1).replica).toBe(want);
    }
  });

  it('a dead replica fails only its own request; the other completes and the server stays up', async () => {
    const runs = [
      stream(srv.port, '/v1/completions', { prompt: 'First story:', temperature: 0, max_tokens: 40, ignore_eos: true }),
      stream(srv.port, '/v1/completions', { prompt: 'Second story:', temperature: 0, max_tokens: 40, ignore_eos: true }),
    ];
    const ids = await Promise.all(runs.map((r) => r.id));
    await Promise.all(runs.map((r) => r.pieces(1)));
    const m = await metrics(srv.port);
    const victimReplica = m.live.requests.find((r: { id: number }) => r.id === ids[0]).replica as number;
    const victim = m.engines.find((e: { replica: number }) => e.replica === victimReplica);
    expect(victim.indexed_blocks).toBeGreaterThan(0);
    process.kill(victim.pid, 'SIGKILL');
    const [dead, alive] = [await runs[0]!.end, await runs[1]!.end];
    expect(dead.how).toBe('error');
    expect(dead.error.code).toBe('engine_unavailable');
    expect(alive.how).toBe('done');
    expect((await json(srv.port, 'GET', '/health')).status).toBe(200);
    const back = await until('the replica to restart', () => metrics(srv.port),
      (x) => x.engines.find((e: { replica: number }) => e.replica === victimReplica).state === 'ready', 60_000);
    const e = back.engines.find((x: { replica: number }) => x.replica === victimReplica);
    expect(e.epoch).toBe(victim.epoch + 1);
    expect(e.indexed_blocks).toBe(0);
    expect(back.totals.invariant_violations).toBe(0);
  });
});
