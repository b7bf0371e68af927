// Speculative decoding with drafter GGUFs that read the model's hidden states (EAGLE-3 heads, DFlash
// block drafters), through llama.cpp's common_speculative: given as the draft model, recognised from
// the file, and greedy output with their drafts is the output without them, over many rounds with
// several sequences decoding at once, across reused prefixes and a session file. The drafters
// (`eagle3`, `dflash`, `dspark` test shapes) are random-weight drafters made for `tiny`; with draftPMin 0 they
// draft at every step, so their drafts are verified, and mostly rejected, all the time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver, promptText, withEngine } from './engine-driver.js';
import { expectDraftingThroughPartialReuse, expectSameTokensThreeAtOnce } from './speculative-checks.js';

const off = { draftMax: 0 } as const;

describe.each([
  { kind: 'eagle3', shape: 'eagle3', draftMax: 4 },
  // DFlash drafts block size - 1 tokens (the test drafter's block is 8) whatever is asked.
  { kind: 'dflash', shape: 'dflash', draftMax: 7 },
  // DSpark: DFlash with a Markov head (no confidence head here, so draftPMin 0, as the tests give all).
  { kind: 'dspark', shape: 'dspark', draftMax: 7 },
] as const)('a $kind drafter given as the draft model', ({ kind, shape, draftMax }) => {
  const spec = (draft: string) => ({ draftModel: draft, draftMax, draftPMin: 0 });

  it('is recognised, drafts, and gives the same greedy tokens over many rounds, three sequences at once', async () => {
    const model = await ensureTestModel({});
    const draft = await ensureTestModel({ shape });
    await withEngine({ model, ctx: 256, slots: 3, threads: 2, speculative: spec(draft) }, async (eng) => {
      expect(eng.engine.info.speculative).toMatchObject({ ngram: false, mtp: false, draftKind: kind, draftMax });
      expect(eng.engine.info.speculative.draftModel).toMatch(kind === 'eagle3' ? /eagle3/i : /dflash/i);
      const { runs, drafted } = await expectSameTokensThreeAtOnce(eng, 3);
      // Not vacuous: every sequence drafted at (nearly) every step.
      expect(drafted).toBeGreaterThan(runs * 8);
      const t = eng.engine.snapshot().totals;
      expect(t.draftPositions.reduce((n, p) => n + p.drafted, 0)).toBe(t.drafted);
    });
  });

  it('a request that shares only part of the slot\'s last prompt (the rest read afresh) keeps drafting, with the same output', async () => {
    const model = await ensureTestModel({});
    const draft = await ensureTestModel({ shape });
    await withEngine({ model, ctx: 256, slots: 1, threads: 2, parkBudgetMiB: 0, speculative: spec(draft) }, expectDraftingThroughPartialReuse);
  });

  it('a continuation of a slot\'s answer and a session file loaded into a fresh engine give the output without drafts', async () => {
    const model = await ensureTestModel({});
    const draft = await ensureTestModel({ shape });
    const dir = mkdtempSync(join(tmpdir(), `strata-${kind}-session-`));
    try {
      await withEngine({ model, ctx: 256, slots: 2, threads: 2, speculative: spec(draft), freeRamFloorMiB: 0 }, async (eng) => {
        const prompt = eng.tokens(promptText('continue', 10));
        const r = await eng.run({ prompt, maxTokens: 16, ignoreEos: true });
        expect(r.done.drafted).toBeGreaterThan(0);
        const next = [...prompt, ...r.ids.slice(0, -1), ...eng.tokens(' and then')];
        await eng.engine.saveSession(join(dir, 's.session'), next, 'drafter#1');
        const cont = await eng.run({ prompt: next, maxTokens: 12, ignoreEos: true });
        expect(cont.admitted!.reused).toBeGreaterThan(prompt.length);
        const ref = await eng.run({ prompt: next, maxTokens: 12, ignoreEos: true, ...off });
        expect(cont.ids).toEqual(ref.ids);
        await withEngine({ model, ctx: 256, slots: 2, threads: 2, speculative: spec(draft), freeRamFloorMiB: 0 }, async (fresh) => {
          const loaded = await fresh.engine.loadSession(join(dir, 's.session'), 'drafter#1');
          const s = await fresh.run({ prompt: next, maxTokens: 12, ignoreEos: true });
          expect(s.admitted!.reused).toBe(loaded.tokens);
          expect(s.done.drafted).toBeGreaterThan(0);
          expect(s.ids).toEqual(ref.ids);
        });
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a DSpark drafter without a confidence head', () => {
  it('with a draft p-min above 0 fails to load, naming the setting that it needs', async () => {
    const model = await ensureTestModel({});
    const dspark = await ensureTestModel({ shape: 'dspark' });
    await expect(EngineDriver.load({ model, ctx: 128, slots: 1, threads: 2, speculative: { draftModel: dspark } }))
      .rejects.toThrow(/DSpark drafter without a confidence head.*--draft-p-min 0 \(speculative.draftPMin\)/);
  });
});

describe('a drafter made for another model', () => {
  it('fails to load with a message naming what does not match, and the model alone still loads', async () => {
    // The mtp shape is GLM-4.5's architecture, whose graph does not give the layers' inputs.
    const glm = await ensureTestModel({ shape: 'mtp' });
    const eagle3 = await ensureTestModel({ shape: 'eagle3' });
    await expect(EngineDriver.load({ model: glm, ctx: 128, slots: 1, threads: 2, speculative: { draftModel: eagle3 } }))
      .rejects.toThrow(/EAGLE-3 drafter.*not for 'glm4moe'/);
    // copy: a llama model of another width (256) and two layers: the drafter reads layers 1 to 3.
    const copy = await ensureTestModel({ shape: 'copy' });
    await expect(EngineDriver.load({ model: copy, ctx: 128, slots: 1, threads: 2, speculative: { draftModel: eagle3 } }))
      .rejects.toThrow(/reading layer 2; the model has 2 layers/);
    await withEngine({ model: copy, ctx: 128, slots: 1, threads: 2 }, async (eng) => {
      const r = await eng.run({ prompt: eng.tokens(promptText('still', 6)), maxTokens: 4, ignoreEos: true });
      expect(r.ids).toHaveLength(4);
    });
  });
});
