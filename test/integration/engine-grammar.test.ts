// Grammar-constrained sampling on the native engine: forced tool-call grammars in every tool-call
// format the server parses come out as exactly the calls the parser reads, and two constrained
// requests side by side keep their own grammar state.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallFormat } from '../../backend/chat/chat-types.js';
import { ToolCallStreamParser } from '../../backend/chat/tool-calls.js';
import { toolCallGrammar } from '../../backend/grammar/tool-grammar.js';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver, promptText } from './engine-driver.js';

let eng: EngineDriver;
const ajv = new Ajv({ strict: false });

beforeAll(async () => {
  eng = await EngineDriver.load({ model: await ensureTestModel({}), ctx: 1024, slots: 3, threads: 2 });
});
afterAll(async () => { await eng?.close(); });

const tools = [
  { type: 'function' as const, function: { name: 'move', parameters: { type: 'object', properties: { x: { type: 'integer', minimum: -9, maximum: 9 }, y: { type: 'integer', minimum: -9, maximum: 9 } }, required: ['x', 'y'], additionalProperties: false } } },
  { type: 'function' as const, function: { name: 'say', parameters: { type: 'object', properties: { text: { type: 'string', maxLength: 8 } }, required: ['text'], additionalProperties: false } } },
];

describe('forced tool calls', () => {
  it.each(['hermes', 'llama3', 'mistral'] as ToolCallFormat[])('%s: the output is one call the streaming parser reads, with valid arguments', async (format) => {
    const grammar = eng.engine.buildGrammar(toolCallGrammar(format, { tools, several: false }));
    const r = await eng.run({ prompt: eng.tokens(promptText(`call-${format}`, 12)), maxTokens: 300, grammar });
    expect(r.done.finish).toBe('stop');
    const parser = new ToolCallStreamParser(format, { toolsEnabled: true });
    const content = [...parser.push(r.text), ...parser.end()].filter((d) => d.type === 'content').map((d) => (d as { text: string }).text).join('');
    expect(content.trim()).toBe('');
    expect(parser.calls).toHaveLength(1);
    const call = parser.calls[0]!;
    const tool = tools.find((t) => t.function.name === call.function.name)!;
    expect(ajv.validate(tool.function.parameters, JSON.parse(call.function.arguments))).toBe(true);
  });
});

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
});
