import { afterEach, describe, expect, it } from 'vitest';
import type { RequestEvent } from '../../backend/engine/client.js';
import { AdmissionQueue } from '../../backend/scheduler/admission-queue.js';
import { PrefixIndex } from '../../backend/scheduler/prefix-index.js';
import { RequestLedger } from '../../backend/scheduler/request-ledger.js';
import type { RequestKind } from '../../contract/metrics.js';
import { Scheduler, SchedulerRefusal, type Job } from '../../backend/scheduler/scheduler.js';
import { FakeEngineClient, type FakeRequest } from '../helpers/fake-engine-client.js';

const schedulers: Scheduler[] = [];
afterEach(() => { for (const s of schedulers.splice(0)) s.close(); });

/** Timers fired by hand: `fire()` runs those due at the fake clock's time. */
class HandTimers {
  private pending: Array<{ fn: () => void; at: number; id: number }> = [];
  private id = 0;
  constructor(private readonly now: () => number) {}
  setTimeout(fn: () => void, ms: number): unknown { this.pending.push({ fn, at: this.now() + ms, id: ++this.id }); return this.id; }
  clearTimeout(h: unknown): void { this.pending = this.pending.filter((t) => t.id !== h); }
  fire(): void {
    const due = this.pending.filter((t) => t.at <= this.now());
    this.pending = this.pending.filter((t) => t.at > this.now());
    for (const t of due) t.fn();
  }
  get count(): number { return this.pending.length; }
}

async function setup(replicas = 1, slots = 2, opts: { now?: () => number; timers?: HandTimers } = {}) {
  const engines = Array.from({ length: replicas }, (_, i) => new FakeEngineClient({ replica: i, slots }));
  for (const e of engines) await e.start();
  const table = new RequestLedger(opts.now ? { now: opts.now } : {});
  const scheduler = new Scheduler(engines, table, { auditMs: 0, ...(opts.now ? { now: opts.now } : {}), ...(opts.timers ? { timers: opts.timers } : {}) });
  schedulers.push(scheduler);
  const submit = (kind: RequestKind, prompt: number[], maxTokens = 4, n?: number): Job => {
    const rec = table.accept(kind, false);
    return scheduler.submit(rec, { prompt, maxTokens, ...(n ? { n } : {}) });
  };
  return { engines, table, scheduler, submit };
}

async function collect(job: Job): Promise<RequestEvent[]> {
  const out: RequestEvent[] = [];
  for await (const ev of job.events) out.push(ev);
  return out;
}

const flush = () => new Promise((r) => setImmediate(r));

describe('AdmissionQueue', () => {
  it('admits higher priority first, FIFO within a priority, and ages waiters', () => {
    let t = 0;
    const q = new AdmissionQueue<{ priority: number; enqueuedAt: number; seq: number; name: string }>(1000, () => t);
    q.push({ priority: 0, enqueuedAt: 0, seq: 0, name: 'chat-old' });
    t = 500;
    q.push({ priority: 2, enqueuedAt: 500, seq: 1, name: 'infill' });
    q.push({ priority: 0, enqueuedAt: 500, seq: 2, name: 'chat-new' });
    expect(q.peek()?.name).toBe('infill');
    expect(q.position(q.toArray()[0]!)).toBe(1);
    // At 2.6 s both chats (scores 2.6 and 2.1) outrank a fresh infill (score 2.0).
    t = 2600;
    q.push({ priority: 2, enqueuedAt: 2600, seq: 3, name: 'infill-2' });
    expect(q.shift()?.name).toBe('infill');
    expect(q.shift()?.name).toBe('chat-old');
    expect(q.shift()?.name).toBe('chat-new');
    expect(q.shift()?.name).toBe('infill-2');
    expect(q.shift()).toBeUndefined();
  });
});

describe('PrefixIndex', () => {
  it('counts leading full blocks of a prompt it has seen, by chained keys', () => {
    const idx = new PrefixIndex(4);
    idx.add([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(idx.cachedTokens([1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0])).toBe(8);
    expect(idx.cachedTokens([1, 2, 3, 4, 5, 6, 7, 0])).toBe(4);
    // Same second block after a different first block: chaining means no match.
    expect(idx.cachedTokens([0, 2, 3, 4, 5, 6, 7, 8])).toBe(0);
    idx.clear();
    expect(idx.cachedTokens([1, 2, 3, 4])).toBe(0);
  });
});

describe('Scheduler', () => {
  it('dispatches only into free slots and admits the waiting request when a slot frees', async () => {
    const { engines, table, submit } = await setup(1, 2);
    const e = engines[0]!;
    const a = submit('chat', [1, 2, 3]);
    const b = submit('chat', [4, 5, 6]);
    const c = submit('chat', [7, 8, 9]);
    expect(e.all.length).toBe(2);
    expect(table.counts()).toEqual({ queued: 1, admitting: 2, running: 0, finishing: 0 });
    const [ra, rb] = e.all as [FakeRequest, FakeRequest];
    ra.admit(0); rb.admit(1);
    await flush();
    expect(table.counts()).toEqual({ queued: 1, admitting: 0, running: 2, finishing: 0 });
    ra.tokens([10], 'x');
    ra.finish('stop');
    const evA = await collect(a);
    expect(evA.map((x) => x.type)).toEqual(['admitted', 'tokens', 'done']);
    expect(e.all.length).toBe(3);
    expect(c.record.state).toBe('admitting');
    expect(a.record.state).toBe('finishing');
    table.end(a.record, 'stop');
    rb.finish('length');
    e.all[2]!.admit(0); e.all[2]!.finish('stop');
    await collect(b); await collect(c);
    table.end(b.record, 'length'); table.end(c.record, 'stop');
    expect(table.liveRecords()).toEqual([]);
    expect(table.totals.invariant_violations).toBe(0);
    expect(table.recent().map((h) => h.finish)).toEqual(['stop', 'length', 'stop']);
  });

  it('a request with n choices holds n slots: it waits for them at the head, and nothing overtakes it', async () => {
    const { engines, table, scheduler, submit } = await setup(1, 3);
    const e = engines[0]!;
    const a = submit('chat', [1], 4);
    const b = submit('chat', [2], 4);
    const wide = submit('chat', [3], 4, 2);    // needs 2 of the 3 slots; 1 is free
    const small = submit('chat', [4], 4);      // would fit, but must not overtake
    expect(e.all.map((r) => r.input.prompt)).toEqual([[1], [2]]);
    expect(wide.record.state).toBe('queued');
    scheduler.audit();
    expect(scheduler.missedDispatches).toBe(0);  // waiting for 2 slots is not a missed dispatch
    e.all[0]!.finish('stop');
    await collect(a);
    // Two slots free now: the wide request goes, with n passed to the engine; the small one waits.
    expect(e.all[2]!.input.prompt).toEqual([3]);
    expect(e.all[2]!.input.n).toBe(2);
    expect(small.record.state).toBe('queued');
    e.all[1]!.finish('stop');
    await collect(b);
    expect(e.all[3]!.input.prompt).toEqual([4]);
    e.all[2]!.finish('stop'); e.all[3]!.finish('stop');
    await collect(wide); await collect(small);
    for (const j of [a, b, wide, small]) table.end(j.record, 'stop');
    expect(table.totals.invariant_violations).toBe(0);
  });

  it('admits infill before chat, and a long-waiting chat before a new infill', async () => {
    let now = 0;
    const { engines, submit } = await setup(1, 1, { now: () => now });
    const e = engines[0]!;
    submit('chat', [1]); // takes the slot
    const chat = submit('chat', [2]);
    const infill = submit('infill', [3]);
    e.all[0]!.finish('stop');
    await flush();
    expect(e.all[1]!.input.prompt).toEqual([3]);
    expect(infill.record.state).toBe('admitting');
    now = 10_000; // the chat has waited 10 s: it outranks a new infill
    const infill2 = submit('infill', [4]);
    e.all[1]!.finish('stop');
    await flush();
    expect(e.all[2]!.input.prompt).toEqual([2]);
    expect(chat.record.state).toBe('admitting');
    expect(infill2.record.state).toBe('queued');
  });

  it('latest wins: a newer request with the same supersede key cancels the queued and the running ones of that key only', async () => {
    const { engines, table, scheduler } = await setup(1, 1);
    const e = engines[0]!;
    const keyed = (prompt: number[], key: string) => scheduler.submit(table.accept('infill', false), { prompt, maxTokens: 4, supersede: { key, holdMs: 0 } });
    const running = keyed([1], 'file:///a.c');
    expect(running.record.state).toBe('admitting');
    const queued = keyed([2], 'file:///a.c');
    // The running one is cancelled in the engine (it ends at its next step); the new one waits for the slot.
    expect(e.all[0]!.cancelled).toBe(true);
    expect(running.record.state).toBe('finishing');
    expect(queued.record.state).toBe('queued');
    const other = keyed([3], 'file:///b.c');
    const last = keyed([4], 'file:///a.c');
    // A queued one leaves at once, without reaching the engine.
    expect(await collect(queued)).toEqual([expect.objectContaining({ type: 'done', finish: 'cancel' })]);
    expect(queued.record.end).toBe('superseded');
    expect((await collect(running)).at(-1)).toMatchObject({ type: 'done', finish: 'cancel' });
    expect(running.record.end).toBe('superseded');
    await flush();
    // The slot went to b.c (queued first), a.c's newest waits; nothing of b.c was touched.
    expect(e.all.map((r) => r.input.prompt)).toEqual([[1], [3]]);
    expect(other.record.end).toBeNull();
    expect(last.record.state).toBe('queued');
    e.all[1]!.finish('stop');
    await flush();
    expect(e.all[2]!.input.prompt).toEqual([4]);
  });

  it('a keystroke burst: a request arriving within holdMs of its key\'s previous one waits holdMs, and only the last of the burst runs', async () => {
    let now = 1000;
    const timers = new HandTimers(() => now);
    const { engines, table, scheduler } = await setup(1, 2, { now: () => now, timers });
    const e = engines[0]!;
    const keyed = (prompt: number[]) => scheduler.submit(table.accept('infill', false), { prompt, maxTokens: 4, supersede: { key: 'doc', holdMs: 200 } });
    const first = keyed([1]);
    expect(first.record.state).toBe('admitting'); // after a pause: at once
    now += 150;
    const second = keyed([2]);
    expect(second.record.state).toBe('queued'); // a slot is free, but it is held
    expect(scheduler.queuedCount()).toBe(1);
    now += 150;
    const third = keyed([3]);
    expect(second.record.end).toBe('superseded');
    now += 199;
    timers.fire();
    expect(third.record.state).toBe('queued');
    now += 1;
    timers.fire();
    expect(third.record.state).toBe('admitting');
    expect(e.all.map((r) => r.input.prompt)).toEqual([[1], [3]]);
    // Without a key, or with holdMs 0, nothing is held.
    now += 10;
    const plain = scheduler.submit(table.accept('infill', false), { prompt: [9], maxTokens: 1 });
    e.all[0]!.finish('cancel');
    await flush();
    expect(plain.record.state).toBe('admitting');
    expect(timers.count).toBe(0);
  });

  it('a held infill neither blocks nor is taken by a request with n choices that the free slots fit', async () => {
    let now = 1000;
    const timers = new HandTimers(() => now);
    const { engines, table, scheduler } = await setup(1, 3, { now: () => now, timers });
    const keyed = (prompt: number[]) => scheduler.submit(table.accept('infill', false), { prompt, maxTokens: 4, supersede: { key: 'doc', holdMs: 200 } });
    keyed([1]);
    now += 50;
    const held = keyed([2]);
    expect(held.record.state).toBe('queued');
    const wide = scheduler.submit(table.accept('chat', false), { prompt: [3], maxTokens: 4, n: 2 });
    expect(wide.record.state).toBe('admitting');
    expect(held.record.state).toBe('queued');
    now += 200;
    timers.fire();
    // Its slots are all taken now (1 + 2 of 3): it waits for the next free one.
    expect(held.record.state).toBe('queued');
    engines[0]!.all[0]!.finish('stop');
    await flush();
    expect(held.record.state).toBe('admitting');
    expect(engines[0]!.all.map((r) => r.input.prompt)).toEqual([[1], [3], [2]]);
  });

  it('a request cancelled while queued leaves at once and the engine never sees it', async () => {
    const { engines, table, submit, scheduler } = await setup(1, 1);
    submit('chat', [1]);
    const waiting = submit('chat', [2]);
    expect(scheduler.queuedCount()).toBe(1);
    waiting.cancel('disconnected');
    expect(scheduler.queuedCount()).toBe(0);
    const ev = await collect(waiting);
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ type: 'done', finish: 'cancel' });
    expect(waiting.record.state).toBe('finishing');
    table.end(waiting.record, 'cancel');
    expect(table.recent().at(-1)).toMatchObject({ finish: 'disconnected', output_tokens: 0, prompt_ms: null });
    expect(engines[0]!.all).toHaveLength(1);
  });

  it('a cancel mid-generation frees the slot for the next request', async () => {
    const { engines, submit } = await setup(1, 1);
    const a = submit('chat', [1]);
    const b = submit('chat', [2]);
    const ra = engines[0]!.all[0]!;
    ra.admit(0); ra.tokens([5], 'a');
    await flush();
    a.cancel('disconnected');
    expect(ra.cancelled).toBe(true);
    expect(a.record.state).toBe('finishing');
    const evA = await collect(a);
    expect(evA.at(-1)).toMatchObject({ type: 'done', finish: 'cancel' });
    expect(a.record.end).toBe('disconnected');
    expect(engines[0]!.all).toHaveLength(2);
    expect(b.record.state).toBe('admitting');
  });

  it('routes to the replica that holds the prompt, else to the less loaded one', async () => {
    const { engines, submit } = await setup(2, 4);
    const long = Array.from({ length: 200 }, (_, i) => i + 1);
    const first = submit('chat', long);
    expect(first.record.replica).toBe(0);
    engines[0]!.all[0]!.finish('stop');
    await collect(first);
    // Replica 1 is idle and replica 0 idle too: the cached prefix decides.
    const again = submit('chat', [...long, 7, 8]);
    expect(again.record.replica).toBe(0);
    // A short unrelated prompt goes to the idle replica (load term).
    const other = submit('chat', [9, 9, 9]);
    expect(other.record.replica).toBe(1);
  });

  it('refuses while loading, fails queued requests when the last engine dies, serves again on a new epoch', async () => {
    const e = new FakeEngineClient({ slots: 1 });
    const table = new RequestLedger();
    const s = new Scheduler([e], table, { auditMs: 0 });
    schedulers.push(s);
    expect(() => s.submit(table.accept('chat', false), { prompt: [1], maxTokens: 1 }))
      .toThrowError(SchedulerRefusal);
    expect(s.unavailableReason()).toMatch(/loading the model/);
    await e.start();
    const running = s.submit(table.accept('chat', false), { prompt: [1], maxTokens: 1 });
    const queued = s.submit(table.accept('chat', false), { prompt: [2], maxTokens: 1 });
    e.all[0]!.admit(0);
    await flush();
    e.die('segfault');
    const [evR, evQ] = await Promise.all([collect(running), collect(queued)]);
    expect(evR.at(-1)).toMatchObject({ type: 'done', finish: 'error', engineDied: true });
    expect(evQ).toEqual([expect.objectContaining({ type: 'done', finish: 'error', engineDied: true })]);
    expect((evQ[0] as { error: string }).error).toMatch(/segfault/);
    expect(() => s.submit(table.accept('chat', false), { prompt: [3], maxTokens: 1 })).toThrowError(/segfault/);
    e.restart();
    const next = s.submit(table.accept('chat', false), { prompt: [3], maxTokens: 1 });
    expect(next.record.epoch).toBe(2);
    expect(s.views()[0]!.indexedBlocks).toBe(0);
  });

  it('two long prompts on two slots and a third request: all three complete, each always in one state', async () => {
    const { engines, table, submit, scheduler } = await setup(1, 2);
    const e = engines[0]!;
    e.autoRun = { tokens: 5, delayMs: 1 };
    const seen = new Map<number, string[]>();
    const unsub = table.onChange((r) => { seen.set(r.id, [...(seen.get(r.id) ?? []), r.state]); });
    const long = (k: number) => Array.from({ length: 3000 }, (_, i) => (i * k) % 50000);
    const jobs = [submit('chat', long(3)), submit('chat', long(7)), submit('chat', [1, 2, 3])];
    const results = await Promise.all(jobs.map(collect));
    for (const [i, ev] of results.entries()) {
      expect(ev.filter((x) => x.type === 'done')).toHaveLength(1);
      expect(ev.at(-1)).toMatchObject({ type: 'done' });
      table.end(jobs[i]!.record, 'stop');
    }
    unsub();
    for (const states of seen.values()) {
      expect(states[0]).toBe('queued');
      expect(states.at(-1)).toBe('ended');
      // Forward only.
      for (let i = 1; i < states.length; i++) expect(RequestLedger.isBefore(states[i - 1] as never, states[i] as never) || states[i - 1] === states[i]).toBe(true);
    }
    expect(scheduler.missedDispatches).toBe(0);
    expect(table.totals.invariant_violations).toBe(0);
    expect(table.liveRecords()).toHaveLength(0);
  });

  it('shutdown ends queued requests at once and cancels running ones', async () => {
    const { engines, submit, scheduler } = await setup(1, 1);
    const a = submit('chat', [1]);
    const b = submit('chat', [2]);
    engines[0]!.all[0]!.admit(0);
    await flush();
    scheduler.shutdown();
    const [evA, evB] = await Promise.all([collect(a), collect(b)]);
    expect(evA.at(-1)).toMatchObject({ type: 'done', finish: 'cancel' });
    expect(evB).toEqual([expect.objectContaining({ type: 'done', finish: 'cancel' })]);
    expect(a.record.end).toBe('shutdown');
    expect(b.record.end).toBe('shutdown');
    expect(await scheduler.idle(1000)).toBe(true);
    expect(() => submit('chat', [3])).toThrowError(/shutting down/);
  });
});
