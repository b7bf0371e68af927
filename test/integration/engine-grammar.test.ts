// Grammar-constrained sampling on the native engine (random-weight model, real tokenizer):
//   - forced tool-call grammars in every call style the server parses come out as exactly the calls
//     the parser reads, and re-render through each model family's real template as the very text the
//     model wrote (what keeps an agent's KV across steps);
//   - lazy grammars (tool_choice "auto"): the output is the free run's, token for token, until a
//     trigger completes, and the grammar's from the trigger's first character on; nothing triggers
//     inside an open thinking block; an at-start trigger only at the start; each choice of n > 1
//     watches its own output;
//   - two constrained requests side by side keep their own grammar state.
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GenerateRequest, GrammarTriggers } from '../../native/lib/addon.js';
import type { CallStyle, ChatMessage, ToolSpec } from '../../backend/chat/chat-types.js';
import { renderChatPrompt } from '../../backend/chat/chat-prompt.js';
import { ClientTextGuard } from '../../backend/chat/client-text.js';
import { createChatTemplate } from '../../backend/chat/template.js';
import { ToolCallStreamParser } from '../../backend/chat/tool-calls.js';
import { gbnfLiteral, toolCallGrammar, withJsonStyle } from '../../backend/grammar/tool-grammar.js';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver, promptText, type RunResult } from './engine-driver.js';

// Constrained sampling on a loaded 2-core machine: minutes, not seconds.
vi.setConfig({ testTimeout: 900_000 });

let eng: EngineDriver;
// [TOOL_CALLS]: one control token in the 'mistral' test vocabulary (SentencePiece, 32K: a grammar
// checks a small vocabulary's candidates faster than Qwen's 152K).
let opener = -1;
/** Mistral's markers are control tokens: their text is rendered, as the chat route asks for tool markers. */
let markers: number[] = [];
const ajv = new Ajv({ strict: false });

beforeAll(async () => {
  eng = await EngineDriver.load({ model: await ensureTestModel({ vocab: 'mistral' }), ctx: 1024, slots: 3, threads: 2 });
  eng.waitMs = 300_000; // constrained sampling on a loaded 2-core machine
  opener = Array.from(eng.engine.tokenize('[TOOL_CALLS]', false, true))[0]!;
  markers = ['[TOOL_CALLS]', '[ARGS]', '[CALL_ID]'].map((m) => Array.from(eng.engine.tokenize(m, false, true))[0]!);
});
afterAll(async () => { await eng?.close(); });

const tools: ToolSpec[] = [
  { type: 'function', function: { name: 'move', parameters: { type: 'object', properties: { x: { type: 'integer', minimum: -9, maximum: 9 }, y: { type: 'number' } }, required: ['x', 'y'], additionalProperties: false } } },
  { type: 'function', function: { name: 'say', parameters: { type: 'object', properties: { text: { type: 'string', maxLength: 6 }, tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 2 } }, required: ['text'], additionalProperties: false } } },
];
const schemaOf = (name: string) => tools.find((t) => t.function.name === name)!.function.parameters;

function grammarFor(style: CallStyle, several: boolean, mode: 'forced' | 'lazy' = 'forced'): string {
  return withJsonStyle(eng.engine.buildGrammar(toolCallGrammar(style, { tools, several }, mode)), style.json);
}

function parse(style: CallStyle, text: string) {
  const parser = new ToolCallStreamParser(style.format, { toolsEnabled: true, json: style.json });
  const content = [...parser.push(text), ...parser.end()].filter((d) => d.type === 'content').map((d) => (d as { text: string }).text).join('');
  return { content, calls: parser.calls };
}

function expectValidCalls(calls: ReturnType<typeof parse>['calls'], min = 1): void {
  expect(calls.length).toBeGreaterThanOrEqual(min);
  for (const c of calls) expect(ajv.validate(schemaOf(c.function.name) as object, JSON.parse(c.function.arguments)), c.function.arguments).toBe(true);
}

describe('forced tool calls re-render as written', () => {
  const FIXTURES = new URL('../fixtures/templates/', import.meta.url);
  const template = (file: string | null) => createChatTemplate({
    chatTemplate: file === null ? null : readFileSync(new URL(file, FIXTURES), 'utf8'), bosText: '<s>', eosText: '</s>',
  }, { now: () => new Date(2025, 0, 5) });
  // One call each: a random model may go on adding calls to the token limit (several calls'
  // re-rendering is checked on written texts in test/unit/chat-call-rerender.test.ts).
  const families: Array<{ style: string; templates: Array<string | null>; several: boolean; noSystem?: boolean }> = [
    { style: 'hermes', several: false, templates: ['Qwen-Qwen2.5-7B-Instruct.jinja', 'Qwen-Qwen3-0.6B.jinja', 'NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja', 'ggml-vocab-qwen2.jinja', null] },
    { style: 'llama3', several: false, templates: ['meta-llama-Llama-3.1-8B-Instruct.jinja', 'meta-llama-Llama-3.2-3B-Instruct.jinja'] },
    // Nemo drops the system prompt once the last message is not the user's (see chat-call-rerender.test.ts).
    { style: 'mistral array', several: false, noSystem: true, templates: ['mistralai-Mistral-Nemo-Instruct-2407.jinja'] },
    { style: 'mistral named', several: false, templates: ['unsloth-mistral-Devstral-Small-2507.jinja'] },
    { style: 'mistral named-id', several: false, templates: ['Mistral-Small-3.2-24B-Instruct-2506.jinja'] },
  ];
  const user: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Move, then say hi.' }];

  it.each(families)('$style: the answer is calls the parser reads, and the next prompt holds it character for character', async ({ templates, several, noSystem }) => {
    const asked = noSystem ? user.slice(1) : user;
    const tpls = templates.map(template);
    const style = tpls[0]!.callStyle;
    for (const t of tpls) expect(t.callStyle).toEqual(style);
    const r = await eng.run({ prompt: eng.tokens(promptText(`call-${style.format}-${style.mistral}`, 12)), maxTokens: 200, grammar: grammarFor(style, several), renderTokens: markers });
    expect(r.done.finish).toBe('stop');
    const { content, calls } = parse(style, r.text);
    expect(content).toBe('');
    expectValidCalls(calls);
    for (const [i, t] of tpls.entries()) {
      const model = { template: t, bosText: '<s>', clientText: new ClientTextGuard([]) };
      const before = renderChatPrompt(model, asked, { tools, addGenerationPrompt: true }).text;
      const next = renderChatPrompt(model, [
        ...asked,
        { role: 'assistant', content: null, tool_calls: [...calls] },
        ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'done' })),
      ], { tools, addGenerationPrompt: true }).text;
      expect(next.startsWith(before + r.text), `${templates[i]}:\n${JSON.stringify(r.text)}\nre-rendered:\n${JSON.stringify(next.slice(before.length - 20, before.length + r.text.length + 20))}`).toBe(true);
    }
  });
});

describe('lazy grammars', () => {
  const style: CallStyle = { format: 'mistral', mistral: 'array', json: 'python' };
  const prompt = () => eng.tokens(promptText('lazy', 12));
  let strong = 100;
  let mild = 0;
  const bias = (b = mild): GenerateRequest['sampling'] => ({ logitBias: [[opener, b]] });
  // The marker is a control token: its text is rendered, as the chat route asks for tool markers.
  const lazy = (triggers: GrammarTriggers, extra: Partial<GenerateRequest> = {}) => eng.run({
    prompt: prompt(), maxTokens: 120, sampling: bias(), grammar: grammarFor(style, false, 'lazy'), grammarTriggers: triggers, renderTokens: markers, ...extra,
  });
  const words = { words: ['[TOOL_CALLS]'] };
  let free: RunResult;
  beforeAll(async () => {
    // The mildest bias under which the free run writes some text, then the opener.
    for (const b of [10, 15, 20, 25, 30, 35, 40, 50, 60]) {
      const r = await eng.run({ prompt: prompt(), maxTokens: 40, sampling: bias(b), renderTokens: markers });
      const at = r.ids.indexOf(opener);
      if (at > 1) { mild = b; free = r; break; }
      if (at === 0) { strong = b; break; }
    }
    expect(mild).toBeGreaterThan(0);
  });

  it('is the free run until the opener, then one call from the opener on', async () => {
    const at = free.ids.indexOf(opener);
    expect(at).toBeGreaterThan(0); // some free text first
    const r = await lazy(words);
    expect(r.ids.slice(0, at + 1)).toEqual(free.ids.slice(0, at + 1));
    expect(r.done.finish).toBe('stop');
    const { content, calls } = parse(style, r.text);
    expect(content).toBe(eng.engine.detokenize(free.ids.slice(0, at), false, false).trimEnd());
    expectValidCalls(calls);
    expect(calls).toHaveLength(1);
  });

  it('does not open inside a thinking block: the prompt opened one and the output never closes it', async () => {
    const r = await lazy({ ...words, thinking: { open: '<think>', close: '</think>', inside: true } }, { maxTokens: 40 });
    expect(r.ids).toEqual(free.ids);
    expect(r.done.finish).toBe('length');
  });

  it('an at-start trigger opens only where the output starts', async () => {
    // Free text first: the opener comes too late to count.
    const late = await lazy({ atStart: ['[TOOL_CALLS]'] }, { maxTokens: 40 });
    expect(late.ids).toEqual(free.ids);
    // Strong enough to come first: the grammar takes it from there.
    const first = await lazy({ atStart: ['[TOOL_CALLS]'] }, { sampling: bias(strong) });
    expect(first.ids[0]).toBe(opener);
    expect(first.done.finish).toBe('stop');
    expectValidCalls(parse(style, first.text).calls);
  });

  it('a trigger across tokens: the grammar starts at its first character, inside a token', async () => {
    // Text the free run wrote, from inside its 2nd token to inside its 3rd, is the trigger.
    // Each token's text as it reads in the output (a SentencePiece token alone loses its leading space).
    const upTo = (n: number) => eng.engine.detokenize(free.ids.slice(0, n), false, true);
    const pieces = [0, 1, 2, 3].map((i) => upTo(i + 1).slice(upTo(i).length));
    expect(pieces.every((p) => p.length >= 2)).toBe(true);
    const start = pieces[0]!.length + 1;
    const word = (pieces[0]! + pieces[1]! + pieces[2]!).slice(start, pieces[0]!.length + pieces[1]!.length + 1);
    const rest = pieces[2]!.slice(1);
    const grammar = `root ::= ${gbnfLiteral(word + rest)} [0-9]{3} "."`;
    const r = await eng.run({ prompt: prompt(), maxTokens: 40, sampling: bias(), grammar, grammarTriggers: { words: [word] }, renderTokens: markers });
    expect(r.ids.slice(0, 3)).toEqual(free.ids.slice(0, 3));
    expect(eng.engine.detokenize(r.ids, false, true)).toMatch(new RegExp(`^${escapeRegex(pieces[0]! + pieces[1]! + pieces[2]!)}[0-9]{3}\\.$`));
    // A grammar the trigger's own token cannot start stays off: the rest is free text.
    const off = await eng.run({ prompt: prompt(), maxTokens: 40, sampling: bias(), grammar: `root ::= ${gbnfLiteral(word)} "~~"`, grammarTriggers: { words: [word] }, renderTokens: markers });
    expect(off.ids).toEqual(free.ids);
  });

  it('n > 1: each choice watches its own output, as when it runs alone', async () => {
    const sampling = { ...bias(), temperature: 0.8, seed: 11 };
    const both = await lazy(words, { n: 2, sampling, maxTokens: 60 });
    const byChoice = [0, 1].map((c) => both.events.flatMap((e) => (e.type === 'tokens' && (e.choice ?? 0) === c ? e.ids : [])));
    for (const c of [0, 1]) {
      const alone = await lazy(words, { sampling: { ...sampling, seed: 11 + c }, maxTokens: 60 });
      expect(byChoice[c]).toEqual(alone.ids);
      expect(both.done.choices?.[c]?.finish).toBe(alone.done.finish);
      // A call that came and ended (the grammar's end allows only end-of-generation) parses and validates.
      if (alone.done.finish === 'stop') expectValidCalls(parse(style, eng.engine.detokenize(alone.ids, false, true)).calls);
    }
  });
});

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('grammar state', () => {
  it('is per request: two schemas decoded side by side each validate, and each equals its solo run', async () => {
    const a = { type: 'array', items: { type: 'integer', minimum: 0, maximum: 50 }, minItems: 1, maxItems: 4 };
    const b = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
    const ga = eng.engine.buildGrammar({ schemas: { root: JSON.stringify(a) } });
    const gb = eng.engine.buildGrammar({ schemas: { root: JSON.stringify(b) } });
    const pa = eng.tokens(promptText('grammar-a', 10));
    const pb = eng.tokens(promptText('grammar-b', 10));
    const soloA = await eng.run({ prompt: pa, maxTokens: 200, grammar: ga });
    const soloB = await eng.run({ prompt: pb, maxTokens: 200, grammar: gb });
    const [ra, rb] = await Promise.all([eng.run({ prompt: pa, maxTokens: 200, grammar: ga }), eng.run({ prompt: pb, maxTokens: 200, grammar: gb })]);
    expect(ajv.validate(a, JSON.parse(ra.text))).toBe(true);
    expect(ajv.validate(b, JSON.parse(rb.text))).toBe(true);
    expect(ra.text).toBe(soloA.text);
    expect(rb.text).toBe(soloB.text);
  });

  it('refuses triggers without a grammar, and empty ones, naming the field', () => {
    const base = { id: 9001, prompt: eng.tokens('x'), maxTokens: 1 };
    expect(() => eng.engine.submit({ ...base, grammarTriggers: { words: ['a'] } })).toThrow(/grammarTriggers needs a grammar/);
    expect(() => eng.engine.submit({ ...base, grammar: 'root ::= "a"', grammarTriggers: {} })).toThrow(/at least one of words, atStart/);
    expect(() => eng.engine.submit({ ...base, grammar: 'root ::= "a"', grammarTriggers: { words: [''] } })).toThrow(/grammarTriggers\.words\[0\] must be 1 to 256 bytes/);
  });
});
