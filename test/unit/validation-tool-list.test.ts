// The one check of a request's function tools (backend/validation/tool-list.ts), as the three
// APIs that declare tools read them: OpenAI chat, the Responses API and Anthropic's Messages.
// Each refuses the same faults the same way, naming the field in its own shape.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../backend/validation/errors.js';
import { parseMessagesRequest } from '../../backend/validation/anthropic-schema.js';
import { parseResponsesRequest } from '../../backend/validation/responses-schema.js';
import { parseChatRequest } from '../../backend/validation/schemas.js';
import { MAX_TOOL_SCHEMAS_BYTES } from '../../backend/validation/limits.js';

function refusal(fn: () => unknown): string {
  try { fn(); } catch (e) { if (e instanceof ApiError) return `${e.status} ${e.code} ${e.message}`; throw e; }
  throw new Error('expected a refusal');
}

type Tool = { name: string; schema?: unknown };
/** Each API: a request declaring `tools`, and where a tool's name and schema are. */
const APIS = {
  chat: {
    parse: (tools: Tool[]) => parseChatRequest({ messages: [{ role: 'user', content: 'x' }], tools: tools.map((t) => ({ type: 'function', function: { name: t.name, parameters: t.schema } })) }).tools,
    name: (i: number) => `tools[${i}].function.name`, schema: (i: number) => `tools[${i}].function.parameters`,
  },
  responses: {
    parse: (tools: Tool[]) => parseResponsesRequest({ input: 'x', tools: tools.map((t) => ({ type: 'function', name: t.name, parameters: t.schema })) }).tools,
    name: (i: number) => `tools[${i}].name`, schema: (i: number) => `tools[${i}].parameters`,
  },
  messages: {
    parse: (tools: Tool[]) => parseMessagesRequest({ max_tokens: 4, messages: [{ role: 'user', content: 'x' }], tools: tools.map((t) => ({ name: t.name, input_schema: t.schema })) }).tools,
    name: (i: number) => `tools[${i}].name`, schema: (i: number) => `tools[${i}].input_schema`,
  },
};

const obj = { type: 'object', properties: { city: { type: 'string' } } };

describe('function tool lists, one check for every API', () => {
  for (const [api, a] of Object.entries(APIS)) {
    it(`${api}: takes valid tools in order; refuses a duplicate or a bad name, a schema that is not an object, schemas over the total`, () => {
      expect(a.parse([{ name: 'get_weather', schema: obj }, { name: 'other', schema: obj }])).toHaveLength(2);
      expect(refusal(() => a.parse([{ name: 'f', schema: obj }, { name: 'f', schema: obj }]))).toBe(`400 invalid_value ${a.name(1)}: duplicate tool name f`);
      expect(refusal(() => a.parse([{ name: 'no spaces', schema: obj }]))).toMatch(new RegExp(`^400 invalid_value ${a.name(0).replace(/[[\].]/g, '\\$&')}: must be 1-64 characters`));
      // The name is checked before the schema.
      expect(refusal(() => a.parse([{ name: 'f', schema: obj }, { name: 'f', schema: 'nope' }]))).toBe(`400 invalid_value ${a.name(1)}: duplicate tool name f`);
      expect(refusal(() => a.parse([{ name: 'f', schema: 'nope' }]))).toBe(`400 invalid_value ${a.schema(0)}: must be a JSON object, got a string`);
      const big = { type: 'object', description: 'x'.repeat(200 * 1024) };
      const many = Array.from({ length: Math.ceil(MAX_TOOL_SCHEMAS_BYTES / (200 * 1024)) + 1 }, (_, i) => ({ name: `t${i}`, schema: big }));
      expect(refusal(() => a.parse(many))).toMatch(/^400 schema_too_large tools: the tools' schemas are \d+ bytes as JSON together; the limit is/);
    });
  }

  it("Anthropic's names allow no '.', OpenAI's do", () => {
    expect(APIS.chat.parse([{ name: 'a.b', schema: obj }])).toHaveLength(1);
    expect(APIS.responses.parse([{ name: 'a.b', schema: obj }])).toHaveLength(1);
    expect(refusal(() => APIS.messages.parse([{ name: 'a.b', schema: obj }]))).toBe('400 invalid_value tools[0].name: must be 1-64 characters of a-z, A-Z, 0-9, _ -');
  });
});
