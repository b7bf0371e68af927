// Anthropic's Messages API on the real engine through the official @anthropic-ai/sdk client:
// the same chat template and tokens as /v1/chat/completions, content blocks, stop reasons and
// usage, the named stream events, tool use (forced by tool_choice and sent back as tool_result),
// count_tokens, and errors in Anthropic's shape. (The current SDK sends no sampling parameters: the
// server's default, greedy, applies, so answers are deterministic.)
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, raw, startServer, type Running } from './server-helpers.js';

let srv: Running;
let client: Anthropic;

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { ctx: 1024 });
  client = new Anthropic({ baseURL: srv.url, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
});
afterAll(async () => { await srv?.close(); });

const weather = {
  name: 'get_weather', description: 'Weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'], additionalProperties: false },
};

describe('POST /v1/messages', () => {
  it('answers like chat completions for the same conversation: text block, tokens, usage, stop reason', async () => {
    const msg = await client.messages.create({
      model: 'any', max_tokens: 8, system: 'Be brief.', messages: [{ role: 'user', content: 'Name a colour.' }],
    });
    const chat = await srv.openai.chat.completions.create({
      model: 'any', max_tokens: 8, temperature: 0, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Name a colour.' }],
    });
    expect(msg.type).toBe('message');
    expect(msg.role).toBe('assistant');
    expect(msg.content).toEqual([{ type: 'text', text: chat.choices[0]!.message.content }]);
    expect(msg.stop_reason).toBe(chat.choices[0]!.finish_reason === 'length' ? 'max_tokens' : 'end_turn');
    expect(msg.usage.output_tokens).toBe(chat.usage!.completion_tokens);
    expect(msg.usage.input_tokens + (msg.usage.cache_read_input_tokens ?? 0)).toBe(chat.usage!.prompt_tokens);
    const counted = await client.messages.countTokens({ model: 'any', system: 'Be brief.', messages: [{ role: 'user', content: 'Name a colour.' }] });
    expect(counted.input_tokens).toBe(chat.usage!.prompt_tokens);
  });

  it('streams message_start, content blocks, message_delta and message_stop with the same text', async () => {
    const params = { model: 'any', max_tokens: 10, messages: [{ role: 'user' as const, content: 'Say something.' }] };
    const whole = await client.messages.create(params);
    const events: Anthropic.MessageStreamEvent[] = [];
    for await (const ev of await client.messages.create({ ...params, stream: true })) events.push(ev);
    expect(events[0]!.type).toBe('message_start');
    expect(events.at(-1)!.type).toBe('message_stop');
    const text = events.map((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? e.delta.text : '')).join('');
    expect([{ type: 'text', text }]).toEqual(whole.content);
    const delta = events.find((e): e is Anthropic.MessageDeltaEvent => e.type === 'message_delta')!;
    expect(delta.delta.stop_reason).toBe(whole.stop_reason);
    expect(delta.usage.output_tokens).toBe(whole.usage.output_tokens);
    expect(events.filter((e) => e.type === 'content_block_start')).toHaveLength(1);
    // The SDK's own accumulator agrees.
    const final = await client.messages.stream(params).finalMessage();
    expect(final.content).toEqual(whole.content);
  });

  it('a streamed answer\'s message_start says how much of the prompt came from the cache', async () => {
    const system = `You review code. ${Array.from({ length: 60 }, (_, i) => `rule ${i}`).join('; ')}.`;
    const start = async (question: string) => {
      for await (const ev of await client.messages.create({ model: 'any', max_tokens: 2, system, messages: [{ role: 'user', content: question }], stream: true })) {
        if (ev.type === 'message_start') return ev.message.usage;
      }
      throw new Error('no message_start');
    };
    const first = await start('Is this fine?');
    const next = await start('And this one?');
    expect(first.input_tokens).toBeGreaterThan(100);
    // The second shares the system prompt with the first: the cache gives it, as the whole answer's usage says.
    expect(next.cache_read_input_tokens).toBeGreaterThan(100);
    expect(next.input_tokens + next.cache_read_input_tokens!).toBeGreaterThanOrEqual(first.input_tokens);
  });

  it('stop_sequences end the answer with stop_reason stop_sequence naming it', async () => {
    const params = { model: 'any', max_tokens: 24, messages: [{ role: 'user' as const, content: 'Keep talking.' }] };
    const free = await client.messages.create(params);
    const text = (free.content[0] as Anthropic.TextBlock).text;
    const stop = text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 2);
    const r = await client.messages.create({ ...params, stop_sequences: [stop] });
    expect(r.stop_reason).toBe('stop_sequence');
    expect(r.stop_sequence).toBe(stop);
    expect((r.content[0] as Anthropic.TextBlock).text).toBe(text.slice(0, text.indexOf(stop)));
  });

  it('tool_choice tool: a tool_use block whose input validates; the result goes back as tool_result', async () => {
    const r = await client.messages.create({
      model: 'any', max_tokens: 200, tools: [weather], tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    });
    expect(r.stop_reason).toBe('tool_use');
    const use = r.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    expect(use.name).toBe('get_weather');
    expect(typeof (use.input as { city: string }).city).toBe('string');
    const events: Anthropic.MessageStreamEvent[] = [];
    for await (const ev of await client.messages.create({
      model: 'any', max_tokens: 200, tools: [weather], tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [{ role: 'user', content: 'Weather in Oslo?' }], stream: true,
    })) events.push(ev);
    const start = events.find((e): e is Anthropic.RawContentBlockStartEvent => e.type === 'content_block_start' && e.content_block.type === 'tool_use')!;
    expect((start.content_block as Anthropic.ToolUseBlock).name).toBe('get_weather');
    const json = events.map((e) => (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' ? e.delta.partial_json : '')).join('');
    expect(JSON.parse(json)).toEqual(use.input);

    const next = await client.messages.create({
      model: 'any', max_tokens: 6, tools: [weather],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: r.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny, 21 C' }] },
      ],
    });
    expect(next.usage.input_tokens + (next.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(r.usage.input_tokens + (r.usage.cache_read_input_tokens ?? 0));
    expect(next.content.length).toBeGreaterThan(0);
  });

  it('errors are Anthropic error bodies naming the field; a tool_result for an unknown id is refused', async () => {
    await expect(client.messages.create({ model: 'any', messages: [{ role: 'user', content: 'x' }] } as never))
      .rejects.toMatchObject({ status: 400 });
    const r = await json(srv.port, 'POST', '/v1/messages', { model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: is required' } });
    const bad = await json(srv.port, 'POST', '/v1/messages', {
      max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^messages\[0\]\.content\[0\]\.tool_use_id: no earlier tool_use block/);
    const image = await raw(srv.port, 'POST', '/v1/messages', { max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] });
    expect(image.status).toBe(400);
    expect(JSON.parse(image.body).error.message).toMatch(/messages\[0\]\.content\[0\]\.source\.type: is required/);
  });
});
