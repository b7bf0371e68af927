// The test-model generator (makeTestModel / strata make-test-model): deterministic per seed,
// real tokenizers with their FIM tokens, the shapes it promises, clear errors that leave no
// file behind, and, through the real Engine, models whose greedy output depends on the prompt.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAddon } from '../../backend/addon/loader.js';
import { readGgufHeader } from '../../backend/models/gguf.js';
import { modelIdentity } from '../../backend/models/identity.js';
import { generateModel, standInPath } from '../../backend/models/stand-in.js';
import { listVocabs, resolveVocab } from '../../backend/models/vocab.js';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver } from './engine-driver.js';

let dir = '';
beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'strata-test-model-')); });
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('generation', () => {
  it('is deterministic per seed, and different seeds give different weights', async () => {
    const a = generateModel(join(dir, 'a.gguf'), { vocab: 'starcoder', shape: 'tiny', quant: 'q8_0', seed: 7 });
    const b = generateModel(join(dir, 'b.gguf'), { vocab: 'starcoder', shape: 'tiny', quant: 'q8_0', seed: 7 });
    const c = generateModel(join(dir, 'c.gguf'), { vocab: 'starcoder', shape: 'tiny', quant: 'q8_0', seed: 8 });
    expect(sha(a.path)).toBe(sha(b.path));
    expect(sha(a.path)).not.toBe(sha(c.path));
    expect(c.bytes).toBe(a.bytes);
    // Same shapes, different data: the identity tells them apart, and follows content, not name.
    expect(await modelIdentity(a.path)).toBe(await modelIdentity(b.path));
    expect(await modelIdentity(a.path)).not.toBe(await modelIdentity(c.path));
    expect(await modelIdentity(a.path)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(readdirSync(dir).sort()).toEqual(['a.gguf', 'b.gguf', 'c.gguf']);
  });

  it('writes a llama GGUF with the tiny shape, the vocab\'s tokenizer and FIM ids (starcoder)', async () => {
    const r = generateModel(join(dir, 'fim.gguf'), { vocab: 'starcoder', shape: 'tiny', quant: 'f16', seed: 1 });
    expect(r.fim).toEqual({ prefix: 1, suffix: 3, middle: 2 });
    expect(r.vocabSize).toBe(49152);
    const h = await readGgufHeader(r.path);
    expect(h.fileSize).toBe(r.bytes);
    expect(h.metadata.get('general.architecture')).toBe('llama');
    expect(h.metadata.get('llama.embedding_length')).toBe(128);
    expect(h.metadata.get('llama.attention.head_count_kv')).toBe(2);
    expect(h.metadata.get('llama.context_length')).toBe(4096);
    expect(h.metadata.get('tokenizer.ggml.pre')).toBe('starcoder');
    expect(h.metadata.get('tokenizer.ggml.tokens')).toEqual({ arrayOf: 'string', length: 49152 });
    const params = h.tensors.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
    expect(params).toBe(r.params);
    const types = new Map(h.tensors.map((t) => [t.name, t.type]));
    expect(types.get('blk.0.attn_q.weight')).toBe(1);    // GGML_TYPE_F16
    expect(types.get('blk.0.attn_norm.weight')).toBe(0); // norms stay F32
  });

  it('has no FIM ids for a vocab without FIM tokens (qwen2)', () => {
    const r = generateModel(join(dir, 'nofim.gguf'), { vocab: 'qwen2', shape: 'tiny', quant: 'q4_0', seed: 1 });
    expect(r.fim).toBeNull();
    expect(r.vocabSize).toBe(151936);
  });

  it('gives qwen2.5-coder Qwen2.5\'s added tokens at their real ids, so FIM works like the real coder model', async () => {
    const r = generateModel(join(dir, 'coder.gguf'), { vocab: 'qwen2.5-coder', shape: 'tiny', quant: 'q8_0', seed: 1 });
    expect(r.fim).toEqual({ prefix: 151659, suffix: 151661, middle: 151660 });
    expect(r.vocabSize).toBe(151936); // placeholders replaced, nothing appended
    const eng = await EngineDriver.load({ model: r.path, ctx: 128, slots: 1, threads: 2 });
    try {
      expect(eng.engine.info.fim).toMatchObject({ prefix: 151659, suffix: 151661, middle: 151660, pad: 151662, rep: 151663, sep: 151664 });
      const ids = Array.from(eng.engine.tokenize('<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|><tool_call>', false, true));
      expect(ids).toEqual([151659, ...eng.engine.tokenize('a', false, false), 151661,
        ...eng.engine.tokenize('b', false, false), 151660, 151657]);
      // The base vocab's own tokens are untouched.
      expect(Array.from(eng.engine.tokenize('<|im_start|>', false, true))).toEqual([151644]);
    } finally {
      await eng.close();
    }
    expect(listVocabs()).toEqual(expect.arrayContaining(['qwen2', 'qwen2.5-coder', 'starcoder']));
  });

  it('gives the 0.5b stand-in Qwen2-0.5B shapes', async () => {
    const r = generateModel(join(dir, 'big.gguf'), { vocab: 'qwen2', shape: '0.5b', quant: 'q4_0', seed: 1 });
    const h = await readGgufHeader(r.path);
    rmSync(r.path);
    expect(h.metadata.get('llama.embedding_length')).toBe(896);
    expect(h.metadata.get('llama.block_count')).toBe(24);
    expect(h.metadata.get('llama.attention.head_count')).toBe(14);
    expect(h.metadata.get('llama.attention.head_count_kv')).toBe(2);
    expect(h.metadata.get('llama.feed_forward_length')).toBe(4864);
    expect(h.metadata.get('llama.context_length')).toBe(32768);
    expect(r.params).toBeGreaterThan(490e6);
    expect(r.params).toBeLessThan(500e6);
  });

  it('rejects bad arguments with errors that name them, leaving no file', () => {
    const addon = loadAddon();
    const vocab = resolveVocab('starcoder');
    const out = join(dir, 'bad', 'x.gguf');
    const base = { out: join(dir, 'bad.gguf'), vocab, shape: 'tiny', quant: 'f16', seed: 1 } as const;
    const bad: Array<[object, RegExp]> = [
      [{ ...base, shape: 'huge' }, /shape must be 'tiny', '0.5b', '7b', 'embed-bert', 'embed-causal', 'rerank-bert', 'copy', 'copy-0.5b', 'mtp', 'copy-mtp', 'hybrid', 'eagle3', 'dflash' or 'dspark', got 'huge'/],
      [{ ...base, quant: 'q5_k' }, /quant must be one of f32, f16, q8_0, q4_0, got 'q5_k'/],
      [{ ...base, seed: -1 }, /seed must be between 0 and 9007199254740991 \(got -1\)/],
      [{ ...base, seed: 1.5 }, /seed must be an integer/],
      [{ ...base, std: 0 }, /std must be a number/],
      [{ ...base, vocab: join(dir, 'missing.gguf') }, /vocab file .*missing\.gguf' not found/],
      [{ ...base, out }, /cannot write .*bad\/x\.gguf: No such file or directory/],
      [{ ...base, out: dir }, /is a directory/],
      [{ out: base.out }, /vocab must be a string/],
    ];
    for (const [opts, message] of bad) {
      expect(() => addon.makeTestModel(opts as Parameters<typeof addon.makeTestModel>[0])).toThrow(message);
    }
    const notGguf = join(dir, 'not-a-vocab.txt');
    writeFileSync(notGguf, 'hello');
    expect(() => addon.makeTestModel({ ...base, vocab: notGguf })).toThrow(/not a readable GGUF/);
    const added: Array<[unknown, RegExp]> = [
      [{ id: 5, text: '<x>', type: 'control' }, /added token '<x>' \(id 5\): the id must be a \[PAD<id>\] placeholder or 49152/],
      [{ id: 49152, text: '<fim_prefix>', type: 'control' }, /added token '<fim_prefix>' \(id 49152\) is already in the vocab/],
      [{ id: 49152, text: '<x>', type: 'special' }, /addedTokens\[0\]\.type must be 'control' or 'user', got 'special'/],
      [{ text: '<x>', type: 'user' }, /addedTokens\[0\]\.id must be a number/],
      ['<x>', /addedTokens\[0\] must be an object/],
    ];
    for (const [token, message] of added) {
      expect(() => addon.makeTestModel({ ...base, addedTokens: [token] } as Parameters<typeof addon.makeTestModel>[0])).toThrow(message);
    }
    expect(() => resolveVocab('no-such-vocab')).toThrow(/unknown vocab 'no-such-vocab'.*available: .*qwen2/);
    expect(readdirSync(dir).filter((f) => f.startsWith('bad') || f.includes('.tmp-'))).toEqual([]);
  });

  it('caches ensureTestModel by arguments and generator version', async () => {
    const path = await ensureTestModel({ vocab: 'starcoder', quant: 'q8_0', seed: 3 });
    expect(path).toBe(standInPath({ vocab: 'starcoder', shape: 'tiny', quant: 'q8_0', seed: 3 }));
    expect(path).toMatch(new RegExp(`/test-models/starcoder-tiny-q8_0-3-v${loadAddon().testModelVersion}\\.gguf$`));
    expect(await ensureTestModel({ vocab: 'starcoder', quant: 'q8_0', seed: 3 })).toBe(path);
  });
});

describe('prompt sensitivity (real engine, greedy)', () => {
  let eng: EngineDriver;
  beforeAll(async () => {
    eng = await EngineDriver.load({ model: await ensureTestModel(), ctx: 256, slots: 8, threads: 2 });
  });
  afterAll(async () => { await eng?.close(); });

  it('gives distinct, varied continuations for distinct prompts', async () => {
    // Pairs end in the same token (" is", " was"): the context, not only the last token, matters.
    const prompts = ['Hello, my name is', 'The capital of France is', 'def fibonacci(n):', 'Once upon a time there was',
      'SELECT * FROM users WHERE', 'The quick brown fox is', 'import numpy as np', 'In 1492, Columbus was'];
    const runs = await Promise.all(prompts.map((p) => eng.run({ prompt: eng.tokens(p), maxTokens: 16, ignoreEos: true })));
    const outs = runs.map((r) => r.ids);
    for (const o of outs) expect(o).toHaveLength(16);
    expect(new Set(outs.map((o) => o.join(','))).size).toBeGreaterThanOrEqual(6);
    expect(new Set(outs.map((o) => o[0])).size).toBeGreaterThanOrEqual(6);
    // Not one token repeated: every continuation moves through several tokens.
    for (const o of outs) expect(new Set(o).size).toBeGreaterThanOrEqual(4);
    expect(outs[1]).not.toEqual(outs[5]);
    expect(outs[3]).not.toEqual(outs[7]);
  });
});
