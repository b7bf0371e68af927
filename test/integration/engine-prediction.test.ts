// Predicted outputs on the native engine: the prediction's tokens are the draft while the answer
// follows them, and again from where the answer rejoins them after a change. Greedy output is the
// output without a prediction on every vocabulary, solo and batched; the counts say how much of
// the prediction the answer followed (accepted) and how much was verified and thrown away (rejected).
import { describe, expect, it } from 'vitest';
import { listVocabs } from '../../backend/models/vocab.js';
import { ensureTestModel } from '../helpers/models.js';
import { codeLines, promptText, type RunResult, withEngine } from './engine-driver.js';

const VOCABS = listVocabs().filter((v) => !['bert-bge', 'nomic-bert-moe'].includes(v));
const GEN = 24;

/** The answer with a change in the middle: two tokens replaced, three dropped, so the draft must rejoin. */
function edited(ids: number[], vocabSize: number): number[] {
  const out = [...ids];
  out[6] = (out[6]! + 1) % vocabSize;
  out[7] = (out[7]! + 7) % vocabSize;
  out.splice(14, 3);
  return out;
}

const accepted = (r: RunResult): number => r.done.predictionAccepted ?? -1;
const rejected = (r: RunResult): number => r.done.predictionRejected ?? -1;

describe.each(VOCABS)('vocabulary %s', (vocab) => {
  it('gives the same greedy tokens with a prediction as without, solo and batched, and counts what it drafted', async () => {
    const model = await ensureTestModel({ vocab });
    await withEngine({ model, ctx: 256, slots: 3, threads: 2 }, async (eng) => {
      const vocabSize = eng.engine.info.vocabSize;
      const prompts = ['alpha', 'beta', 'gamma'].map((t) => eng.tokens(promptText(t, 10)));
      const base: RunResult[] = [];
      for (const prompt of prompts) base.push(await eng.run({ prompt, maxTokens: GEN, ignoreEos: true }));
      expect(base.every((r) => r.done.drafted === 0 && accepted(r) === 0 && rejected(r) === 0)).toBe(true);

      // The exact answer as the prediction: every draft token is accepted.
      const exact = await eng.run({ prompt: prompts[0]!, maxTokens: GEN, ignoreEos: true, prediction: base[0]!.ids });
      expect(exact.ids).toEqual(base[0]!.ids);
      expect(exact.text).toBe(base[0]!.text);
      expect(rejected(exact)).toBe(0);
      // The first token comes from the prompt's logits, and each step adds one past its draft
      // (n-gram guesses may continue a draft: accepted counts them too, predictionAccepted does not).
      expect(accepted(exact)).toBeLessThanOrEqual(exact.done.accepted ?? 0);
      expect(accepted(exact)).toBeGreaterThanOrEqual(GEN - 4);

      // A changed prediction: some of it is accepted, some rejected, the text is the same.
      const solo = await eng.run({ prompt: prompts[0]!, maxTokens: GEN, ignoreEos: true, prediction: edited(base[0]!.ids, vocabSize) });
      expect(solo.ids).toEqual(base[0]!.ids);
      expect(accepted(solo)).toBeGreaterThan(GEN / 2);
      expect(rejected(solo)).toBeGreaterThan(0);
      expect(solo.done.drafted).toBeGreaterThanOrEqual(accepted(solo) + rejected(solo));

      // Batched with two others, one of them without a prediction.
      const batched = await Promise.all(prompts.map((prompt, i) => eng.run({
        prompt, maxTokens: GEN, ignoreEos: true, ...(i < 2 ? { prediction: edited(base[i]!.ids, vocabSize) } : {}),
      })));
      batched.forEach((r, i) => expect(r.ids, `prompt ${i}`).toEqual(base[i]!.ids));
      expect(accepted(batched[0]!) + accepted(batched[1]!)).toBeGreaterThan(GEN);
      expect(accepted(batched[2]!)).toBe(0);
      for (const r of [exact, solo, ...batched]) expect(r.dones).toHaveLength(1);
    });
  });
});

describe('prediction edge cases', () => {
  it('longer than the answer, empty, never matching, with n choices: the text is the text without', async () => {
    const model = await ensureTestModel({});
    await withEngine({ model, ctx: 256, slots: 3, threads: 2 }, async (eng) => {
      const prompt = eng.tokens(promptText('edges', 10));
      const plain = await eng.run({ prompt, maxTokens: GEN, ignoreEos: true });
      const long = await eng.run({ prompt, maxTokens: GEN, ignoreEos: true, prediction: [...plain.ids, ...plain.ids, ...plain.ids] });
      expect(long.ids).toEqual(plain.ids);
      expect(long.done.finish).toBe('length');
      expect(accepted(long)).toBeGreaterThanOrEqual(GEN - 4);
      expect(rejected(long)).toBe(0);

      const empty = await eng.run({ prompt, maxTokens: GEN, ignoreEos: true, prediction: [] });
      expect(empty.ids).toEqual(plain.ids);
      expect(empty.done.drafted).toBe(0);

      // Tokens the answer never writes: drafted once, rejected, and never rejoined.
      const unused = Array.from({ length: 40 }, (_, i) => i + 3).filter((t) => !plain.ids.includes(t));
      const never = await eng.run({ prompt, maxTokens: GEN, ignoreEos: true, prediction: unused });
      expect(never.ids).toEqual(plain.ids);
      expect(accepted(never)).toBe(0);
      expect(rejected(never)).toBeGreaterThan(0);

      const n = await eng.run({ prompt, maxTokens: GEN, ignoreEos: true, n: 2, prediction: plain.ids });
      for (let c = 0; c < 2; c++) {
        const ids = n.events.flatMap((e) => (e.type === 'tokens' && (e.choice ?? 0) === c ? e.ids : []));
        expect(ids, `choice ${c}`).toEqual(plain.ids);
      }
      expect(accepted(n)).toBeGreaterThanOrEqual(2 * (GEN - 4));
    });
  });

  it('draftMax caps the prediction draft per step; 0 turns it off', async () => {
    const model = await ensureTestModel({});
    await withEngine({ model, ctx: 256, slots: 2, threads: 2 }, async (eng) => {
      const prompt = eng.tokens(promptText('caps', 10));
      const plain = await eng.run({ prompt, maxTokens: GEN, ignoreEos: true });
      const capped = await eng.run({ prompt, maxTokens: GEN, ignoreEos: true, prediction: plain.ids, draftMax: 3 });
      expect(capped.ids).toEqual(plain.ids);
      expect(capped.done.drafted).toBeGreaterThan(0);
      // At most 3 drafts + 1 token a step: the answer after its first token takes at least (GEN - 1) / 4 steps.
      const steps = eng.stepsOf(capped.done.id);
      expect(steps).toBeGreaterThanOrEqual(Math.ceil((GEN - 1) / 4) + 1);
      const off = await eng.run({ prompt, maxTokens: GEN, ignoreEos: true, prediction: plain.ids, draftMax: 0 });
      expect(off.ids).toEqual(plain.ids);
      expect(off.done.drafted).toBe(0);
    });
  });

  it('rejects a prediction token outside the vocabulary, naming the field', async () => {
    const model = await ensureTestModel({});
    await withEngine({ model, ctx: 128, slots: 1, threads: 2 }, async (eng) => {
      const prompt = eng.tokens('hello');
      expect(() => eng.engine.submit({ id: 99, prompt, maxTokens: 2, prediction: [eng.engine.info.vocabSize] })).toThrow(/prediction\[0\]/);
    });
  });
});

describe('a model that copies its context (shape copy)', () => {
  it('the answer\'s text as prediction (tokenized apart from its context) drafts nearly all of it; a changed line costs little', async () => {
    const model = await ensureTestModel({ shape: 'copy' });
    await withEngine({ model, ctx: 1024, slots: 2, threads: 2 }, async (eng) => {
      const lines = codeLines(10);
      const prompt = eng.tokens(`// file\n${lines.join('\n')}\n\n// again:\n${lines[0]}\n`);
      const plain = await eng.run({ prompt, maxTokens: 60, ignoreEos: true });
      const exact = await eng.run({ prompt, maxTokens: 60, ignoreEos: true, prediction: eng.tokens(plain.text) });
      expect(exact.ids).toEqual(plain.ids);
      expect(exact.done.accepted).toBeGreaterThan(50);
      // One line of the prediction changed: the draft rejoins after it.
      const cut = plain.text.indexOf('\n') + 1;
      const changed = `${plain.text.slice(0, cut)}  changed = 1;\n${plain.text.slice(plain.text.indexOf('\n', cut) + 1)}`;
      const r = await eng.run({ prompt, maxTokens: 60, ignoreEos: true, prediction: eng.tokens(changed) });
      expect(r.ids).toEqual(plain.ids);
      expect(r.done.accepted).toBeGreaterThan(35);
    });
  });

  it('where the answer leaves the prediction its own n-grams draft (spec.ngram off), and the prediction drafts again once the answer rejoins it', async () => {
    const model = await ensureTestModel({ shape: 'copy' });
    await withEngine({ model, ctx: 1024, slots: 1, threads: 2 }, async (eng) => {
      const prompt = eng.tokens(copyPrompt('total'));
      const plain = await eng.run({ prompt, maxTokens: 60, ignoreEos: true });
      const lines = plain.text.split('\n');
      expect(lines.length).toBeGreaterThan(4);
      // Lines 2 and 3 replaced by text the answer never writes: the answer leaves the prediction there.
      const changed = [lines[0], 'unrelated words stand here', 'and more of them', ...lines.slice(3)].join('\n');
      const r = await eng.run({ prompt, maxTokens: 60, ignoreEos: true, prediction: eng.tokens(changed) });
      expect(r.ids).toEqual(plain.ids);
      expect(rejected(r)).toBeGreaterThan(0);
      // Guesses besides the prediction's tokens were drafted and accepted (no other drafting is on).
      expect(r.done.drafted).toBeGreaterThan(accepted(r) + rejected(r));
      expect(r.done.accepted).toBeGreaterThan(accepted(r));
      // The prediction's lines after the change were drafted again and accepted: more of it than
      // its first line holds.
      expect(accepted(r)).toBeGreaterThan(eng.tokens(`${lines[0]}\n`).length + 4);
    });
  });
});

/** A file of similar lines, then its first line again: the copy model goes on from there. */
function copyPrompt(name: string): string {
  const lines = codeLines(10, name);
  return `// file\n${lines.join('\n')}\n\n// again:\n${lines[0]}\n`;
}
