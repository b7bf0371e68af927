// An exception on the engine thread (here a std::bad_alloc forced by the test hook
// STRATA_TEST_ENGINE_THROW) no longer aborts the process: every request fails with the reason,
// the engine closes and says why (onFatal); through the engine host, the process exits and the
// client restarts it on a new epoch, which serves again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../native/lib/addon.js';
import { loadAddon } from '../../backend/addon/loader.js';
import type { EngineStatus, RequestEvent } from '../../backend/engine/client.js';
import { createProcessEngineClient } from '../../backend/engine/process-client.js';
import { ensureTestModel } from '../helpers/models.js';
import { SERVE_ENGINE_TIMEOUTS } from '../helpers/engine-timeouts.js';

const HOOK = 'STRATA_TEST_ENGINE_THROW';
const REASON = /out of memory on the engine thread \(std::bad_alloc\)/;
let model = '';

beforeAll(async () => { model = await ensureTestModel({}); });
afterAll(() => { delete process.env[HOOK]; });

describe('an exception on the engine thread', () => {
  it('fails the requests with the reason and closes the engine (in process)', async () => {
    const events: EngineEvent[] = [];
    let done!: (e: EngineEvent) => void;
    const finished = new Promise<EngineEvent>((r) => { done = r; });
    let told!: (reason: string) => void;
    const fatal = new Promise<string>((r) => { told = r; });
    process.env[HOOK] = 'bad_alloc';
    const engine = await loadAddon().Engine.load({
      model, slots: 2, threads: 2,
      onEvents: (evs) => { events.push(...evs); for (const e of evs) if (e.type === 'done') done(e); },
      onFatal: (reason) => told(reason),
    });
    delete process.env[HOOK];
    engine.submit({ id: 1, prompt: Array.from(engine.tokenize('hello there', true, false)), maxTokens: 4 });
    const end = await finished;
    expect(end).toMatchObject({ type: 'done', id: 1, finish: 'error' });
    expect((end as { error?: string }).error).toMatch(REASON);
    expect(await fatal).toMatch(REASON);
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    expect(() => engine.submit({ id: 2, prompt: [1, 2], maxTokens: 1 })).toThrow(/engine is closed/);
    await engine.close();
  });

  it('through the engine host: the request gets the reason, the host exits, a new epoch serves', async () => {
    const logs: string[] = [];
    process.env[HOOK] = 'bad_alloc';
    const client = createProcessEngineClient({
      replica: 0, config: { model, slots: 2, threads: 2 }, restart: { minDelayMs: 50, maxDelayMs: 200 }, ...SERVE_ENGINE_TIMEOUTS,
      log: (line) => logs.push(line),
    });
    try {
      await client.start();
      delete process.env[HOOK]; // the restarted host runs without the hook
      const back = new Promise<EngineStatus>((resolve) => {
        const off = client.onStatus((s) => { if (s.state === 'ready' && s.epoch === 2) { off(); resolve(s); } });
      });
      const first: RequestEvent[] = [];
      for await (const ev of client.generate({ prompt: await client.tokenize('hello there', true), maxTokens: 4 }).events) first.push(ev);
      expect(first.at(-1)).toMatchObject({ type: 'done', finish: 'error' });
      expect((first.at(-1) as { error?: string }).error).toMatch(REASON);
      await back;
      expect(client.status().lastError).toMatch(REASON);
      const again: RequestEvent[] = [];
      for await (const ev of client.generate({ prompt: await client.tokenize('hello again', true), maxTokens: 2, ignoreEos: true }).events) again.push(ev);
      expect(again.at(-1)).toMatchObject({ type: 'done', finish: 'length' });
    } finally {
      delete process.env[HOOK];
      await client.close();
    }
  }, 120_000);
});
