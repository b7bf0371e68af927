// tool_choice "auto" through the real server and engine, on random-weight models that speak each
// family's format (the family's tokenizer and its real chat template): a logit bias makes the
// opener likely, the lazy grammar does the rest, so every call parses and validates, streamed or
// not, in every format the server parses; n > 1 choices each get their own; a tool schema the
// grammar cannot enforce is a warning in timings, not an error.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, stream, type Running } from './server-helpers.js';

// Constrained sampling over 128K-152K vocabularies on a loaded 2-core machine: minutes per test.
vi.setConfig({ testTimeout: 900_000 });

const ajv = new Ajv({ strict: false });
const tools = [
  { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string', maxLength: 6 }, lines: { type: 'array', items: { type: 'integer', minimum: 1, maximum: 99 }, maxItems: 2 } }, required: ['path'], additionalProperties: false } } },
  { type: 'function', function: { name: 'set_mode', parameters: { type: 'object', properties: { mode: { enum: ['ask', 'agent'] }, opts: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'], additionalProperties: false } }, required: ['mode', 'opts'], additionalProperties: false } } },
];

interface Call { id: string; function: { name: string; arguments: string } }

function expectValid(calls: Call[] | undefined): void {
  expect(calls?.length ?? 0).toBeGreaterThanOrEqual(1);
  for (const c of calls!) {
    const tool = tools.find((t) => t.function.name === c.function.name);
    expect(tool, c.function.name).toBeDefined();
    expect(ajv.validate(tool!.function.parameters, JSON.parse(c.function.arguments)), c.function.arguments).toBe(true);
  }
}

/** The calls a stream's tool_call deltas build, choice by choice. */
function streamedCalls(events: any[]): Map<number, Call[]> {
  const out = new Map<number, Call[]>();
  for (const e of events) {
    for (const ch of e.choices ?? []) {
      for (const d of ch.delta?.tool_calls ?? []) {
        const list = out.get(ch.index) ?? [];
        if (d.id) list[d.index] = { id: d.id, function: { name: d.function.name, arguments: '' } };
        list[d.index]!.function.arguments += d.function.arguments ?? '';
        out.set(ch.index, list);
      }
    }
  }
  return out;
}

const families = [
  { name: 'hermes (Qwen2.5)', vocab: 'qwen2.5-coder', template: 'Qwen-Qwen2.5-7B-Instruct', opener: '<tool_call>' },
  { name: 'llama3 (Llama 3.1, <|python_tag|>)', vocab: 'llama3.1', template: 'meta-llama-Llama-3.1-8B-Instruct', opener: '<|python_tag|>' },
  { name: 'mistral array (Nemo)', vocab: 'mistral', template: 'mistralai-Mistral-Nemo-Instruct-2407', opener: '[TOOL_CALLS]' },
  { name: 'mistral [CALL_ID] (Small 3.2)', vocab: 'mistral', template: 'Mistral-Small-3.2-24B-Instruct-2506', opener: '[TOOL_CALLS]' },
];

describe.each(families)('$name', ({ vocab, template, opener }) => {
  let srv: Running;
  let bias: Record<string, number>;
  beforeAll(async () => {
    srv = await startServer(await ensureTestModel({ vocab, chatTemplate: template }), { ctx: 2048 });
    const ids = (await json(srv.port, 'POST', '/tokenize', { content: opener, parse_special: true })).body.tokens as number[];
    expect(ids).toHaveLength(1);
    bias = { [ids[0]!]: 100 };
  });
  afterAll(async () => { await srv?.close(); });

  const body = (extra: Record<string, unknown> = {}) => ({
    // One call: with the opener biased this hard, a random model would go on opening calls to the token limit.
    messages: [{ role: 'user', content: 'Open the notes.' }], tools, tool_choice: 'auto', parallel_tool_calls: false, temperature: 0, max_tokens: 160, logit_bias: bias, ...extra,
  });

  it('the opener starts a call that parses and validates; streamed, the tool_call deltas are the same calls', async () => {
    const r = await json(srv.port, 'POST', '/v1/chat/completions', body());
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const choice = r.body.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content ?? '').toBe('');
    expectValid(choice.message.tool_calls);
    expect(r.body.timings.warnings).toBeUndefined();

    const s = await stream(srv.port, '/v1/chat/completions', body({ stream: true })).end;
    expect(s.how).toBe('done');
    const calls = streamedCalls(s.events).get(0)!;
    expect(calls.map((c) => [c.function.name, c.function.arguments])).toEqual(choice.message.tool_calls.map((c: Call) => [c.function.name, c.function.arguments]));
    expect(s.events.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });
});

describe('hermes: choices and schemas the grammar cannot enforce', () => {
  let srv: Running;
  let bias: Record<string, number>;
  beforeAll(async () => {
    srv = await startServer(await ensureTestModel({ vocab: 'qwen2.5-coder', chatTemplate: 'Qwen-Qwen2.5-7B-Instruct' }), { ctx: 2048, slots: 2 });
    const [id] = (await json(srv.port, 'POST', '/tokenize', { content: '<tool_call>', parse_special: true })).body.tokens as number[];
    bias = { [id!]: 100 };
  });
  afterAll(async () => { await srv?.close(); });

  it('n = 2 at a temperature: each choice is its own call, streamed by index', async () => {
    const req = { messages: [{ role: 'user', content: 'Two ways.' }], tools, tool_choice: 'auto', parallel_tool_calls: false, temperature: 1, seed: 3, n: 2, max_tokens: 160, logit_bias: bias };
    const r = await json(srv.port, 'POST', '/v1/chat/completions', req);
    expect(r.body.choices).toHaveLength(2);
    for (const c of r.body.choices) {
      expect(c.finish_reason).toBe('tool_calls');
      expectValid(c.message.tool_calls);
    }
    const s = await stream(srv.port, '/v1/chat/completions', { ...req, stream: true }).end;
    const calls = streamedCalls(s.events);
    for (const i of [0, 1]) {
      expect(calls.get(i)!.map((c) => c.function.arguments)).toEqual(r.body.choices[i].message.tool_calls.map((c: Call) => c.function.arguments));
    }
  });

  it('an unenforceable schema under "auto": 200, that tool\'s arguments any JSON object, the others still valid, a warning in timings', async () => {
    // One keyword the check refuses, one pattern only the converter refuses (then each tool is tried alone).
    const odd = [
      tools[0],
      { type: 'function', function: { name: 'note', parameters: { type: 'object', properties: { n: { type: 'integer', multipleOf: 3 } } } } },
      { type: 'function', function: { name: 'tag', parameters: { type: 'object', properties: { t: { type: 'string', pattern: 'abc' } } } } },
    ];
    const r = await json(srv.port, 'POST', '/v1/chat/completions', {
      messages: [{ role: 'user', content: 'x' }], tools: odd, tool_choice: 'auto', parallel_tool_calls: false, temperature: 0, max_tokens: 160, logit_bias: bias,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.timings.warnings).toHaveLength(2);
    expect(r.body.timings.warnings[0]).toBe("tools[1].function.parameters (note): properties.n.multipleOf: the keyword 'multipleOf' cannot be enforced by the grammar; its calls' arguments are checked as a JSON object only");
    expect(r.body.timings.warnings[1]).toMatch(/^tools\[2\]\.function\.parameters \(tag\): .*not anchored.*; its calls' arguments are checked as a JSON object only$/);
    for (const c of r.body.choices[0].message.tool_calls as Call[]) {
      const args = JSON.parse(c.function.arguments);
      expect(typeof args === 'object' && args !== null && !Array.isArray(args)).toBe(true);
      if (c.function.name === 'read_file') expect(ajv.validate(tools[0]!.function.parameters, args)).toBe(true);
    }
    // Forced, the same schema is still refused: a forced call must match it.
    const forced = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }], tools: odd, tool_choice: 'required' });
    expect(forced.status).toBe(400);
    expect(forced.body.error.param).toBe('tools[1].function.parameters');
  });
});
