// Background work yields to interactive work across the server's models (scheduler/interactive-gate.ts):
// an embedding request waits while a chat is queued or running on any model, runs at once when
// none is, and runs anyway once it has waited the gate's longest wait.
import { afterEach, describe, expect, it } from 'vitest';
import { InteractiveGate } from '../../backend/scheduler/interactive-gate.js';
import { RequestLedger } from '../../backend/scheduler/request-ledger.js';
import { Scheduler, type Job } from '../../backend/scheduler/scheduler.js';
import type { RequestKind } from '../../contract/metrics.js';
import { FakeEngineClient } from '../helpers/fake-engine-client.js';

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
}

/** Two models of one server: a chat model and an embedding model, one gate. */
async function setup(maxWaitMs = 2000, slots = 1) {
  let t = 1000;
  const now = (): number => t;
  const timers = new HandTimers(now);
  const gate = new InteractiveGate(maxWaitMs);
  const model = async () => {
    const engine = new FakeEngineClient({ slots });
    await engine.start();
    const ledger = new RequestLedger({ now });
    const scheduler = new Scheduler([engine], ledger, { auditMs: 0, now, timers, gate });
    schedulers.push(scheduler);
    const submit = (kind: RequestKind): Job => kind === 'embedding'
      ? scheduler.submit(ledger.accept(kind, false), { prompt: [1, 2, 3], maxTokens: 0, embed: { inputs: [[1, 2, 3]] } })
      : scheduler.submit(ledger.accept(kind, true), { prompt: [1, 2, 3], maxTokens: 4 });
    return { engine, scheduler, submit };
  };
  return { chat: await model(), embed: await model(), gate, timers, advance: (ms: number) => { t += ms; } };
}

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('background requests yield to interactive ones', () => {
  it('an embedding request runs at once when nothing interactive is queued or running', async () => {
    const { embed, gate } = await setup();
    expect(gate.busy).toBe(false);
    const job = embed.submit('embedding');
    expect(embed.engine.embeds).toHaveLength(1);
    expect(job.record.state).not.toBe('queued');
  });

  it('an embedding request arriving while a chat streams on another model waits until the chat ends', async () => {
    const { chat, embed, gate } = await setup();
    const c = chat.submit('chat');
    const running = chat.engine.all[0]!;
    running.admit();
    running.tokens([100], 'a');
    expect(gate.count).toBe(1);
    const job = embed.submit('embedding');
    expect(embed.engine.embeds).toHaveLength(0);
    expect(job.record.state).toBe('queued');
    expect(embed.scheduler.queuedCount()).toBe(1);
    running.tokens([101], 'b');
    await flush();
    expect(embed.engine.embeds).toHaveLength(0);
    running.finish('stop');
    for await (const _ of c.events) { /* drain the chat */ }
    await flush();
    expect(gate.busy).toBe(false);
    expect(embed.engine.embeds).toHaveLength(1);
    expect(embed.scheduler.queuedCount()).toBe(0);
  });

  it('a queued interactive request holds background work too, and its cancel releases it', async () => {
    const { chat, embed, gate } = await setup(2000, 1);
    chat.submit('infill');
    const queued = chat.submit('next_edit'); // the one slot is taken: it waits
    expect(chat.scheduler.queuedCount()).toBe(1);
    chat.engine.all[0]!.finish('stop');
    await flush();
    expect(gate.count).toBe(1); // next_edit now runs
    embed.submit('embedding');
    expect(embed.engine.embeds).toHaveLength(0);
    queued.cancel();
    await flush();
    expect(gate.busy).toBe(false);
    expect(embed.engine.embeds).toHaveLength(1);
  });

  it('an interactive request on the same model passes the held embedding', async () => {
    const { chat, embed } = await setup();
    chat.submit('chat');
    embed.submit('embedding');
    expect(embed.engine.embeds).toHaveLength(0);
    // A completion on the same (second) model: interactive, dispatched past the held embedding.
    embed.submit('completion');
    expect(embed.engine.all).toHaveLength(1);
    expect(embed.engine.embeds).toHaveLength(0);
  });

  it('a background request runs anyway once it has waited the longest wait', async () => {
    const { chat, embed, timers, advance } = await setup(2000);
    chat.submit('chat');
    embed.submit('embedding');
    advance(1999);
    timers.fire();
    expect(embed.engine.embeds).toHaveLength(0);
    advance(1);
    timers.fire();
    expect(embed.engine.embeds).toHaveLength(1);
    expect(chat.engine.live.size).toBe(1); // the chat still runs
  });

  it('a longest wait of 0 never holds', async () => {
    const { chat, embed } = await setup(0);
    chat.submit('chat');
    embed.submit('embedding');
    expect(embed.engine.embeds).toHaveLength(1);
  });
});
