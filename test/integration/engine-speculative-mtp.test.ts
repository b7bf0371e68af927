// Speculative decoding from the model's own MTP (NextN) head, through llama.cpp's
// common_speculative: the test model `mtp` (GLM-4.5's architecture, random trunk, a hand-set MTP
// block that predicts by the trunk's embedding path) drafts with it by default, and greedy output
// with its drafts is the output without them, over many rounds with several sequences decoding at
// once, across reused prefixes and a session file (the head's KV follows the target's or starts
// over, never changing the answer). With peaked logits (logitScale 4) the trunk's layers overrule
// the head often enough that acceptance, partial acceptance and rejection all happen; with very
// peaked ones (16) the head is mostly right. `copy-mtp` (hand-set trunk and head that both copy
// the context) is the model whose drafts are right for a reason.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { codeLines, EngineDriver, promptText, type RunResult, withEngine } from './engine-driver.js';
import { expectDraftingThroughPartialReuse, expectSameTokensThreeAtOnce } from './speculative-checks.js';

const off = { draftMax: 0 } as const;
// draftPMin 0: the head drafts at every step, so drafts are verified, and rejected, all the time.
const spec = { draftMax: 4, draftPMin: 0 } as const;
const mixed = { shape: 'mtp', logitScale: 4 } as const;

describe('drafts from the model\'s MTP head', () => {
  it('are on by default for a model with one, and give the same greedy tokens over many rounds, three sequences at once', async () => {
    const model = await ensureTestModel(mixed);
    await withEngine({ model, ctx: 256, slots: 3, threads: 2, speculative: spec }, async (eng) => {
      expect(eng.engine.info.speculative).toEqual({ ngram: false, ngramKind: null, mtp: true, draftModel: null, draftKind: null, draftMax: 4 });
      const { drafted, accepted } = await expectSameTokensThreeAtOnce(eng, 4);
      // Not vacuous: drafts were accepted, and rejected.
      expect(accepted).toBeGreaterThan(0);
      expect(accepted).toBeLessThan(drafted);
      // Acceptance per draft position: never more drafts at a later position, and the positions
      // add up to the totals.
      const t = eng.engine.snapshot().totals;
      expect(t.draftPositions.length).toBeGreaterThan(0);
      expect(t.draftPositions.length).toBeLessThanOrEqual(4);
      expect(t.draftPositions.reduce((n, p) => n + p.drafted, 0)).toBe(t.drafted);
      expect(t.draftPositions.reduce((n, p) => n + p.accepted, 0)).toBe(t.accepted);
      t.draftPositions.forEach((p, i) => {
        expect(p.accepted).toBeLessThanOrEqual(p.drafted);
        if (i > 0) expect(p.drafted).toBeLessThanOrEqual(t.draftPositions[i - 1]!.drafted);
      });
    });
  });

  it('with the KV pool the slots share (no ctx): the same greedy tokens, three at once', async () => {
    const model = await ensureTestModel(mixed);
    await withEngine({ model, slots: 3, threads: 2, speculative: spec }, async (eng) => {
      expect(eng.engine.info.kvUnified).toBe(true);
      const prompts = ['one', 'two', 'three'].map((t, i) => eng.tokens(promptText(t, 8 + 5 * i)));
      const base: RunResult[] = [];
      for (const prompt of prompts) base.push(await eng.run({ prompt, maxTokens: 20, ignoreEos: true, ...off }));
      for (let round = 0; round < 2; round++) {
        const runs = await Promise.all(prompts.map((prompt) => eng.run({ prompt, maxTokens: 20, ignoreEos: true })));
        runs.forEach((r, i) => expect(r.ids, `round ${round}, prompt ${i}`).toEqual(base[i]!.ids));
        expect(runs.reduce((n, r) => n + (r.done.drafted ?? 0), 0)).toBeGreaterThan(0);
      }
    });
  });

  it('a continuation of a slot\'s answer (its prefix reused) goes on as a fresh engine would', async () => {
    const model = await ensureTestModel(mixed);
    await withEngine({ model, ctx: 256, slots: 2, threads: 2, speculative: spec }, async (eng) => {
      const prompt = eng.tokens(promptText('continue', 10));
      const r = await eng.run({ prompt, maxTokens: 16, ignoreEos: true });
      expect(r.done.drafted).toBeGreaterThan(0);
      const next = [...prompt, ...r.ids.slice(0, -1), ...eng.tokens(' and then')];
      const cont = await eng.run({ prompt: next, maxTokens: 12, ignoreEos: true });
      expect(cont.admitted!.reused).toBeGreaterThan(prompt.length);
      await withEngine({ model, ctx: 256, slots: 2, threads: 2, speculative: { mtp: 'off' } }, async (fresh) => {
        expect(fresh.engine.info.speculative.mtp).toBe(false);
        const ref = await fresh.run({ prompt: next, maxTokens: 12, ignoreEos: true });
        expect(ref.done.drafted ?? 0).toBe(0);
        expect(cont.ids).toEqual(ref.ids);
      });
    });
  });

  it('a request that shares only part of the slot\'s last prompt keeps drafting, with the same output', async () => {
    const model = await ensureTestModel(mixed);
    await withEngine({ model, ctx: 256, slots: 1, threads: 2, parkBudgetMiB: 0, speculative: spec }, expectDraftingThroughPartialReuse);
  });

  it('a session file loaded into a fresh engine continues with the same output (the head starts over there)', async () => {
    const model = await ensureTestModel(mixed);
    const dir = mkdtempSync(join(tmpdir(), 'strata-mtp-session-'));
    try {
      await withEngine({ model, ctx: 256, slots: 2, threads: 2, speculative: spec, freeRamFloorMiB: 0 }, async (src) => {
        const prompt = src.tokens(promptText('a kept conversation', 12));
        const first = await src.run({ prompt, maxTokens: 10, ignoreEos: true });
        const followup = [...prompt, ...first.ids, ...src.tokens(' next')];
        await src.engine.saveSession(join(dir, 's.session'), followup, 'mtp#1');
        const expected = await src.run({ prompt: followup, maxTokens: 12, ignoreEos: true, ...off });
        await withEngine({ model, ctx: 256, slots: 2, threads: 2, speculative: spec, freeRamFloorMiB: 0 }, async (fresh) => {
          const loaded = await fresh.engine.loadSession(join(dir, 's.session'), 'mtp#1');
          const r = await fresh.run({ prompt: followup, maxTokens: 12, ignoreEos: true });
          // The slot's KV came from the file: only the tokens after it are read.
          expect(r.admitted!.reused).toBe(loaded.tokens);
          expect(r.done.drafted).toBeGreaterThan(0);
          expect(r.ids).toEqual(expected.ids);
        });
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with very peaked logits the head is mostly right: drafts accepted, several tokens a step', async () => {
    const model = await ensureTestModel({ shape: 'mtp', logitScale: 16 });
    await withEngine({ model, ctx: 512, slots: 2, threads: 2, speculative: { draftMax: 4 } }, async (eng) => {
      const prompt = eng.tokens(promptText('sure', 10));
      const plain = await eng.run({ prompt, maxTokens: 40, ignoreEos: true, ...off });
      const r = await eng.run({ prompt, maxTokens: 40, ignoreEos: true });
      expect(r.ids).toEqual(plain.ids);
      expect(r.done.drafted).toBeGreaterThan(20);
      expect(r.done.accepted!).toBeGreaterThan(r.done.drafted! * 0.3);
      // A step emits 1 + accepted tokens: 40 tokens in fewer steps than 40.
      const steps = eng.stepsOf(r.done.id);
      expect(steps).toBeLessThan(32);
    });
  });

  it('copy-mtp, whose head copies one token ahead of its trunk: where the answer repeats its context nearly every draft is accepted', async () => {
    const model = await ensureTestModel({ shape: 'copy-mtp', vocab: 'llama-spm' });
    await withEngine({ model, ctx: 1024, slots: 1, threads: 2, speculative: { draftMax: 4 } }, async (eng) => {
      const lines = codeLines(10);
      const prompt = eng.tokens(`// file\n${lines.join('\n')}\n\n// again:\n${lines[0]}\n`);
      const plain = await eng.run({ prompt, maxTokens: 60, ignoreEos: true, ...off });
      const r = await eng.run({ prompt, maxTokens: 60, ignoreEos: true });
      expect(r.ids).toEqual(plain.ids);
      expect(r.done.drafted).toBeGreaterThan(40);
      expect(r.done.accepted!).toBeGreaterThan(r.done.drafted! * 0.7);
      // Up to 5 tokens a step: 60 tokens in fewer than half as many steps.
      const steps = eng.stepsOf(r.done.id);
      expect(steps).toBeLessThan(30);
    });
  });

  it('copy-mtp: a request that copies its prefix from another slot drafts with the head\'s context of it, as the first did', async () => {
    const model = await ensureTestModel({ shape: 'copy-mtp', vocab: 'llama-spm' });
    await withEngine({ model, ctx: 1024, slots: 3, threads: 2, parkBudgetMiB: 0, speculative: { draftMax: 4 } }, async (eng) => {
      const lines = codeLines(10);
      const file = `// file\n${lines.join('\n')}\n\n`;
      const first = eng.tokens(`${file}// again:\n${lines[0]}\n`);
      const others = [`// copy:\n${lines[0]}\n`, `// and:\n${lines[0]}\n`].map((end) => eng.tokens(file + end));
      const plain: RunResult[] = [];
      for (const p of others) plain.push(await eng.run({ prompt: p, maxTokens: 40, ignoreEos: true, ...off }));
      // Every slot then holds something else, and one reads the file.
      await Promise.all(['x', 'y', 'z'].map((w) => eng.run({ prompt: eng.tokens(promptText(w, 6)), maxTokens: 4, ignoreEos: true })));
      const a = await eng.run({ prompt: first, maxTokens: 40, ignoreEos: true });
      // Two more with the same file and their own endings, at once: one goes on in that slot, the
      // other copies the file's KV from it and reads only its ending.
      const runs = await Promise.all(others.map((p) => eng.run({ prompt: p, maxTokens: 40, ignoreEos: true })));
      const rate = (r: RunResult) => r.done.accepted! / r.done.drafted!;
      expect(rate(a)).toBeGreaterThan(0.6);
      runs.forEach((r, i) => {
        expect(r.admitted!.reused, `request ${i}: the file reused`).toBeGreaterThan(first.length / 2);
        expect(r.ids, `request ${i}`).toEqual(plain[i]!.ids);
        // Copying needs the file's context: about as accepted as the request that read it (a head
        // that started over at the copied prefix's end: about half).
        expect(rate(r), `request ${i}`).toBeGreaterThan(Math.min(0.7, rate(a) - 0.1));
      });
    });
  });

  it('copy-mtp over per-slot KV: a prompt read in one step with a longer chunk of a lower slot still gives the head its own states', async () => {
    // llama.cpp cuts such a step into ubatches of equal counts per sequence, out of the batch's order.
    const model = await ensureTestModel({ shape: 'copy-mtp', vocab: 'llama-spm' });
    const opts = { model, ctx: 2048, slots: 2, threads: 2, batch: 256, ubatch: 256, speculative: { draftMax: 4 } };
    const lines = codeLines(6);
    const text = `// file\n${lines.join('\n')}\n\n// again:\n${lines[0]}\n`;
    const rate = (r: RunResult) => r.done.accepted! / r.done.drafted!;
    // The short prompt alone, in a fresh engine: its answer and how often the head is right.
    const solo = await withEngine(opts, async (eng) => {
      const plain = await eng.run({ prompt: eng.tokens(text), maxTokens: 40, ignoreEos: true, ...off });
      return { plain, drafted: await eng.run({ prompt: eng.tokens(text), maxTokens: 40, ignoreEos: true }) };
    });
    await withEngine(opts, async (eng) => {
      expect(eng.engine.info.kvUnified).toBe(false);
      const short = eng.tokens(text);
      expect(short.length).toBeLessThan(opts.batch / 2);
      // A long prompt (slot 0) first; the short one once its first chunk is read, so a later step
      // reads the short one whole beside a longer chunk of the long one.
      const long = eng.start({ prompt: eng.tokens(promptText('a long unrelated text', 600)), maxTokens: 2, ignoreEos: true });
      const r = await new Promise<RunResult>((resolve, reject) => {
        eng.when((e) => e.type === 'progress' && e.id === long.id, () => {
          eng.run({ prompt: short, maxTokens: 40, ignoreEos: true }).then(resolve, reject);
        });
      });
      await long.done;
      // Not vacuous: the step that read the short prompt (its first token) read a chunk of the long one.
      const first = eng.batches.find((b) => b.some((e) => e.type === 'tokens' && e.id === r.done.id))!;
      expect(first.some((e) => e.type === 'progress' && e.id === long.id)).toBe(true);
      expect(r.ids).toEqual(solo.plain.ids);
      expect(rate(r)).toBeGreaterThan(rate(solo.drafted) - 0.1);
    });
  });

  it('mtp on: a model without an MTP head fails to load, saying so; off: no drafts', async () => {
    const tiny = await ensureTestModel({});
    await expect(EngineDriver.load({ model: tiny, ctx: 128, slots: 1, threads: 2, speculative: { mtp: 'on' } }))
      .rejects.toThrow(/has no MTP layers/);
    const model = await ensureTestModel(mixed);
    await withEngine({ model, ctx: 128, slots: 1, threads: 2, speculative: { ...spec, mtp: 'off' } }, async (eng) => {
      expect(eng.engine.info.speculative).toEqual({ ngram: false, ngramKind: null, mtp: false, draftModel: null, draftKind: null, draftMax: 0 });
      const r = await eng.run({ prompt: eng.tokens(promptText('plain', 8)), maxTokens: 8, ignoreEos: true });
      expect(r.done.drafted ?? 0).toBe(0);
    });
  });
});
