// renderTokens: special/control token ids whose text the engine renders into the output text
// (tool-call markers such as Llama 3.1's <|python_tag|>). A tiny model with the Llama 3 tokenizer
// (llama-bpe) plus <|python_tag|> as a control token; a logit bias forces the token under greedy
// sampling, so the same ids come out with and without renderTokens and only the text differs.
//
// llama.cpp's llama-bpe vocab is Llama 3.0's: id 128010 is <|reserved_special_token_5|> (Llama 3.1
// renamed it <|python_tag|>), so the real marker text is added as a control token after the vocab.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../native/lib/addon.js';
import type { EngineClient, RequestEvent } from '../../backend/engine/client.js';
import { createProcessEngineClient } from '../../backend/engine/process-client.js';
import { resolveVocabSpec } from '../../backend/models/vocab.js';
import { loadAddon } from '../../backend/addon/loader.js';
import { toolMarkerTokenIds } from '../../backend/served-model/model-view.js';
import { EngineDriver } from './engine-driver.js';
import { SERVE_ENGINE_TIMEOUTS } from '../helpers/engine-timeouts.js';

const PYTHON_TAG = '<|python_tag|>';
const RESERVED_5 = 128010; // <|reserved_special_token_5|> in Llama 3.0, <|python_tag|> in 3.1

let dir = '';
let model = '';
let eng: EngineDriver;
let tag = -1;
let prompt: number[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-render-tokens-'));
  model = join(dir, 'llama-bpe-python-tag.gguf');
  const made = loadAddon().makeTestModel({
    out: model, vocab: resolveVocabSpec('llama-bpe').path, shape: 'tiny', quant: 'q8_0', seed: 1,
    addedTokens: [{ id: 128256, text: PYTHON_TAG, type: 'control' }],
  });
  expect(made.vocabSize).toBe(128257);
  eng = await EngineDriver.load({ model, ctx: 256, slots: 2, threads: 2 });
  prompt = eng.tokens('Call the weather tool for Paris');
  const ids = Array.from(eng.engine.tokenize(PYTHON_TAG, false, true));
  expect(ids).toEqual([128256]);
  tag = ids[0]!;
});
afterAll(async () => {
  await eng?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Greedy with a bias that makes `token` win at every step. */
const forced = (token: number, extra: Partial<GenerateRequest> = {}) =>
  eng.run({ prompt, maxTokens: 3, sampling: { logitBias: [[token, 100]] }, ...extra });

describe('renderTokens (real engine, llama-bpe tiny model)', () => {
  it('the markers are control tokens: their text is not rendered by default', () => {
    expect(eng.engine.detokenize([tag], false, false)).toBe('');
    expect(eng.engine.detokenize([tag], false, true)).toBe(PYTHON_TAG);
    expect(Array.from(eng.engine.tokenize('<|reserved_special_token_5|>', false, true))).toEqual([RESERVED_5]);
    expect(eng.engine.detokenize([RESERVED_5], false, false)).toBe('');
  });

  it('renders a listed control token into the text; the same ids come out without it', async () => {
    const plain = await forced(tag);
    expect(plain.ids).toEqual([tag, tag, tag]);
    expect(plain.text).toBe('');
    expect(plain.text).not.toContain(PYTHON_TAG);

    const rendered = await forced(tag, { renderTokens: [tag] });
    expect(rendered.ids).toEqual(plain.ids);
    expect(rendered.text).toBe(PYTHON_TAG.repeat(3));
    expect(rendered.done.finish).toBe('length');
    expect(rendered.done.generated).toBe(3);
  });

  it('renders only the listed ids (128010 by id, <|python_tag|> stays hidden when not listed)', async () => {
    const other = await forced(RESERVED_5, { renderTokens: [tag] });
    expect(other.ids).toEqual([RESERVED_5, RESERVED_5, RESERVED_5]);
    expect(other.text).toBe('');

    const byId = await forced(RESERVED_5, { renderTokens: [RESERVED_5] });
    expect(byId.ids).toEqual(other.ids);
    expect(byId.text).toBe('<|reserved_special_token_5|>'.repeat(3));
  });

  it('keeps a listed ordinary token as it is, text and ids', async () => {
    const word = eng.tokens(' weather');
    expect(word).toHaveLength(1);
    const plain = await forced(word[0]!);
    const listed = await forced(word[0]!, { renderTokens: [word[0]!, tag] });
    expect(listed.ids).toEqual(plain.ids);
    expect(listed.text).toBe(' weather weather weather');
    expect(plain.text).toBe(listed.text);
  });

  it('still ends on an end-of-generation token without emitting it, even when listed', async () => {
    const eot = eng.engine.info.eot;
    expect(eot).toBe(128009);
    const r = await forced(eot, { renderTokens: [eot, tag] });
    expect(r.done.finish).toBe('stop');
    expect(r.ids).toEqual([]);
    expect(r.text).toBe('');
    expect(r.done.generated).toBe(0);
  });

  it('refuses bad renderTokens with a clear error and keeps serving', async () => {
    const good = (): GenerateRequest => ({ id: eng.id(), prompt, maxTokens: 1 });
    const vocab = eng.engine.info.vocabSize;
    const cases: Array<[string, unknown, RegExp, ErrorConstructor]> = [
      ['negative id', [-1], /renderTokens\[0\]: token -1 is outside the vocabulary \(0\.\.128256\)/, RangeError],
      ['id at the vocab size', [tag, vocab], /renderTokens\[1\]: token 128257 is outside the vocabulary/, RangeError],
      ['not an array', 128256, /renderTokens must be an array of token ids or an Int32Array/, TypeError],
      ['a string entry', ['<|python_tag|>'], /renderTokens\[0\] must be a token id \(number\)/, TypeError],
      ['a fractional id', [1.5], /renderTokens\[0\] must be an integer token id/, TypeError],
    ];
    for (const [what, value, message, type] of cases) {
      const submit = () => eng.engine.submit({ ...good(), renderTokens: value } as GenerateRequest);
      expect(submit, what).toThrow(message);
      expect(submit, what).toThrow(type);
    }
    expect(eng.engine.snapshot().queued).toBe(0);
    const after = await forced(tag, { renderTokens: [tag] });
    expect(after.text).toBe(PYTHON_TAG.repeat(3));
  });

  it('finds the llama3 marker id the chat route passes (one token with special parsing)', async () => {
    const tokenize = async (t: string) => Array.from(eng.engine.tokenize(t, false, true));
    expect(await toolMarkerTokenIds('llama3', tokenize)).toEqual([tag]);
    // This vocab spells the Mistral and Hermes markers with several tokens: nothing to render.
    expect(await toolMarkerTokenIds('mistral', tokenize)).toEqual([]);
    expect(await toolMarkerTokenIds('hermes', tokenize)).toEqual([]);
    expect(await toolMarkerTokenIds('none', tokenize)).toEqual([]);
  });
});

describe('renderTokens through the engine host process', () => {
  let c: EngineClient;

  beforeAll(async () => {
    c = createProcessEngineClient({ replica: 0, config: { model, slots: 1, ctx: 256, threads: 2 }, ...SERVE_ENGINE_TIMEOUTS, log: () => {} });
    await c.start();
  });
  afterAll(async () => { await c?.close(); });

  async function collect(input: Parameters<EngineClient['generate']>[0]) {
    let text = '';
    const ids: number[] = [];
    let done: Extract<RequestEvent, { type: 'done' }> | null = null;
    for await (const ev of c.generate(input).events) {
      if (ev.type === 'tokens') { text += ev.text; ids.push(...ev.ids); }
      if (ev.type === 'done') { done = ev; text += ev.text; }
    }
    return { text, ids, done: done! };
  }

  it('passes renderTokens to the engine', async () => {
    const base = { prompt, maxTokens: 2, sampling: { logitBias: [[tag, 100]] as Array<[number, number]> } };
    const plain = await collect(base);
    const rendered = await collect({ ...base, renderTokens: [tag] });
    expect(plain.ids).toEqual([tag, tag]);
    expect(rendered.ids).toEqual(plain.ids);
    expect(plain.text).toBe('');
    expect(rendered.text).toBe(PYTHON_TAG.repeat(2));
  });

  it('answers a bad renderTokens with an error for that request, not a dead engine', async () => {
    const bad = await collect({ prompt, maxTokens: 2, renderTokens: 'x' as unknown as number[] });
    expect(bad.done.finish).toBe('error');
    expect(bad.done.engineDied).toBeFalsy();
    expect(bad.done.error).toMatch(/'renderTokens' must be an array of non-negative integer token ids, got "x"/);
    const outside = await collect({ prompt, maxTokens: 2, renderTokens: [999_999] });
    expect(outside.done.finish).toBe('error');
    expect(outside.done.error).toMatch(/renderTokens\[0\]: token 999999 is outside the vocabulary/);
    expect(c.status().state).toBe('ready');
  });
});
