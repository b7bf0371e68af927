// Structured output on the real engine with a random-weight model: response_format json_object
// and json_schema, llama-server's json_schema / grammar fields, and tool_choice that forces a call.
// Random weights would write anything; the grammar is what makes every answer parse and validate.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, metrics, startServer, stream, type Running } from './server-helpers.js';

let srv: Running;
const ajv = new Ajv({ strict: false });

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { ctx: 1024 });
});
afterAll(async () => { await srv?.close(); });

const person = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    role: { enum: ['admin', 'user', 'guest'] },
    tags: { type: 'array', items: { type: 'string', maxLength: 6 }, maxItems: 3 },
    address: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 10 }, zip: { type: 'string', pattern: '^[0-9]{5}$' } },
      required: ['city', 'zip'], additionalProperties: false,
    },
    active: { type: 'boolean' },
  },
  required: ['name', 'age', 'role', 'tags', 'address', 'active'],
  additionalProperties: false,
};

function chat(content: string, extra: Record<string, unknown>) {
  return srv.openai.chat.completions.create({
    model: 'any', messages: [{ role: 'user', content }], temperature: 0, max_tokens: 400, ...extra,
  } as never) as unknown as Promise<{ choices: Array<{ finish_reason: string; message: { content: string | null; tool_calls?: Array<{ function: { name: string; arguments: string } }> } }> }>;
}

describe('response_format', () => {
  it('json_schema: every answer parses and validates, streamed or not, and is the same text both ways', async () => {
    const validate = ajv.compile(person);
    const rf = { type: 'json_schema', json_schema: { name: 'person', strict: true, schema: person } };
    for (const prompt of ['Describe a person.', 'x']) {
      const r = await chat(prompt, { response_format: rf });
      const text = r.choices[0]!.message.content!;
      expect(r.choices[0]!.finish_reason).toBe('stop');
      const value = JSON.parse(text);
      expect(validate(value), `${text}\n${JSON.stringify(validate.errors)}`).toBe(true);

      const s = await srv.openai.chat.completions.create({ model: 'any', messages: [{ role: 'user', content: prompt }], temperature: 0, max_tokens: 400, response_format: rf as never, stream: true });
      let streamed = '';
      for await (const c of s) streamed += c.choices[0]?.delta.content ?? '';
      expect(streamed).toBe(text);
    }
  }, 300_000);

  it('json_object: an object (the grammar keeps a random model to JSON; logit_bias only makes it close quickly)', async () => {
    const ids = async (t: string) => (await json<{ tokens: number[] }>(srv.port, 'POST', '/tokenize', { content: t })).body.tokens;
    const [quote] = await ids('"');
    const [brace] = await ids('}');
    for (const prompt of ['Reply with JSON.', 'anything']) {
      const r = await chat(prompt, { response_format: { type: 'json_object' }, logit_bias: { [quote!]: 40, [brace!]: 40 } });
      expect(r.choices[0]!.finish_reason).toBe('stop');
      const value = JSON.parse(r.choices[0]!.message.content!);
      expect(typeof value).toBe('object');
      expect(Array.isArray(value)).toBe(false);
    }
  });

  it('llama-server fields: json_schema and a GBNF grammar constrain chat and completions', async () => {
    const r = await json(srv.port, 'POST', '/v1/completions', {
      prompt: 'Numbers:', temperature: 0, max_tokens: 60, json_schema: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 99 }, minItems: 2, maxItems: 4 },
    });
    expect(r.status).toBe(200);
    const arr = JSON.parse(r.body.choices[0].text);
    expect(arr.length).toBeGreaterThanOrEqual(2);
    expect(arr.every((n: number) => Number.isInteger(n) && n >= 0 && n <= 99)).toBe(true);
    const g = await chat('Answer yes or no.', { grammar: 'root ::= ("yes" | "no") "."' });
    expect(['yes.', 'no.']).toContain(g.choices[0]!.message.content);
  });

  it('keeps the grammar to its own request: a free request beside a constrained one answers as it does alone', async () => {
    const free = { model: 'any', messages: [{ role: 'user' as const, content: 'Tell me a story.' }], temperature: 0, max_tokens: 24 };
    const alone = await srv.openai.chat.completions.create(free);
    const rf = { type: 'json_schema', json_schema: { name: 'p', schema: person } };
    const [beside, constrained] = await Promise.all([
      srv.openai.chat.completions.create(free),
      chat('Describe a person.', { response_format: rf }),
    ]);
    expect(beside.choices[0]!.message.content).toBe(alone.choices[0]!.message.content);
    expect(ajv.validate(person, JSON.parse(constrained.choices[0]!.message.content!))).toBe(true);
  });

  it('refuses a schema the grammar cannot enforce with a 400 naming the construct, and nothing runs', async () => {
    const before = (await metrics(srv.port)).totals.accepted;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ type: 'object', properties: { n: { type: 'integer', multipleOf: 3 } } }, /properties\.n\.multipleOf/],
      [{ type: 'string', pattern: 'abc' }, /pattern abc is not supported \(not anchored/],
      [{ type: 'number', minimum: 1.5 }, /minimum.*only on \{"type": "integer"\}/],
      [{ type: 'frobnicate' }, /Unrecognized schema/],
      [{ type: 'string', format: 'email' }, /format "email"/],
      [{ $ref: 'https://example.com/s.json' }, /only local references/],
    ];
    for (const [schema, message] of cases) {
      const r = await json(srv.port, 'POST', '/v1/chat/completions', {
        messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 's', schema } },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.param).toBe('response_format.json_schema.schema');
      expect(r.body.error.message).toMatch(message);
    }
    const bad = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }], grammar: 'root ::= "a' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('grammar');
    expect(bad.body.error.message).toMatch(/does not parse/);
    const type = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }], response_format: { type: 'yaml' } });
    expect(type.status).toBe(400);
    expect(type.body.error.param).toBe('response_format.type');
    // Refused before the engine: every one of them was booked and ended as rejected.
    const after = await metrics(srv.port);
    expect(after.totals.accepted - before).toBe(cases.length + 1);
    expect(after.totals.by_finish.rejected).toBeGreaterThanOrEqual(cases.length + 1);
  });
});

describe('tool_choice', () => {
  const tools = [
    { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 16 }, unit: { enum: ['c', 'f'] } }, required: ['city', 'unit'], additionalProperties: false } } },
    { type: 'function' as const, function: { name: 'add', parameters: { type: 'object', properties: { a: { type: 'integer', minimum: -99, maximum: 99 }, b: { type: 'integer', minimum: -99, maximum: 99 } }, required: ['a', 'b'], additionalProperties: false } } },
  ];

  it('a named function: one call of that function whose arguments validate, streamed as tool_call deltas', async () => {
    const r = await chat('What is 2 plus 3?', { tools, tool_choice: { type: 'function', function: { name: 'add' } } });
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    const calls = r.choices[0]!.message.tool_calls!;
    expect(calls).toHaveLength(1);
    expect(calls[0]!.function.name).toBe('add');
    expect(ajv.validate(tools[1]!.function.parameters, JSON.parse(calls[0]!.function.arguments))).toBe(true);

    const s = stream(srv.port, '/v1/chat/completions', { messages: [{ role: 'user', content: 'What is 2 plus 3?' }], temperature: 0, max_tokens: 400, tools, tool_choice: { type: 'function', function: { name: 'add' } } });
    const end = await s.end;
    const deltas = end.events.flatMap((e) => e.choices?.[0]?.delta?.tool_calls ?? []);
    expect(deltas[0].function.name).toBe('add');
    expect(deltas.map((d: { function: { arguments: string } }) => d.function.arguments).join('')).toBe(calls[0]!.function.arguments);
    expect(end.events.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });

  it('"required": at least one call of the offered tools (one with parallel_tool_calls false)', async () => {
    const r = await chat('Weather in Oslo?', { tools, tool_choice: 'required', parallel_tool_calls: false });
    const calls = r.choices[0]!.message.tool_calls!;
    expect(calls).toHaveLength(1);
    const tool = tools.find((t) => t.function.name === calls[0]!.function.name)!;
    expect(ajv.validate(tool.function.parameters, JSON.parse(calls[0]!.function.arguments))).toBe(true);
    const several = await chat('Weather in Oslo and Rome?', { tools, tool_choice: 'required' });
    expect(several.choices[0]!.message.tool_calls!.length).toBeGreaterThanOrEqual(1);
    for (const c of several.choices[0]!.message.tool_calls!) {
      const t = tools.find((x) => x.function.name === c.function.name)!;
      expect(ajv.validate(t.function.parameters, JSON.parse(c.function.arguments))).toBe(true);
    }
  });

  it('refuses a forced call with response_format, and tool parameters the grammar cannot enforce', async () => {
    const both = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'required', response_format: { type: 'json_object' } });
    expect(both.status).toBe(400);
    expect(both.body.error.param).toBe('response_format');
    const odd = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { x: { type: 'string', minLength: 1, not: { const: 'a' } } } } } }];
    const r = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }], tools: odd, tool_choice: 'required' });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('tools[0].function.parameters');
    expect(r.body.error.message).toMatch(/properties\.x\.not/);
  });
});
