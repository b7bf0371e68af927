// What the grammar path refuses before an engine sees it (keywords llama.cpp's converter would not
// enforce), and the forced-tool-call grammars per tool-call format.
import { describe, expect, it } from 'vitest';
import { checkSchemaSupport, requireSupportedSchema } from '../../backend/grammar/schema-support.js';
import { gbnfLiteral, toolCallGrammar } from '../../backend/grammar/tool-grammar.js';

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

  it('wraps each format\'s calls in its markers, one schema per tool with its name fixed', () => {
    const hermes = toolCallGrammar('hermes', { tools, several: false });
    expect(Object.keys(hermes.schemas)).toEqual(['call-0', 'call-1']);
    expect(JSON.parse(hermes.schemas['call-0']!)).toEqual({
      type: 'object', properties: { name: { const: 'a' }, arguments: tools[0]!.function.parameters },
      required: ['name', 'arguments'], additionalProperties: false,
    });
    expect(JSON.parse(hermes.schemas['call-1']!).properties.arguments).toEqual({ type: 'object' });
    expect(hermes.root).toBe('"<tool_call>\\n" (call-0 | call-1) "\\n</tool_call>"');
    expect(toolCallGrammar('hermes', { tools, several: true }).root)
      .toBe('"<tool_call>\\n" (call-0 | call-1) "\\n</tool_call>" ("\\n" "<tool_call>\\n" (call-0 | call-1) "\\n</tool_call>")*');
    expect(toolCallGrammar('mistral', { tools, several: true }).root).toBe('"[TOOL_CALLS][" (call-0 | call-1) ("," (call-0 | call-1))* "]"');
    const llama = toolCallGrammar('llama3', { tools, several: true });
    expect(llama.root).toBe('(call-0 | call-1)');
    expect(JSON.parse(llama.schemas['call-0']!).required).toEqual(['name', 'parameters']);
  });

  it('escapes GBNF literals', () => {
    expect(gbnfLiteral('a"b\\c\n\t')).toBe('"a\\"b\\\\c\\n\\t"');
  });
});
