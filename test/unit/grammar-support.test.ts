// What the grammar path refuses before an engine sees it (keywords llama.cpp's converter would not
// enforce), and the forced-tool-call grammars per tool-call format.
import { describe, expect, it } from 'vitest';
import { checkSchemaSupport, requireSupportedSchema } from '../../backend/grammar/schema-support.js';
import { gbnfLiteral, toolCallGrammar, toolCallTriggers, withJsonStyle } from '../../backend/grammar/tool-grammar.js';
import type { CallStyle } from '../../backend/chat/chat-types.js';

const refusal = (schema: unknown): string => {
  try { checkSchemaSupport(schema); return 'accepted'; } catch (e) { return (e as Error).message; }
};

describe('checkSchemaSupport', () => {
  it('accepts what the converter enforces, with annotations beside it', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'T', description: 'd',
      type: 'object',
      properties: {
        id: { type: 'integer', minimum: 0, exclusiveMaximum: 10 },
        name: { type: 'string', minLength: 1, maxLength: 5, pattern: '^[a-z]+$' },
        when: { type: 'string', format: 'date-time' },
        kind: { enum: ['a', 'b'] }, fixed: { const: 3 },
        items: { type: 'array', items: { $ref: '#/$defs/item' }, minItems: 1, maxItems: 3 },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] },
        any: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
        extra: { type: 'object', additionalProperties: { type: 'string' } },
      },
      required: ['id'], additionalProperties: false,
      $defs: { item: { type: 'object', properties: { x: { type: 'number' } } } },
    };
    expect(refusal(schema)).toBe('accepted');
    expect(refusal(true)).toBe('accepted');
  });

  it('refuses unenforceable keywords, naming where they are', () => {
    expect(refusal({ type: 'object', properties: { n: { type: 'integer', multipleOf: 2 } } }))
      .toBe("properties.n.multipleOf: the keyword 'multipleOf' cannot be enforced by the grammar");
    expect(refusal({ anyOf: [{ type: 'string' }, { not: { type: 'null' } }] })).toMatch(/^anyOf\[1\]\.not:/);
    expect(refusal({ type: 'array', items: { uniqueItems: true } })).toMatch(/^items\.uniqueItems:/);
    expect(refusal({ $defs: { a: { if: {} } } })).toMatch(/^\$defs\.a\.if:/);
    expect(refusal({ type: 'number', maximum: 3 })).toMatch(/^maximum: 'maximum' is enforced only on \{"type": "integer"\}/);
    expect(refusal({ type: 'string', format: 'email' })).toMatch(/^format: the format "email" cannot be enforced/);
    expect(refusal({ $ref: 'other.json#/x' })).toMatch(/^\$ref: only local references/);
    expect(refusal({ additionalProperties: { patternProperties: {} } })).toMatch(/^additionalProperties\.patternProperties:/);
    expect(refusal(5)).toBe('the schema must be a JSON schema object');
  });

  it('as a 400 naming the request field', () => {
    try {
      requireSupportedSchema({ type: 'string', contains: {} }, 'response_format.json_schema.schema');
      expect.unreachable();
    } catch (e) {
      expect((e as { status: number }).status).toBe(400);
      expect((e as { param: string }).param).toBe('response_format.json_schema.schema');
      expect((e as Error).message).toMatch(/^response_format\.json_schema\.schema: contains:/);
    }
  });
});

describe('toolCallGrammar', () => {
  const tools = [
    { type: 'function' as const, function: { name: 'a', parameters: { type: 'object', properties: { x: { type: 'integer' } } } } },
    { type: 'function' as const, function: { name: 'b' } },
  ];
  const style = (format: CallStyle['format'], mistral: CallStyle['mistral'] = 'array', json: CallStyle['json'] = 'python'): CallStyle => ({ format, mistral, json });

  it('wraps each format\'s calls in its markers as the template writes them, one schema per tool with its name fixed', () => {
    const hermes = toolCallGrammar(style('hermes'), { tools, several: false });
    expect(Object.keys(hermes.schemas)).toEqual(['call-0', 'call-1']);
    expect(JSON.parse(hermes.schemas['call-0']!)).toEqual({
      type: 'object', properties: { name: { const: 'a' }, arguments: tools[0]!.function.parameters },
      required: ['name', 'arguments'], additionalProperties: false,
    });
    expect(JSON.parse(hermes.schemas['call-1']!).properties.arguments).toEqual({ type: 'object' });
    expect(hermes.root).toBe('"<tool_call>\\n" (call-0 | call-1) "\\n</tool_call>"');
    expect(toolCallGrammar(style('hermes'), { tools, several: true }).root)
      .toBe('"<tool_call>\\n" (call-0 | call-1) "\\n</tool_call>" ("\\n" "<tool_call>\\n" (call-0 | call-1) "\\n</tool_call>")*');
    const llama = toolCallGrammar(style('llama3'), { tools, several: true });
    expect(llama.root).toBe('(call-0 | call-1)');
    expect(JSON.parse(llama.schemas['call-0']!).required).toEqual(['name', 'parameters']);
    // Lazy: the call may also follow <|python_tag|>.
    expect(toolCallGrammar(style('llama3'), { tools, several: false }, 'lazy').root).toBe('((call-0 | call-1) | "<|python_tag|>" (call-0 | call-1))');
  });

  it('mistral: Nemo\'s array with 9-character ids, Devstral\'s name[ARGS], Small 3.2\'s name[CALL_ID]id[ARGS]', () => {
    const array = toolCallGrammar(style('mistral'), { tools, several: true });
    expect(array.root).toBe('"[TOOL_CALLS][" (call-0 | call-1) (", " (call-0 | call-1))* "]"');
    expect(JSON.parse(array.schemas['call-0']!).required).toEqual(['name', 'arguments', 'id']);
    expect(JSON.parse(array.schemas['call-0']!).properties.id).toEqual({ type: 'string', pattern: '^[A-Za-z0-9]{9}$' });
    expect(toolCallGrammar(style('mistral', 'array', 'compact'), { tools, several: true }).root).toContain('("," (call-0 | call-1))*');
    const named = toolCallGrammar(style('mistral', 'named'), { tools, several: true });
    expect(named.schemas).toEqual({ 'args-0': JSON.stringify(tools[0]!.function.parameters), 'args-1': '{"type":"object"}' });
    expect(named.root).toBe('"[TOOL_CALLS]" ("a" "[ARGS]" args-0 | "b" "[ARGS]" args-1) ("[TOOL_CALLS]" ("a" "[ARGS]" args-0 | "b" "[ARGS]" args-1))*');
    expect(toolCallGrammar(style('mistral', 'named-id'), { tools, several: false }).root)
      .toBe('"[TOOL_CALLS]" ("a" "[CALL_ID]" [A-Za-z0-9]{9} "[ARGS]" args-0 | "b" "[CALL_ID]" [A-Za-z0-9]{9} "[ARGS]" args-1)');
  });

  it('triggers: each format\'s opener; Llama 3 also a bare call at the answer\'s start', () => {
    expect(toolCallTriggers(style('hermes'))).toEqual({ words: ['<tool_call>'], atStart: [] });
    expect(toolCallTriggers(style('mistral', 'named'))).toEqual({ words: ['[TOOL_CALLS]'], atStart: [] });
    expect(toolCallTriggers(style('llama3'))).toEqual({ words: ['<|python_tag|>'], atStart: ['{"name": '] });
    expect(toolCallTriggers(style('llama3', 'array', 'compact')).atStart).toEqual(['{"name":']);
  });

  it('withJsonStyle: the converter\'s free whitespace becomes the template\'s separators', () => {
    // What json-schema-to-grammar writes for {"name": const, "arguments": {x: integer}} (shape of the pinned converter's output).
    const gbnf = [
      'call-0 ::= "{" space call-0-name-kv "," space call-0-arguments-kv "}" space',
      'call-0-name-kv ::= "\\"name\\"" space ":" space call-0-name',
      'space ::= | " " | "\\n"{1,2} [ \\t]{0,20}',
      'array ::= "[" space ( value ("," space value)* )? "]" space',
      String.raw`char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})`,
      'decimal-part ::= [0-9]{1,16}',
      'number ::= ("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)?',
    ].join('\n');
    expect(withJsonStyle(gbnf, 'python').split('\n')).toEqual([
      'call-0 ::= "{" space call-0-name-kv ", " call-0-arguments-kv "}" space',
      'call-0-name-kv ::= "\\"name\\"" space ": " call-0-name',
      'space ::= ""',
      'array ::= "[" space ( value (", " value)* )? "]" space',
      // JSON.stringify's own forms only: no \uXXXX or \/ escapes, no exponents, no trailing zeros.
      String.raw`char ::= [^"\\\x7F\x00-\x1F] | [\\] ["\\bfnrt]`,
      'decimal-part ::= [0-9]{0,15} [1-9]',
      'number ::= ("-"? integral-part) ("." decimal-part)?',
    ]);
    expect(withJsonStyle(gbnf, 'compact')).toContain('"\\"name\\"" space ":" call-0-name');
    // A rule whose name starts with "space" is not the space rule.
    expect(withJsonStyle('x ::= "," space-like', 'python')).toBe('x ::= "," space-like');
  });

  it('escapes GBNF literals', () => {
    expect(gbnfLiteral('a"b\\c\n\t')).toBe('"a\\"b\\\\c\\n\\t"');
  });
});
