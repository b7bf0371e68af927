// The input limits on grammars and JSON schemas, checked in request validation: every path that
// takes a schema or a grammar refuses what passes a limit with a 400 naming the field and the
// limit (the real server's answers are in test/integration/server-input-limits.test.ts).
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../backend/validation/errors.js';
import { checkGrammarLimits, grammarShape } from '../../backend/validation/grammar-limits.js';
import {
  MAX_GRAMMAR_ALTERNATIVES, MAX_GRAMMAR_BYTES, MAX_GRAMMAR_NESTING, MAX_GRAMMAR_REPEATED_SYMBOLS, MAX_GRAMMAR_REPETITION_NESTING, MAX_GRAMMAR_RULES,
  MAX_JSON_DEPTH, MAX_SCHEMA_BYTES, MAX_TOOL_SCHEMAS_BYTES,
} from '../../backend/validation/limits.js';
import { parseMessagesRequest } from '../../backend/validation/anthropic-schema.js';
import { parseResponsesRequest } from '../../backend/validation/responses-schema.js';
import { parseChatRequest, parseCompletionRequest } from '../../backend/validation/schemas.js';
import { alternativesGrammar, deepSchema, nestedGrammar } from '../helpers/hostile-inputs.js';

/** "status code param: message" of the ApiError fn throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return `${e.status} ${e.code} [${e.param}] ${e.message}`;
    throw e;
  }
  throw new Error('expected an ApiError');
}

const user = { role: 'user', content: 'Hi' };
const chat = (extra: Record<string, unknown>) => parseChatRequest({ messages: [user], ...extra });
const completion = (extra: Record<string, unknown>) => parseCompletionRequest({ prompt: 'x', ...extra });
const anthropic = (extra: Record<string, unknown>) => parseMessagesRequest({ model: 'm', max_tokens: 8, messages: [user], ...extra });
const rfSchema = (schema: unknown) => ({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });

describe('grammar shape (GBNF read as llama.cpp reads it)', () => {
  it('counts groups, the choices of alternations and rules outside literals, classes, tokens and comments', () => {
    const g = [
      'root ::= ( "(((" | [()|] | item ) # ((( | | comment',
      'item ::= ("\\"(" ( [^\\]()] | "x" )) <(>',
    ].join('\n');
    expect(grammarShape(g)).toEqual({ nesting: 2, alternatives: 3 + 2, rules: 2, repeated: 0, repetitionNesting: 0 });
    // Each alternation counts its choices: 2 in the rule's body, 2 in the group; none without a `|`.
    expect(grammarShape('root ::= "a" | ("b" | "c") "d"\nx ::= ("e") "f"').alternatives).toBe(4);
  });

  it('counts what bounded repetitions write out: the bound times the literal, 1 for a rule or group', () => {
    expect(grammarShape('root ::= [0-9]{1,15} "ab"{3} x{2,} ("q"){0,7}').repeated).toBe(15 * 3 + 2 * 3 + 2 + 7);
    // An open bound, or one past the parser's cap of 2,000, writes out only the minimum.
    expect(grammarShape('root ::= x{0,999999} y{5,}').repeated).toBe(5);
    expect(grammarShape('root ::= x{2000} y{0,2000}').repeated).toBe(4000);
  });
  it('counts how deep repetitions nest inside repeated groups, per rule', () => {
    expect(grammarShape('root ::= (("a"? "b")*)+ x\nx ::= [0-9]{1,3} ("-" y)*').repetitionNesting).toBe(3);
    // A JSON-schema grammar's deepest: an optional list of comma-separated items.
    expect(grammarShape('array ::= "[" space ( value ("," space value)* )? space "]"').repetitionNesting).toBe(2);
    // Quantifier characters inside literals and classes, and hyphens in rule names, are not repetitions.
    expect(grammarShape('root ::= "a*+?" [*+?] decimal-part').repetitionNesting).toBe(0);
  });

  it('reads a grammar in one pass: 1 MiB of comments, tokens or literals in well under the time a quadratic scan takes (minutes)', () => {
    for (const unit of ['#\n', '<a', '"', '[', '{']) {
      const started = Date.now();
      grammarShape(unit.repeat((1 << 20) / unit.length));
      expect(Date.now() - started, JSON.stringify(unit)).toBeLessThan(2000);
    }
  });
});

describe('client grammars', () => {
  it('the issue inputs: 60,000 nested groups (120 KB) and 200,000 alternatives (2 MB) are 400s naming the field and the limit', () => {
    expect(refusal(() => chat({ grammar: nestedGrammar() }))).toBe(
      `400 grammar_too_deep [grammar] grammar: nests groups 60000 levels deep; the limit is ${MAX_GRAMMAR_NESTING}`,
    );
    const bytes = Buffer.byteLength(alternativesGrammar());
    expect(refusal(() => completion({ grammar: alternativesGrammar() }))).toBe(
      `400 grammar_too_large [grammar] grammar: is ${bytes} bytes; the limit is ${MAX_GRAMMAR_BYTES} bytes`,
    );
  });

  it('refuses each limit on its own, and takes a grammar at every limit', () => {
    expect(chat({ grammar: nestedGrammar(MAX_GRAMMAR_NESTING) }).constraint).toMatchObject({ kind: 'gbnf' });
    expect(refusal(() => chat({ grammar: nestedGrammar(MAX_GRAMMAR_NESTING + 1) }))).toContain(`the limit is ${MAX_GRAMMAR_NESTING}`);
    // 20,000 alternatives in 180 KB: under the byte limit, over the alternatives limit.
    expect(refusal(() => chat({ grammar: alternativesGrammar(20_000) }))).toBe(
      `400 grammar_too_large [grammar] grammar: has 20000 alternatives; the limit is ${MAX_GRAMMAR_ALTERNATIVES}`,
    );
    expect(chat({ grammar: alternativesGrammar(MAX_GRAMMAR_ALTERNATIVES) }).constraint).toMatchObject({ kind: 'gbnf' });
    const rules = (n: number) => Array.from({ length: n }, (_, i) => `r${i} ::= "x"`).join('\n');
    expect(refusal(() => chat({ grammar: rules(MAX_GRAMMAR_RULES + 1) }))).toContain(`has ${MAX_GRAMMAR_RULES + 1} rules; the limit is ${MAX_GRAMMAR_RULES}`);
    expect(refusal(() => chat({ grammar: `root ::= ${'"abcdefghij"{2000} '.repeat(6)}` }))).toBe(
      `400 grammar_too_large [grammar] grammar: repetitions write out 120000 symbols; the limit is ${MAX_GRAMMAR_REPEATED_SYMBOLS}`,
    );
    // Repetitions of repetitions: a 3.8 KB grammar nesting them 7 deep held the engine for minutes.
    expect(refusal(() => chat({ grammar: 'root ::= ((((("a" | .)*)?)+ "b")*)?' }))).toBe(
      `400 grammar_too_complex [grammar] grammar: nests repetitions 5 deep; the limit is ${MAX_GRAMMAR_REPETITION_NESTING}`,
    );
    expect(chat({ grammar: 'root ::= (("a"? "b")*)+' }).constraint).toMatchObject({ kind: 'gbnf' });
    // Parentheses inside literals and classes are not groups: a deep-looking literal is fine.
    expect(chat({ grammar: `root ::= "${'('.repeat(1000)}" [(${')'.repeat(500)}]` }).constraint).toMatchObject({ kind: 'gbnf' });
  });

  it('counts bytes, not characters', () => {
    const g = `root ::= "${'é'.repeat(MAX_GRAMMAR_BYTES / 2)}"`;
    expect(refusal(() => checkGrammarLimits(g, 'grammar'))).toContain(`the limit is ${MAX_GRAMMAR_BYTES} bytes`);
  });
});

describe('schemas, on every path that takes one', () => {
  const deep = deepSchema();
  const tooDeep = `is nested more than ${MAX_JSON_DEPTH} levels deep`;
  it('the issue inputs: a 3,000-level schema in response_format and in a /v1/messages tool are 400s, not stack overflows', () => {
    expect(refusal(() => chat(rfSchema(deep)))).toBe(`400 too_deep [response_format.json_schema.schema] response_format.json_schema.schema: ${tooDeep}`);
    expect(refusal(() => anthropic({ tools: [{ name: 't', input_schema: deep }] }))).toBe(`400 too_deep [tools[0].input_schema] tools[0].input_schema: ${tooDeep}`);
  });

  it('json_object with a schema, llama-server json_schema, chat tools, and tool_use input sent back', () => {
    expect(refusal(() => chat({ response_format: { type: 'json_object', schema: deep } }))).toContain('[response_format.schema]');
    expect(refusal(() => completion({ json_schema: deep }))).toContain('[json_schema]');
    expect(refusal(() => chat({ json_schema: deep }))).toContain('[json_schema]');
    expect(refusal(() => chat({ tools: [{ type: 'function', function: { name: 'f', parameters: deep } }] }))).toContain('[tools[0].function.parameters]');
    const input = JSON.parse('{"a":'.repeat(3000) + '1' + '}'.repeat(3000)) as unknown;
    const sentBack = [user, { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 't', input }] }];
    expect(refusal(() => anthropic({ messages: sentBack }))).toContain('[messages[1].content[0].input]');
  });

  it('the Responses API: function tool parameters and text.format\'s schema', () => {
    const responses = (extra: Record<string, unknown>) => parseResponsesRequest({ input: 'Hi', ...extra });
    expect(refusal(() => responses({ tools: [{ type: 'function', name: 'f', parameters: deep }] }))).toContain('[tools[0].parameters]');
    expect(refusal(() => responses({ text: { format: { type: 'json_schema', name: 'x', schema: deep } } }))).toContain('[text.format.schema]');
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    expect(refusal(() => responses({ text: { format: { type: 'json_schema', name: 'x', schema: wide } } }))).toContain('400 schema_too_large [text.format.schema]');
  });

  it('refuses a schema over the size limit, and takes one at the depth limit', () => {
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    const bytes = Buffer.byteLength(JSON.stringify(wide));
    expect(refusal(() => chat(rfSchema(wide)))).toBe(
      `400 schema_too_large [response_format.json_schema.schema] response_format.json_schema.schema: is ${bytes} bytes as JSON; the limit is ${MAX_SCHEMA_BYTES} bytes`,
    );
    expect(refusal(() => anthropic({ tools: [{ name: 't', input_schema: wide }] }))).toContain('[tools[0].input_schema]');
    // Each tool under the limit, together over it: every tool's schema is converted for each request.
    const big = { type: 'object', properties: Object.fromEntries(Array.from({ length: 9000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    const each = Buffer.byteLength(JSON.stringify(big));
    const fiveTools = Array.from({ length: 5 }, (_, i) => ({ type: 'function', function: { name: `f${i}`, parameters: big } }));
    expect(refusal(() => chat({ tools: fiveTools }))).toBe(
      `400 schema_too_large [tools] tools: the tools' schemas are ${5 * each} bytes as JSON together; the limit is ${MAX_TOOL_SCHEMAS_BYTES} bytes`,
    );
    expect(refusal(() => anthropic({ tools: fiveTools.map((t) => ({ name: t.function.name, input_schema: big })) }))).toContain('[tools]');
    expect(chat({ tools: fiveTools.slice(0, 4) }).tools).toHaveLength(4);
    // Each enum value and anyOf/oneOf branch becomes an alternative of the converted grammar:
    // refused before the engine converts it (100,000 one-digit values fit in the size limit).
    const many = { anyOf: [{ enum: Array.from({ length: 100_000 }, (_, i) => i % 10) }, { oneOf: [{ type: 'null' }, { type: 'string' }] }] };
    expect(refusal(() => chat(rfSchema(many)))).toBe(
      `400 schema_too_large [response_format.json_schema.schema] response_format.json_schema.schema: has 100004 enum values and anyOf/oneOf branches; the limit is ${MAX_GRAMMAR_ALTERNATIVES}`,
    );
    expect(refusal(() => anthropic({ tools: [{ name: 't', input_schema: { type: 'object', properties: { a: many } } }] }))).toContain('[tools[0].input_schema]');
    // Two JSON levels per object: 31 nested objects and the leaf are 63 levels.
    expect(chat(rfSchema(deepSchema(31))).constraint).toMatchObject({ kind: 'json_schema' });
    expect(refusal(() => chat(rfSchema(deepSchema(32))))).toContain(tooDeep);
  });
});
