// Bad input to the native Engine gets a clear error naming the problem and changes nothing:
// load options (missing file, not a GGUF, context over the model's limit, unknown device,
// unreachable RPC server, out-of-range values) and submit fields.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineOptions, GenerateRequest } from '../../native/lib/addon.js';
import { loadAddon } from '../../backend/addon/loader.js';
import { nestedGrammar } from '../helpers/hostile-inputs.js';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver } from './engine-driver.js';

let model = '';
let dir = '';
let eng: EngineDriver;
const noop = (): void => {};

function load(opts: Partial<EngineOptions>): Promise<unknown> {
  return loadAddon().Engine.load({ model, onEvents: noop, threads: 2, ctx: 256, slots: 1, ...opts } as EngineOptions);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  model = await ensureTestModel({});
  dir = mkdtempSync(join(tmpdir(), 'strata-engine-errors-'));
  eng = await EngineDriver.load({ model, ctx: 256, slots: 2, threads: 2 });
});
afterAll(async () => {
  await eng?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Engine.load', () => {
  it('names a missing model file', async () => {
    await expect(load({ model: join(dir, 'nope.gguf') })).rejects.toThrow(/model file not found: .*nope\.gguf/);
  });

  it('refuses a file that is not a GGUF before llama.cpp sees it', async () => {
    const fake = join(dir, 'fake.gguf');
    writeFileSync(fake, 'this is not a model\n'.repeat(100));
    await expect(load({ model: fake })).rejects.toThrow(/is not a GGUF file/);
    const truncated = join(dir, 'truncated.gguf');
    writeFileSync(truncated, Buffer.from('GGUF\x03\x00\x00\x00', 'latin1'));
    await expect(load({ model: truncated })).rejects.toThrow(/not a valid GGUF file/);
  });

  it('refuses a context over the model\'s training context', async () => {
    await expect(load({ ctx: 1 << 20 })).rejects.toThrow(/ctx 1048576 is over the model's training context \(\d+ tokens\)/);
  });

  it('names an unknown device and lists the known ones', async () => {
    await expect(load({ devices: ['NOPE0'] })).rejects.toThrow(/unknown device "NOPE0" \(known devices: .*CPU/);
  });

  it('names an unreachable RPC server', async () => {
    const port = await closedPort();
    await expect(load({ rpc: [`127.0.0.1:${port}`] })).rejects.toThrow(new RegExp(`127\\.0\\.0\\.1:${port}`));
    await expect(load({ rpc: ['no-port-here'] })).rejects.toThrow(/no-port-here/);
  });

  it('checks option types and ranges', async () => {
    await expect(load({ slots: 0 })).rejects.toThrow(RangeError);
    await expect(load({ slots: 100000 })).rejects.toThrow(/slots must be between 1 and/);
    await expect(load({ slots: 8, batch: 4 })).rejects.toThrow(/batch \(4\) must be at least slots \(8\)/);
    await expect(load({ kvType: 'q5' as 'f16' })).rejects.toThrow(/kvType must be one of 'f16', 'q8_0', 'q4_0'/);
    await expect(load({ flashAttn: 'maybe' as 'on' })).rejects.toThrow(RangeError);
    await expect(load({ ctx: 1.5 })).rejects.toThrow(TypeError);
    await expect(load({ model: 42 as unknown as string })).rejects.toThrow(/model must be a string/);
    await expect(loadAddon().Engine.load({ model } as EngineOptions)).rejects.toThrow(/onEvents must be a function/);
    await expect(load({ kvType: 'q8_0', flashAttn: 'off' })).rejects.toThrow(/needs flash attention/);
    await expect(load({ context: 512 } as Partial<EngineOptions>)).rejects.toThrow(/engine options has an unknown key 'context'/);
    await expect(load({ speculative: { ngram: true, draftMaxx: 4 } as EngineOptions['speculative'] })).rejects.toThrow(/speculative has an unknown key 'draftMaxx'/);
  });

  it('cannot be constructed directly', () => {
    const Ctor = loadAddon().Engine as unknown as new () => unknown;
    expect(() => new Ctor()).toThrow(/use Engine.load/);
  });
});

describe('submit validation', () => {
  const good = (): GenerateRequest => ({ id: eng.id(), prompt: eng.tokens('hello there'), maxTokens: 2, ignoreEos: true });
  const cases: Array<[string, (r: GenerateRequest) => unknown, RegExp]> = [
    ['empty prompt', (r) => ({ ...r, prompt: [] }), /prompt is empty/],
    ['prompt over the slot context', (r) => ({ ...r, prompt: new Array(257).fill(r.prompt[0]) }), /prompt has 257 tokens, more than the slot context \(256\)/],
    ['token out of vocabulary', (r) => ({ ...r, prompt: [1, 10_000_000] }), /prompt\[1\]: token 10000000 is outside the vocabulary/],
    ['negative token', (r) => ({ ...r, prompt: Int32Array.from([5, -1]) }), /prompt\[1\]: token -1 is an image placeholder without its image in images/],
    ['non-integer id', (r) => ({ ...r, id: 1.5 }), /id must be an integer/],
    ['zero id', (r) => ({ ...r, id: 0 }), /id must be between 1 and/],
    ['missing maxTokens', (r) => ({ ...r, maxTokens: undefined }), /maxTokens must be a non-negative integer/],
    ['negative temperature', (r) => ({ ...r, sampling: { temperature: -1 } }), /sampling.temperature must be between 0 and/],
    ['zero topP', (r) => ({ ...r, sampling: { topP: 0 } }), /sampling.topP must be above 0/],
    ['fractional topK', (r) => ({ ...r, sampling: { topK: 1.5 } }), /sampling.topK must be an integer/],
    ['bad logit bias', (r) => ({ ...r, sampling: { logitBias: [[1]] } }), /sampling.logitBias\[0\] must be a \[token, bias\] pair/],
    ['empty stop string', (r) => ({ ...r, stop: ['ok', ''] }), /stop\[1\] is an empty string/],
    ['stop not strings', (r) => ({ ...r, stop: [1] }), /stop\[0\] must be a string/],
    ['stop token out of vocabulary', (r) => ({ ...r, stopTokens: [-5] }), /stopTokens\[0\]: token -5 is outside/],
    ['ignoreEos not boolean', (r) => ({ ...r, ignoreEos: 'yes' }), /ignoreEos must be a boolean/],
    ['n beyond the slots', (r) => ({ ...r, n: 99 }), /n must be between 1 and \d+ \(got 99\)/],
    ['logprobs beyond 100', (r) => ({ ...r, logprobs: 101 }), /logprobs must be between -1 and 100/],
    ['draftMax beyond 256', (r) => ({ ...r, draftMax: 257 }), /draftMax must be between -1 and 256/],
    ['ngram not boolean', (r) => ({ ...r, ngram: 1 }), /ngram must be a boolean/],
    ['a grammar that does not parse', (r) => ({ ...r, grammar: 'root ::= "unclosed' }), /grammar: the grammar does not parse: .*unexpected end of input/],
    ['a grammar without root', (r) => ({ ...r, grammar: 'other ::= "a"' }), /grammar: the grammar does not parse/],
    // 60,000 levels overflowed the parser's stack and killed the process (the server refuses far less; this is the engine's own bound).
    ['a grammar nested past the parser\'s limit', (r) => ({ ...r, grammar: nestedGrammar() }), /grammar: the grammar does not parse: groups are nested more than 256 levels deep/],
    ['not an object', () => 42, /request must be an object/],
    // A field the native side does not read is refused, never silently dropped.
    ['an unknown key', (r) => ({ ...r, maxToken: 5 }), /request has an unknown key 'maxToken'/],
    ['an unknown sampling key', (r) => ({ ...r, sampling: { temprature: 0 } }), /sampling has an unknown key 'temprature'/],
    ['an unknown trigger key', (r) => ({ ...r, grammar: 'root ::= "a"', grammarTriggers: { words: ['x'], word: ['y'] } }), /grammarTriggers has an unknown key 'word'/],
  ];

  it.each(cases)('refuses %s and changes nothing', (_name, mutate, message) => {
    const before = eng.engine.snapshot();
    expect(() => eng.engine.submit(mutate(good()) as GenerateRequest)).toThrow(message);
    const after = eng.engine.snapshot();
    expect(after.queued).toBe(before.queued);
    expect(after.totals).toEqual(before.totals);
  });

  it('refuses embedding requests on a text model, and buildGrammar specs the converter cannot express', () => {
    expect(() => eng.engine.embed({ id: eng.id(), inputs: [[1, 2]] })).toThrow(/this model makes text, not embeddings/);
    expect(() => eng.engine.buildGrammar({ schemas: { root: '{"type": "nope"}' } })).toThrow(/Unrecognized schema/);
    expect(() => eng.engine.buildGrammar({ schemas: { root: 'not json' } })).toThrow(/schema 'root' is not valid JSON/);
    expect(() => eng.engine.buildGrammar({ schemas: { 'bad name': '{}' } })).toThrow(/rule name 'bad name'/);
    expect(() => eng.engine.buildGrammar({ gbnf: 'root ::= (' })).toThrow(/does not parse/);
    expect(() => eng.engine.buildGrammar({ schemas: { item: '{}' }, rooot: 'item' } as never)).toThrow(/grammar spec has an unknown key 'rooot'/);
    expect(() => eng.engine.buildGrammar({ gbnf: nestedGrammar(257) })).toThrow(/groups are nested more than 256 levels deep/);
    expect(eng.engine.buildGrammar({ gbnf: nestedGrammar(256) })).toContain('root ::=');
    expect(eng.engine.buildGrammar({ schemas: { item: '{"type": "integer"}' }, root: '"[" item "]"' })).toMatch(/^root ::= "\[" item "\]"/m);
  });

  it('refuses a duplicate live id, then accepts it after its done', async () => {
    const first = eng.start({ prompt: eng.tokens('duplicate id'), maxTokens: 3, ignoreEos: true });
    expect(() => eng.engine.submit({ id: first.id, prompt: [1], maxTokens: 1 })).toThrow(/id \d+ is already in use/);
    expect((await first.done).dones).toHaveLength(1);
    const second = await eng.run({ id: first.id, prompt: eng.tokens('duplicate id'), maxTokens: 3, ignoreEos: true });
    expect(second.done.finish).toBe('length');
  });

  it('still serves after all of that', async () => {
    const r = await eng.run({ prompt: eng.tokens('after the errors'), maxTokens: 4, ignoreEos: true });
    expect(r.done).toMatchObject({ finish: 'length', generated: 4 });
    expect(eng.engine.snapshot().queued).toBe(0);
  });
});
