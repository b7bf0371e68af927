// Speculative decoding on the native engine: greedy output with drafts is the output without
// them, on every vocabulary, solo and batched. The draft model is the target's q4_0 twin (same
// seed): close enough that drafts are often right, different enough that they are often wrong,
// so acceptance, partial acceptance and rejection all happen. Also prompt lookup, the draft
// figures, and the KV a speculative request leaves behind.
import { describe, expect, it } from 'vitest';
import { listVocabs } from '../../backend/models/vocab.js';
import { ensureTestModel } from '../helpers/models.js';
import { codeLines, EngineDriver, promptText, type RunResult, withEngine } from './engine-driver.js';

// Encoder vocabularies (WordPiece) have no place in a text model.
const VOCABS = listVocabs().filter((v) => !['bert-bge', 'nomic-bert-moe'].includes(v));
const GEN = 20;

const off = { draftMax: 0 } as const;

describe.each(VOCABS)('vocabulary %s', (vocab) => {
  it('gives the same greedy tokens with drafts as without, solo and batched with two others', async () => {
    const model = await ensureTestModel({ vocab });
    const draft = await ensureTestModel({ vocab, quant: 'q4_0' });
    await withEngine({ model, ctx: 256, slots: 3, threads: 2, speculative: { draftModel: draft, draftMax: 5, draftPMin: 0 } }, async (eng) => {
      const prompts = ['alpha', 'beta', 'gamma'].map((t) => eng.tokens(promptText(t, 10)));
      const base: RunResult[] = [];
      for (const prompt of prompts) base.push(await eng.run({ prompt, maxTokens: GEN, ignoreEos: true, ...off }));
      const solo = await eng.run({ prompt: prompts[0]!, maxTokens: GEN, ignoreEos: true });
      expect(solo.ids).toEqual(base[0]!.ids);
      expect(solo.text).toBe(base[0]!.text);
      const batched = await Promise.all(prompts.map((prompt) => eng.run({ prompt, maxTokens: GEN, ignoreEos: true })));
      batched.forEach((r, i) => expect(r.ids, `prompt ${i}`).toEqual(base[i]!.ids));
      // Not vacuous: drafts were verified, and without drafts there were none.
      const drafted = [solo, ...batched].reduce((n, r) => n + (r.done.drafted ?? 0), 0);
      expect(drafted).toBeGreaterThan(0);
      expect(base.every((r) => (r.done.drafted ?? 0) === 0)).toBe(true);
      for (const r of [solo, ...batched]) {
        expect(r.done.accepted ?? 0).toBeLessThanOrEqual(r.done.drafted ?? 0);
        expect(r.dones).toHaveLength(1);
      }
    });
  });
});

describe('draft model', () => {
  it('the target as its own draft: every draft token is accepted, several tokens per step', async () => {
    const model = await ensureTestModel({});
    await withEngine({ model, ctx: 256, slots: 2, threads: 2, speculative: { draftModel: model, draftMax: 4, draftPMin: 0 } }, async (eng) => {
      const prompt = eng.tokens(promptText('self', 10));
      const plain = await eng.run({ prompt, maxTokens: 24, ignoreEos: true, ...off });
      const r = await eng.run({ prompt, maxTokens: 24, ignoreEos: true });
      expect(r.ids).toEqual(plain.ids);
      expect(r.done.drafted).toBeGreaterThan(0);
      expect(r.done.accepted).toBe(r.done.drafted);
      // A step emits 1 + accepted tokens: 24 tokens in about 24 / 5 steps.
      const steps = eng.stepsOf(r.done.id);
      expect(steps).toBeLessThan(12);
      const trace = eng.engine.traces();
      expect(trace.requests.find((t) => t.id === r.done.id)?.drafted).toBe(r.done.drafted);
      expect(trace.steps.some((s) => s.draftTokens > 0 && s.acceptedTokens === s.draftTokens)).toBe(true);
      expect(eng.engine.snapshot().totals.accepted).toBeGreaterThanOrEqual(r.done.accepted!);
    });
  });

  it('stop strings, max tokens and the context end where they do without drafts, and the KV holds exactly the answer', async () => {
    const model = await ensureTestModel({});
    const draft = await ensureTestModel({ quant: 'q4_0' });
    await withEngine({ model, ctx: 128, slots: 2, threads: 2, speculative: { draftModel: draft, draftMax: 6, draftPMin: 0 } }, async (eng) => {
      const prompt = eng.tokens(promptText('stops', 10));
      const free = await eng.run({ prompt, maxTokens: 30, ignoreEos: true, ...off });
      const stop = free.text.slice(Math.floor(free.text.length / 2), Math.floor(free.text.length / 2) + 3);
      for (const extra of [{ stop: [stop] }, { maxTokens: 7 }, { maxTokens: 500 }]) {
        const req = { prompt, maxTokens: 30, ignoreEos: true, ...extra };
        const a = await eng.run({ ...req, ...off });
        const b = await eng.run(req);
        expect(b.text).toBe(a.text);
        expect(b.ids).toEqual(a.ids);
        expect(b.done.finish).toBe(a.done.finish);
      }
      // The slot holds the prompt and the answer (rejected drafts left the KV): a continuation
      // reuses all of it and continues as a fresh engine would.
      const r = await eng.run({ prompt, maxTokens: 16, ignoreEos: true });
      const next = [...prompt, ...r.ids.slice(0, -1)];
      const cont = await eng.run({ prompt: next, maxTokens: 8, ignoreEos: true, ...off });
      expect(cont.admitted!.reused).toBe(next.length - 1);
      await withEngine({ model, ctx: 128, slots: 2, threads: 2 }, async (fresh) => {
        const ref = await fresh.run({ prompt: next, maxTokens: 8, ignoreEos: true });
        expect(cont.ids).toEqual(ref.ids);
      });
    });
  });
});

describe('prompt lookup (n-gram)', () => {
  it('drafts from the sequence\'s own tokens and keeps greedy output unchanged', async () => {
    const model = await ensureTestModel({ vocab: 'starcoder' });
    await withEngine({ model, ctx: 512, slots: 2, threads: 2, speculative: { ngram: true, ngramMin: 1, ngramMax: 3, draftMax: 6 } }, async (eng) => {
      const code = 'def add(a, b):\n    return a + b\n\n'.repeat(6) + 'def sub(a, b):\n    return a - b\n\ndef mul(a, b):';
      const prompt = eng.tokens(code);
      const plain = await eng.run({ prompt, maxTokens: 40, ignoreEos: true, ...off });
      const [r, other] = await Promise.all([
        eng.run({ prompt, maxTokens: 40, ignoreEos: true }),
        eng.run({ prompt: eng.tokens(promptText('beside', 12)), maxTokens: 40, ignoreEos: true }),
      ]);
      expect(r.ids).toEqual(plain.ids);
      expect((r.done.drafted ?? 0) + (other.done.drafted ?? 0)).toBeGreaterThan(0);
    });
  });
});

describe('drafts with the other sampling features', () => {
  it('a grammar, n choices and logprobs give the same output with drafts', async () => {
    const model = await ensureTestModel({});
    const draft = await ensureTestModel({ quant: 'q4_0' });
    await withEngine({ model, ctx: 256, slots: 3, threads: 2, speculative: { draftModel: draft, draftMax: 4, draftPMin: 0 } }, async (eng) => {
      const prompt = eng.tokens(promptText('mixed', 10));
      const grammar = eng.engine.buildGrammar({ schemas: { root: JSON.stringify({ type: 'array', items: { type: 'integer', minimum: 0, maximum: 999 }, maxItems: 5 }) } });
      const req = { prompt, maxTokens: 40, grammar, logprobs: 2 };
      const a = await eng.run({ ...req, ...off });
      const b = await eng.run(req);
      expect(b.text).toBe(a.text);
      const lp = (r: RunResult) => r.events.flatMap((e) => (e.type === 'tokens' ? e.logprobs ?? [] : []));
      expect(lp(b)).toEqual(lp(a));
      const n = await eng.run({ prompt, maxTokens: 12, ignoreEos: true, n: 3 });
      const one = await eng.run({ prompt, maxTokens: 12, ignoreEos: true, ...off });
      for (let c = 0; c < 3; c++) {
        const ids = n.events.flatMap((e) => (e.type === 'tokens' && (e.choice ?? 0) === c ? e.ids : []));
        expect(ids, `choice ${c}`).toEqual(one.ids);
      }
    });
  });
});

describe('a model that copies its context (shape copy)', () => {
  it('writes only what followed its last two tokens before; prompt lookup drafts it, accepted, several tokens a step', async () => {
    const model = await ensureTestModel({ shape: 'copy' });
    await withEngine({ model, ctx: 1024, slots: 2, threads: 2, speculative: { ngram: true, draftMax: 8 } }, async (eng) => {
      const lines = codeLines(12);
      const prompt = eng.tokens(`// file\n${lines.join('\n')}\n\n// again:\n${lines[0]}\n`);
      const plain = await eng.run({ prompt, maxTokens: 60, ignoreEos: true, ...off });
      // Every token follows the two before it as somewhere earlier in the context.
      const seen = [...prompt, ...plain.ids];
      const earlier = (i: number) => {
        for (let j = 2; j < i; j++) if (seen[j - 2] === seen[i - 2] && seen[j - 1] === seen[i - 1] && seen[j] === seen[i]) return true;
        return false;
      };
      const copied = plain.ids.filter((_, k) => earlier(prompt.length + k)).length;
      expect(copied).toBeGreaterThanOrEqual(plain.ids.length - 2);
      const r = await eng.run({ prompt, maxTokens: 60, ignoreEos: true });
      expect(r.ids).toEqual(plain.ids);
      expect(r.done.accepted! / r.done.drafted!).toBeGreaterThan(0.8);
      const steps = eng.stepsOf(r.done.id);
      expect(steps).toBeLessThan(20);
    });
  });
});

describe('n-gram drafts per request (GenerateRequest.ngram)', () => {
  it('ngram true drafts on an engine without n-gram drafts, false none on one with them; greedy tokens unchanged', async () => {
    const model = await ensureTestModel({ shape: 'copy' });
    const lines = codeLines(12);
    const text = `// file\n${lines.join('\n')}\n\n// again:\n${lines[0]}\n`;
    for (const engineNgram of [false, true]) {
      await withEngine({ model, ctx: 1024, slots: 2, threads: 2, speculative: { ngram: engineNgram, draftMax: 8 } }, async (eng) => {
        const prompt = eng.tokens(text);
        const plain = await eng.run({ prompt, maxTokens: 40, ignoreEos: true, ...off });
        // On and off side by side (the same steps, each its own say), then the engine's default alone.
        const [on, none] = await Promise.all([
          eng.run({ prompt, maxTokens: 40, ignoreEos: true, ngram: true }),
          eng.run({ prompt, maxTokens: 40, ignoreEos: true, ngram: false }),
        ]);
        const dflt = await eng.run({ prompt, maxTokens: 40, ignoreEos: true });
        const what = `engine ngram ${engineNgram}`;
        for (const r of [on, none, dflt]) expect(r.ids, what).toEqual(plain.ids);
        expect(on.done.accepted! / on.done.drafted!, what).toBeGreaterThan(0.8);
        expect(none.done.drafted ?? 0, what).toBe(0);
        expect((dflt.done.drafted ?? 0) > 0, what).toBe(engineNgram);
      });
    }
  });
});

describe('llama.cpp\'s n-gram drafters (speculative.ngramKind)', () => {
  it.each(['simple', 'map-k', 'map-k4v', 'mod', 'cache'] as const)('%s: the same greedy tokens with its drafts, beside another request and after a shorter one in the slot', async (kind) => {
    const model = await ensureTestModel({ shape: 'copy' });
    await withEngine({ model, ctx: 1024, slots: 2, threads: 2, speculative: { ngram: true, ngramKind: kind, draftMax: 8 } }, async (eng) => {
      expect(eng.engine.info.speculative).toMatchObject({ ngram: true, ngramKind: kind, draftMax: 8 });
      const lines = codeLines(12);
      const long = eng.tokens(`// file\n${lines.join('\n')}\n\n// again:\n${lines.join('\n')}\n\n// once more:\n${lines[0]}\n`);
      const short = eng.tokens(promptText('short', 6));
      const plainLong = await eng.run({ prompt: long, maxTokens: 60, ignoreEos: true, ...off });
      const plainShort = await eng.run({ prompt: short, maxTokens: 20, ignoreEos: true, ...off });
      let drafted = 0;
      let accepted = 0;
      for (let round = 0; round < 2; round++) {
        // The long prompt beside the short one, then each alone (a slot's sequence shrinks and grows).
        const [a, b] = await Promise.all([
          eng.run({ prompt: long, maxTokens: 60, ignoreEos: true }),
          eng.run({ prompt: short, maxTokens: 20, ignoreEos: true }),
        ]);
        const c = await eng.run({ prompt: short, maxTokens: 20, ignoreEos: true });
        const d = await eng.run({ prompt: long, maxTokens: 60, ignoreEos: true });
        for (const [r, plain] of [[a, plainLong], [b, plainShort], [c, plainShort], [d, plainLong]] as const) {
          expect(r.ids, `round ${round}`).toEqual(plain.ids);
          drafted += r.done.drafted ?? 0;
          accepted += r.done.accepted ?? 0;
        }
      }
      // The answer repeats the file: each kind finds drafts there, and most are right.
      expect(drafted).toBeGreaterThan(0);
      expect(accepted).toBeGreaterThan(drafted * 0.5);
    });
  });

  it('an unknown kind is refused, naming the field and the kinds', async () => {
    const model = await ensureTestModel({});
    await expect(EngineDriver.load({ model, ctx: 128, slots: 1, threads: 2, speculative: { ngram: true, ngramKind: 'ngram-map-k' as never } }))
      .rejects.toThrow(/speculative.ngramKind must be 'lookup', 'simple', 'map-k', 'map-k4v', 'mod' or 'cache'/);
  });
});
