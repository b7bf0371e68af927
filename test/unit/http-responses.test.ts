// The Responses API with scripted engines (no model): the request schema's refusals, the output
// items and events a reasoning answer and a tool call become, the conversation a follow-up
// renders, and stored responses on disk (bounds, expiry, a restart of the server).
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputStream } from '../../backend/http/responses-shapes.js';
import { chatMessagesOf } from '../../backend/responses/conversation.js';
import { ResponseStore, type StoredResponse } from '../../backend/responses/response-store.js';
import { parseResponsesRequest } from '../../backend/validation/responses-schema.js';
import { parseResponse, type ResponseObject } from '../../contract/responses.js';
import type { FakeRequest } from '../helpers/fake-engine-client.js';
import { refusal } from '../helpers/refusal.js';
import { serveScripted, type ScriptedServer } from '../helpers/scripted-server.js';


describe('the request schema', () => {
  it('reads text input as one user message, items as they are, and the defaults OpenAI has', () => {
    const r = parseResponsesRequest({ input: 'Hi' });
    expect(r.input).toEqual([{ type: 'message', role: 'user', content: 'Hi' }]);
    expect([r.store, r.stream, r.parallelToolCalls, r.toolChoice, r.previousResponseId, r.maxTokens]).toEqual([true, false, true, 'none', null, null]);
    const items = parseResponsesRequest({
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'a' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
      ],
    }).input;
    expect(items.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
  });

  it('refuses with a 400 naming the field', () => {
    expect(refusal(() => parseResponsesRequest({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:' }] }] })))
      .toBe('400 [input[0].content[0].image_url] input[0].content[0].image_url: is not a well-formed data URL (data:image/png;base64,...)');
    expect(refusal(() => parseResponsesRequest({}))).toMatch(/^400 \[input\] input: is required/);
    expect(refusal(() => parseResponsesRequest({ input: 'x', temperature: 3 }))).toMatch(/^400 \[temperature\]/);
    expect(refusal(() => parseResponsesRequest({ input: 'x', max_output_tokens: 0 }))).toMatch(/^400 \[max_output_tokens\]/);
    expect(refusal(() => parseResponsesRequest({ input: 'x', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } }))).toMatch(/^400 \[tool_choice\.type\] .*cannot run/);
    expect(refusal(() => parseResponsesRequest({ input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'g' } })))
      .toMatch(/^400 \[tool_choice\.name\] .*no tool named g/);
    expect(refusal(() => parseResponsesRequest({ input: 'x', previous_response_id: '../etc/passwd' }))).toMatch(/^400 \[previous_response_id\]/);
    expect(refusal(() => parseResponsesRequest({ input: 'x', text: { format: { type: 'json_schema', name: 'p' } } }))).toMatch(/^400 \[text\.format\.schema\]/);
    expect(refusal(() => parseResponsesRequest({ input: 'x', reasoning: { effort: 'maximal' } }))).toMatch(/^400 \[reasoning\.effort\]/);
    expect(refusal(() => parseResponsesRequest({
      input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: 'required', text: { format: { type: 'json_object' } },
    }))).toMatch(/^400 \[text\.format\] .*forces a tool call/);
  });
});

describe('a conversation as chat messages', () => {
  it('instructions first, a call joins the assistant turn it was written in, outputs as tool messages, thinking left out', () => {
    expect(chatMessagesOf('Be brief.', [
      { type: 'message', role: 'developer', content: 'dev' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] },
      { type: 'reasoning', id: 'rs_1', status: 'completed', summary: [], content: [{ type: 'reasoning_text', text: 'hmm' }] },
      { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Let me look.', annotations: [], logprobs: [] }] },
      { type: 'function_call', id: 'fc_1', status: 'completed', call_id: 'c1', name: 'f', arguments: '{"x":1}' },
      { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'one' },
      { type: 'function_call_output', call_id: 'c2', output: 'two' },
    ])).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'dev' },
      { role: 'user', content: 'ab' },
      {
        role: 'assistant', content: 'Let me look.', tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
          { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
        ],
      },
      { role: 'tool', content: 'one', tool_call_id: 'c1' },
      { role: 'tool', content: 'two', tool_call_id: 'c2' },
    ]);
  });
});

describe('output items and their events', () => {
  it('reasoning, then a message, then a call: each item opens, streams and closes in the order the SDK accumulates', () => {
    const s = new OutputStream('x');
    const events = [
      ...s.push([{ type: 'reasoning', text: 'plan' }]),
      ...s.push([{ type: 'content', text: 'Hi' }]),
      ...s.push([{ type: 'tool_call', index: 0, id: 'call_1', name: 'f' }, { type: 'tool_args', index: 0, text: '{"a":' }]),
      ...s.push([{ type: 'tool_args', index: 0, text: '1}' }]),
      ...s.end(),
    ];
    expect(events.map((e) => e.type)).toEqual([
      'response.output_item.added', 'response.content_part.added', 'response.reasoning_text.delta',
      'response.reasoning_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done',
    ]);
    expect(s.items.map((i) => [i.type, i.status])).toEqual([['reasoning', 'completed'], ['message', 'completed'], ['function_call', 'completed']]);
    expect(s.items[2]).toMatchObject({ call_id: 'call_1', name: 'f', arguments: '{"a":1}' });
    expect(events.map((e) => e.output_index)).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
  });
});

// ---- stored responses on disk ----

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'strata-responses-'));
  dirs.push(d);
  return d;
}

function record(id: string, text = 'x'): StoredResponse {
  const response = { id, object: 'response', status: 'completed', output: [], usage: null } as unknown as ResponseObject;
  return { response, items: [{ type: 'message', role: 'user', content: text }] };
}

describe('the response store', () => {
  it('writes 0600 files in a 0700 folder, keeps at most the count (LRU), and reads them back after a restart', async () => {
    const dir = join(tempDir(), 'responses');
    let t = 1_000_000;
    const limits = { maxCount: 2, maxBytes: 1 << 20, ttlMs: 60_000, maxKvBytes: 0 };
    const a = new ResponseStore(dir, limits, () => t);
    expect(await a.put(record('resp_a'))).toBe(true);
    t += 1000;
    expect(await a.put(record('resp_b'))).toBe(true);
    t += 1000;
    expect((await a.get('resp_a'))?.items).toEqual(record('resp_a').items); // a is now the most recently used
    t += 1000;
    await a.put(record('resp_c'));
    expect(await a.get('resp_b')).toBeNull();
    expect(readdirSync(dir).sort()).toEqual(['resp_a.json', 'resp_c.json']);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'resp_a.json')).mode & 0o777).toBe(0o600);
    // Another store on the same folder (a restarted server) sees them.
    const b = new ResponseStore(dir, limits, () => t);
    expect((await b.get('resp_c'))?.response.id).toBe('resp_c');
    expect(await b.delete('resp_c')).toBe(true);
    expect(await b.delete('resp_c')).toBe(false);
    expect(readdirSync(dir)).toEqual(['resp_a.json']);
  });

  it('bounds the bytes, expires what is unused for the expiry, and refuses ids that could leave the folder', async () => {
    const dir = tempDir();
    let t = 0;
    const one = Buffer.byteLength(JSON.stringify(record('resp_a', 'y'.repeat(1000))));
    const s = new ResponseStore(dir, { maxCount: 100, maxBytes: one * 2 + 10, ttlMs: 5000, maxKvBytes: 0 }, () => t);
    for (const id of ['resp_a', 'resp_b', 'resp_c']) await s.put(record(id, 'y'.repeat(1000)));
    expect(s.size().count).toBe(2);
    expect(await s.get('resp_a')).toBeNull();
    expect(await s.put(record('resp_big', 'z'.repeat(one * 3)))).toBe(false);
    t += 5001;
    expect(await s.get('resp_b')).toBeNull();
    expect(readdirSync(dir)).toEqual(['resp_c.json']);
    expect(await s.get('../x')).toBeNull();
    await expect(s.put(record('resp_../x'))).rejects.toThrow(/not a response id/);
  });

  it('removes the leftovers of a write that was interrupted', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'resp_a.json.tmp-999999999-0'), '{"half');
    const s = new ResponseStore(dir, { maxCount: 10, maxBytes: 1 << 20, ttlMs: 60_000, maxKvBytes: 0 });
    expect(await s.get('resp_a')).toBeNull();
    expect(readdirSync(dir)).toEqual([]);
  });
});

// ---- the server with scripted engines ----

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Serves scripted engines answering with the pieces `answer` gives; `dir` holds the model and the stored responses. */
async function serve(dir: string, answer: (r: FakeRequest) => string[]) {
  const srv = await serveScripted(answer, { dir, ctx: 4096 });
  servers.push(srv);
  const client = new OpenAI({ baseURL: `${srv.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  return { ...srv, client };
}

const R1_PIECES = ['<th', 'ink>\n', 'plan', '\n</th', 'ink>', '\n\nans', 'wer'];

describe('POST /v1/responses (scripted engine)', () => {
  it('the thinking leaves as a reasoning item and counts as reasoning tokens, streamed and not', async () => {
    const { client } = await serve(tempDir(), () => R1_PIECES);
    const r = await client.responses.create({ model: 'fake', input: 'Hi' });
    parseResponse(r);
    expect(r.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect((r.output[0] as { content: Array<{ text: string }> }).content[0]!.text).toBe('plan');
    expect(r.output_text).toBe('answer');
    expect(r.usage?.output_tokens).toBe(7);
    expect(r.usage?.output_tokens_details.reasoning_tokens).toBe(5);

    const stream = client.responses.stream({ model: 'fake', input: 'Hi' });
    const types: string[] = [];
    const numbers: number[] = [];
    for await (const ev of stream) { types.push(ev.type); numbers.push(ev.sequence_number); }
    const final = await stream.finalResponse();
    expect(numbers).toEqual(types.map((_, i) => i));
    expect(types[0]).toBe('response.created');
    expect(types[1]).toBe('response.in_progress');
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((t) => t === 'response.output_item.added')).toHaveLength(2);
    expect(final.output_text).toBe('answer');
    expect(final.usage).toEqual(r.usage);
  });

  it('a follow-up renders the stored conversation before its input; a function call round-trips', async () => {
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';
    let next = [call];
    const { client, fakes } = await serve(tempDir(), () => next);
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: 'fake', input: 'Weather in Oslo?', instructions: 'Use tools.', tools });
    const fc = first.output.find((i) => i.type === 'function_call');
    expect(fc).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city": "Oslo"}' });
    next = ['Sunny.'];
    const second = await client.responses.create({
      model: 'fake', previous_response_id: first.id, tools,
      input: [{ type: 'function_call_output', call_id: (fc as { call_id: string }).call_id, output: '{"sky":"clear"}' }],
    });
    expect(second.output_text).toBe('Sunny.');
    expect(second.previous_response_id).toBe(first.id);
    const prompt = await fakes[0]!.detokenize(fakes[0]!.all[1]!.input.prompt as number[]);
    // The first turn's prompt, the model's call as it wrote it, then the tool's output; the instructions were not carried over.
    expect(prompt).toContain('Weather in Oslo?');
    expect(prompt).toContain(call);
    expect(prompt).toContain('{"sky":"clear"}');
    expect(prompt).not.toContain('Use tools.');
  });

  it('stored responses are retrieved, deleted, and survive a restart of the server; unknown ids are 404', async () => {
    const dir = tempDir();
    const a = await serve(dir, () => ['one']);
    const r = await a.client.responses.create({ model: 'fake', input: 'Hi' });
    const notStored = await a.client.responses.create({ model: 'fake', input: 'Hi', store: false });
    await expect(a.client.responses.retrieve(notStored.id)).rejects.toMatchObject({ status: 404 });
    await a.server.close();
    const b = await serve(dir, () => ['two']);
    expect(await b.client.responses.retrieve(r.id)).toEqual(r);
    const follow = await b.client.responses.create({ model: 'fake', input: 'More', previous_response_id: r.id });
    expect(follow.output_text).toBe('two');
    // The stored response's own tokens (its prompt and the id the engine gave its answer), then the new turn.
    const held = [...a.fakes[0]!.all[0]!.input.prompt as number[], 100];
    const prompt = b.fakes[0]!.all[0]!.input.prompt as number[];
    expect(prompt.slice(0, held.length)).toEqual(held);
    expect(await b.fakes[0]!.detokenize(prompt.slice(held.length))).toMatch(/^<\|im_end\|>[\s\S]*More[\s\S]*assistant\n$/);
    await b.client.responses.delete(r.id);
    await expect(b.client.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404 });
    const missing = await b.client.responses.create({ model: 'fake', input: 'x', previous_response_id: r.id }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, param: 'previous_response_id' });
    expect(readdirSync(join(dir, 'responses')).filter((f) => f.endsWith('.json'))).toEqual([`${follow.id}.json`]);
  });

  it('an engine that dies mid-stream ends the stream with response.failed carrying the error and what was written', async () => {
    const { client, fakes } = await serve(tempDir(), () => []);
    const fake = fakes[0]!;
    fake.autoRun = null;
    fake.onGenerate = (r) => {
      setImmediate(() => {
        r.admit();
        r.tokens([1], 'Hel');
        setImmediate(() => fake.die('killed'));
      });
    };
    const events: Array<{ type: string; sequence_number: number; response?: { status: string; error: unknown; output: unknown[] } }> = [];
    for await (const ev of await client.responses.create({ model: 'fake', input: 'Hi', stream: true })) events.push(ev as never);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.failed',
    ]);
    const failed = events.at(-1)!.response!;
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ code: 'engine_unavailable' });
    expect(failed.output).toMatchObject([{ type: 'message', content: [{ text: 'Hel' }] }]);
  });
});
