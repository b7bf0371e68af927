// The admission window (EngineOptions.admitWindowMs): an idle engine that receives a request
// waits for the rest of a burst before its first step, so requests sent together are read in
// one step; the wait ends as soon as the requests fill every free slot. Without it the first
// request is read alone and the others one step later (real tiny model, step traces). No test
// here depends on how fast the machine is: the order of arrivals is forced with engine events.
import { describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver, promptText } from './engine-driver.js';

const SLOTS = 4;
const WINDOW_MS = 1000;

// Sends SLOTS requests to an idle engine: the first, then the rest either at once (a burst) or
// only after the engine has admitted the first (which a window of 0 does without waiting).
async function burst(admitWindowMs: number, restAfterFirstAdmitted: boolean) {
  const model = await ensureTestModel({});
  const eng = await EngineDriver.load({ model, ctx: 512, slots: SLOTS, batch: 512, threads: 2, traceSteps: 10_000, admitWindowMs });
  try {
    const prompts = Array.from({ length: SLOTS }, (_, i) => eng.tokens(promptText(`burst ${i}`, 20 + 3 * i)));
    eng.engine.traces();
    const firstId = eng.id();
    const admittedFirst = eng.next((e) => e.type === 'admitted' && e.id === firstId, 'the first admission');
    const first = eng.start({ id: firstId, prompt: prompts[0]!, maxTokens: 4, ignoreEos: true });
    if (restAfterFirstAdmitted) await admittedFirst;
    const rest = prompts.slice(1).map((prompt) => eng.start({ prompt, maxTokens: 4, ignoreEos: true }));
    await Promise.all([first.done, ...rest.map((r) => r.done)]);
    const t = eng.engine.traces();
    return { prompts, steps: t.steps, first: t.requests.find((r) => r.id === first.id)!, info: eng.engine.info };
  } finally {
    await eng.close();
  }
}

describe('admission window', () => {
  it('defaults to 8 ms on the CPU', async () => {
    const model = await ensureTestModel({});
    const eng = await EngineDriver.load({ model, ctx: 256, slots: 2, threads: 1 });
    try {
      expect(eng.engine.info.admitWindowMs).toBe(8);
    } finally {
      await eng.close();
    }
  });

  it('refuses a window outside 0..1000 ms, naming it', async () => {
    const model = await ensureTestModel({});
    await expect(EngineDriver.load({ model, ctx: 256, slots: 2, threads: 1, admitWindowMs: 5000 })).rejects.toThrow(/admitWindowMs/);
  });

  it('reads a burst that reaches an idle engine over its window in one step, and stops waiting once every slot is asked for', async () => {
    const { prompts, steps, first, info } = await burst(WINDOW_MS, false);
    expect(info.admitWindowMs).toBe(WINDOW_MS);
    const total = prompts.reduce((n, p) => n + p.length, 0);
    expect(steps[0]!.promptTokens).toBe(total);
    expect(steps[0]!.sequences).toBe(SLOTS);
    // The fourth request ended the wait: a window waited out admits at queued + WINDOW_MS or later.
    expect(first.admitted! - first.queued).toBeLessThan(WINDOW_MS);
  });

  it('without it (0) the first request is read alone', async () => {
    const { prompts, steps } = await burst(0, true);
    expect(steps[0]!.promptTokens).toBe(prompts[0]!.length);
    expect(steps[0]!.sequences).toBe(1);
  });
});
