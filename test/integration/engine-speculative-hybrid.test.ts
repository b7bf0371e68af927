// Speculative decoding on a hybrid model (test model `hybrid`: Qwen3.5's architecture, three gated
// delta net layers whose state is recurrent, an attention layer, and an MTP head hand-set as the
// `mtp` shape's). A recurrent state cannot be cut back to an earlier position: llama.cpp keeps each
// sequence's last draftMax + 1 states (n_rs_seq) and rolls back to one where a draft is rejected.
// Greedy output with drafts is the output without, over many rounds with several sequences at
// once; a model that keeps no states takes no drafts.
import { describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { promptText, withEngine } from './engine-driver.js';
import { expectDraftingThroughPartialReuse, expectSameTokensThreeAtOnce } from './speculative-checks.js';

// draftPMin 0: the head drafts at every step, so drafts are verified, and rejected, all the time.
const spec = { draftMax: 4, draftPMin: 0 } as const;
const hybrid = { shape: 'hybrid', logitScale: 4 } as const;

describe('speculative decoding on a hybrid (recurrent) model', () => {
  it('drafts from its MTP head and rolls rejected drafts back: the same greedy tokens over many rounds, three sequences at once', async () => {
    const model = await ensureTestModel(hybrid);
    await withEngine({ model, ctx: 256, slots: 3, threads: 2, speculative: spec }, async (eng) => {
      expect(eng.engine.info.speculative).toMatchObject({ mtp: true, draftMax: 4 });
      const { drafted, accepted } = await expectSameTokensThreeAtOnce(eng, 4);
      // Not vacuous: drafts were accepted, in part, and rejected.
      expect(accepted).toBeGreaterThan(0);
      expect(accepted).toBeLessThan(drafted);
    });
  });

  it('with the KV pool the slots share and n-gram drafts beside the head: the same greedy tokens', async () => {
    const model = await ensureTestModel(hybrid);
    await withEngine({ model, slots: 2, threads: 2, speculative: { ...spec, ngram: true } }, async (eng) => {
      expect(eng.engine.info.kvUnified).toBe(true);
      const { drafted } = await expectSameTokensThreeAtOnce(eng, 2);
      expect(drafted).toBeGreaterThan(0);
    });
  });

  it('a request that shares only part of the slot\'s last prompt keeps drafting, with the same output', async () => {
    const model = await ensureTestModel(hybrid);
    await withEngine({ model, ctx: 256, slots: 1, threads: 2, parkBudgetMiB: 0, speculative: spec }, expectDraftingThroughPartialReuse);
  });

  it('a request that leaves the slot\'s answer a few tokens before its end goes back to the checkpoint, not to a rollback state of another step', async () => {
    // The states kept for rollback are those of the sequence's last decode alone: a cut of the
    // answer's last tokens (fewer than draftMax) must not take one of them.
    const model = await ensureTestModel(hybrid);
    await withEngine({ model, ctx: 256, slots: 1, threads: 2, speculative: spec }, async (eng) => {
      const prompt = eng.tokens(promptText('an answer cut short', 10));
      // Without drafts (draftMax 0) every step decodes one token of it: its last decode keeps no
      // state before that token.
      const first = await eng.run({ prompt, maxTokens: 12, ignoreEos: true, draftMax: 0 });
      for (const back of [2, 3]) {
        const held = [...prompt, ...first.ids.slice(0, -1)];
        const next = [...held.slice(0, held.length - back), ...eng.tokens(' instead')];
        const r = await eng.run({ prompt: next, maxTokens: 8, ignoreEos: true, draftMax: 0 });
        expect(r.admitted!.reused).toBe(prompt.length);
        await withEngine({ model, ctx: 256, slots: 1, threads: 2, speculative: spec }, async (fresh) => {
          expect(r.ids, `${back} tokens back`).toEqual((await fresh.run({ prompt: next, maxTokens: 8, ignoreEos: true, draftMax: 0 })).ids);
        });
        await eng.run({ prompt, maxTokens: 12, ignoreEos: true, draftMax: 0 });  // the slot holds the answer again
      }
    });
  });

  it('without a drafter for every request it keeps no states: a request\'s own n-gram drafts are not taken, the answer is the same', async () => {
    const model = await ensureTestModel(hybrid);
    const text = promptText('again and again', 6);
    const prompt = `${text} ${text} ${text}`;
    let withDrafts: number[] = [];
    await withEngine({ model, ctx: 256, slots: 1, threads: 2, speculative: spec }, async (eng) => {
      withDrafts = (await eng.run({ prompt: eng.tokens(prompt), maxTokens: 24, ignoreEos: true, ngram: true })).ids;
    });
    await withEngine({ model, ctx: 256, slots: 1, threads: 2, speculative: { mtp: 'off' } }, async (eng) => {
      expect(eng.engine.info.speculative.mtp).toBe(false);
      const r = await eng.run({ prompt: eng.tokens(prompt), maxTokens: 24, ignoreEos: true, ngram: true });
      expect(r.done.drafted ?? 0).toBe(0);
      expect(r.ids).toEqual(withDrafts);
    });
  });
});
