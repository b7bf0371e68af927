// The Responses API through the official `openai` client against the real server and engine on a
// random-weight test model: text whole and streamed (the event sequence the SDK accumulates, the
// same greedy answer and usage as the chat route), previous_response_id continuing from the earlier
// turn's tokens and KV (cached tokens), a forced function call and its round trip, text.format json_schema, retrieve
// and delete, an engine restart, and the errors as the SDK raises them.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResponse } from '../../contract/responses.js';
import { ensureTestModel } from '../helpers/models.js';
import { json, metrics, startServer, until, type Running } from './server-helpers.js';

let srv: Running;
let dir: string;
const ajv = new Ajv({ strict: false });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-responses-'));
  srv = await startServer(await ensureTestModel({}), { slots: 2, ctx: 2048, sessionsDir: join(dir, 'sessions'), responsesDir: join(dir, 'responses') });
});
afterAll(async () => {
  await srv?.close();
  rmSync(dir, { recursive: true, force: true });
});

const INSTRUCTIONS = 'You answer in one short sentence.';

describe('text', () => {
  it('whole and streamed: the chat route\'s greedy answer and usage, the events in the order the SDK builds them', async () => {
    const chat = await srv.openai.chat.completions.create({
      model: 'any', messages: [{ role: 'system', content: INSTRUCTIONS }, { role: 'user', content: 'Name a river.' }], temperature: 0, max_tokens: 12,
    });
    const body = { model: 'any', instructions: INSTRUCTIONS, input: 'Name a river.', temperature: 0, max_output_tokens: 12 };
    const raw = await json(srv.port, 'POST', '/v1/responses', body);
    expect(raw.status).toBe(200);
    const r = parseResponse(raw.body);
    expect(r.status).toBe(chat.choices[0]!.finish_reason === 'length' ? 'incomplete' : 'completed');
    const text = r.output.flatMap((i) => (i.type === 'message' ? i.content.map((p) => p.text) : [])).join('');
    expect(text).toBe(chat.choices[0]!.message.content);
    expect(r.usage).toMatchObject({ input_tokens: chat.usage!.prompt_tokens, output_tokens: chat.usage!.completion_tokens, total_tokens: chat.usage!.total_tokens });
    expect((await srv.openai.responses.inputTokens.count({ model: 'any', instructions: INSTRUCTIONS, input: 'Name a river.' })).input_tokens).toBe(chat.usage!.prompt_tokens);
    // Stored by default, retrieved as it was answered.
    expect(await srv.openai.responses.retrieve(r.id)).toMatchObject({ id: r.id, output: r.output, usage: r.usage });

    const stream = srv.openai.responses.stream({ ...body, store: false });
    const events: Array<{ type: string; sequence_number: number; item_id?: string; delta?: string; response?: { id: string } }> = [];
    for await (const ev of stream) events.push(ev as never);
    const final = await stream.finalResponse();
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    const deltas = types.filter((t) => t === 'response.output_text.delta').length;
    expect(deltas).toBeGreaterThan(0);
    expect(types).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      ...Array(deltas).fill('response.output_text.delta'),
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done', `response.${r.status}`,
    ]);
    expect(new Set(events.filter((e) => e.response).map((e) => e.response!.id))).toEqual(new Set([final.id]));
    expect(new Set(events.filter((e) => e.item_id).map((e) => e.item_id))).toEqual(new Set([final.output[0]!.id]));
    expect(events.map((e) => e.delta ?? '').join('')).toBe(text);
    expect(final.output_text).toBe(text);
    expect(final.usage?.output_tokens).toBe(r.usage!.output_tokens);
    await expect(srv.openai.responses.retrieve(final.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  }, 300_000);
});

describe('previous_response_id', () => {
  it('continues from the earlier turn\'s own tokens and their KV (cached: its prompt and answer)', async () => {
    const t1 = await srv.openai.responses.create({ model: 'any', input: 'Tell me about lakes.', temperature: 0, max_output_tokens: 16 });
    const t2 = await srv.openai.responses.create({ model: 'any', previous_response_id: t1.id, input: 'And rivers?', temperature: 0, max_output_tokens: 8 });
    const u1 = t1.usage!;
    const u2 = t2.usage!;
    // The follow-up's prompt is turn 1's prompt and sampled tokens, then the new turn: all of them are in the slot's
    // KV but the last sampled token of a cut answer (never decoded).
    expect(u2.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(u1.input_tokens + u1.output_tokens - 1);
    expect(u2.input_tokens).toBeGreaterThan(u1.input_tokens + u1.output_tokens);
    expect(u2.input_tokens_details.cached_tokens).toBeLessThan(u2.input_tokens);
    console.log(`turn 1: ${u1.input_tokens} prompt + ${u1.output_tokens} output; turn 2: ${u2.input_tokens} prompt, ${u2.input_tokens_details.cached_tokens} cached`);
    const counted = await srv.openai.responses.inputTokens.count({ model: 'any', previous_response_id: t1.id, input: 'And rivers?' });
    expect(counted.input_tokens).toBe(u2.input_tokens);
  }, 300_000);

  it('a stored response outlives its engine: after a restart the conversation continues from its KV file with the same answer', async () => {
    const t1 = await srv.openai.responses.create({ model: 'any', input: 'Count to three.', temperature: 0, max_output_tokens: 6 });
    const follow = { model: 'any', previous_response_id: t1.id, input: 'Again.', temperature: 0, max_output_tokens: 4 };
    // Before the restart, from the KV of turn 1 (q8_0 weights, a prompt under 64 tokens: greedy is exact either way).
    const warm = await srv.openai.responses.create({ ...follow, store: false });
    expect(warm.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(warm.usage!.output_tokens).toBeGreaterThan(0);
    const before = await metrics(srv.port);
    const pid = before.engines[0].pid as number;
    process.kill(pid, 'SIGKILL');
    await until('the engine back', () => metrics(srv.port), (m) => m.engines[0].state === 'ready' && m.engines[0].pid !== pid, 120_000);
    const t2 = await srv.openai.responses.create(follow);
    expect(t2.status).not.toBe('failed');
    expect(t2.output_text).toBe(warm.output_text);
    expect(t2.usage!.input_tokens).toBe(warm.usage!.input_tokens);
    expect(t2.usage!.input_tokens).toBeGreaterThan(t1.usage!.input_tokens + t1.usage!.output_tokens);
    expect(t2.usage!.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(t1.usage!.input_tokens + t1.usage!.output_tokens - 1);
  }, 300_000);
});

describe('tools', () => {
  const tools = [{
    type: 'function' as const, name: 'get_weather', strict: true, description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 8 } }, required: ['city'], additionalProperties: false },
  }];

  it('a forced call streams its arguments, validates, and its output continues the conversation from the KV of the call', async () => {
    const stream = srv.openai.responses.stream({
      model: 'any', input: 'Weather in Oslo?', tools, tool_choice: { type: 'function', name: 'get_weather' }, temperature: 0, max_output_tokens: 60,
    });
    let streamedArgs = '';
    const types: string[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.function_call_arguments.delta') streamedArgs += ev.delta;
    }
    const r = await stream.finalResponse();
    expect(r.status).toBe('completed');
    const calls = r.output.filter((i) => i.type === 'function_call');
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.name).toBe('get_weather');
    expect(streamedArgs).toBe(call.arguments);
    expect(ajv.validate(tools[0]!.parameters, JSON.parse(call.arguments)), call.arguments).toBe(true);
    expect(types).toContain('response.function_call_arguments.done');

    // The same tools (as an agent sends them every turn), so the template renders the same prompt before the call.
    const next = await srv.openai.responses.create({
      model: 'any', previous_response_id: r.id, tools, temperature: 0, max_output_tokens: 8,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"sky": "clear"}' }],
    });
    expect(next.status).not.toBe('failed');
    expect(next.output.length).toBeGreaterThan(0);
    const cached = next.usage!.input_tokens_details.cached_tokens;
    console.log(`tool turn 1: ${r.usage!.input_tokens} prompt + ${r.usage!.output_tokens} output; turn 2: ${next.usage!.input_tokens} prompt, ${cached} cached`);
    // At least the first turn's prompt is reused; the call's own tokens as far as the re-rendered call matches them.
    expect(cached).toBeGreaterThanOrEqual(r.usage!.input_tokens);
    expect(cached).toBeLessThanOrEqual(r.usage!.input_tokens + r.usage!.output_tokens);
  }, 600_000);
});

describe('text.format', () => {
  it('json_schema: the answer parses and validates', async () => {
    const schema = {
      type: 'object', properties: { name: { type: 'string', maxLength: 10 }, age: { type: 'integer', minimum: 0, maximum: 120 } },
      required: ['name', 'age'], additionalProperties: false,
    };
    const r = await srv.openai.responses.create({
      model: 'any', input: 'Describe a person.', temperature: 0, max_output_tokens: 80,
      text: { format: { type: 'json_schema', name: 'person', schema, strict: true } },
    });
    expect(r.status).toBe('completed');
    expect(ajv.validate(schema, JSON.parse(r.output_text)), r.output_text).toBe(true);
  }, 300_000);
});

describe('errors as the SDK raises them', () => {
  it('400 naming the field, 404 for an unknown response, and nothing stored', async () => {
    // Responses (their KV files are written in the background, so they are not counted).
    const stored = () => (existsSync(join(dir, 'responses')) ? readdirSync(join(dir, 'responses')) : []).filter((f) => f.endsWith('.json'));
    const storedBefore = stored().length;
    const image = await srv.openai.responses.create({
      model: 'any', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' }] }],
    }).catch((e: unknown) => e);
    expect(image).toBeInstanceOf(OpenAI.BadRequestError);
    expect(image).toMatchObject({ status: 400, param: 'input[0].content[0].image_url' });
    expect((image as Error).message).toMatch(/not a PNG, JPEG, GIF or BMP image/);
    const hot = await srv.openai.responses.create({ model: 'any', input: 'x', temperature: 5 }).catch((e: unknown) => e);
    expect(hot).toMatchObject({ status: 400, param: 'temperature' });
    for (const stream of [false, true]) {
      const unknown = await srv.openai.responses.create({ model: 'any', input: 'x', previous_response_id: 'resp_nothing', stream } as never).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
      expect(unknown).toMatchObject({ param: 'previous_response_id' });
    }
    expect(stored()).toHaveLength(storedBefore);
    await expect(srv.openai.responses.retrieve('resp_nothing')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(srv.openai.responses.delete('resp_nothing')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const kept = await srv.openai.responses.create({ model: 'any', input: 'Hi', temperature: 0, max_output_tokens: 2 });
    await srv.openai.responses.delete(kept.id);
    await expect(srv.openai.responses.retrieve(kept.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  }, 300_000);
});
