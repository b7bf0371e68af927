// Reasoning models through the chat route: reasoning_format in the schema, reasoning_content in
// chunk and message shapes, and the server end to end with scripted engine output.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../backend/validation/errors.js';
import { parseChatRequest } from '../../backend/validation/schemas.js';
import { ChatChunkBuilder, chatCompletionChoices, type ChatDelta, type Figures } from '../../backend/http/openai-shapes.js';
import { serveScripted, type ScriptedServer } from '../helpers/scripted-server.js';

const user = { role: 'user', content: 'Hi' };

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return `${e.status} ${e.message} [${e.param}] ${e.code}`;
    throw e;
  }
  throw new Error('expected an ApiError');
}

describe('reasoning_format in the chat request schema', () => {
  it("defaults to auto; accepts auto, deepseek and none; null means not set", () => {
    expect(parseChatRequest({ messages: [user] }).reasoningFormat).toBe('auto');
    expect(parseChatRequest({ messages: [user], reasoning_format: null }).reasoningFormat).toBe('auto');
    for (const f of ['auto', 'deepseek', 'none']) expect(parseChatRequest({ messages: [user], reasoning_format: f }).reasoningFormat).toBe(f);
  });

  it('refuses other values with a 400 that names the field and the allowed values', () => {
    expect(refusal(() => parseChatRequest({ messages: [user], reasoning_format: 'think' })))
      .toBe('400 reasoning_format: must be one of auto, deepseek, none, got "think" [reasoning_format] invalid_value');
    expect(refusal(() => parseChatRequest({ messages: [user], reasoning_format: 1 })))
      .toBe('400 reasoning_format: must be one of auto, deepseek, none, got a number [reasoning_format] invalid_value');
    expect(refusal(() => parseChatRequest({ messages: [user], reasoning_format: 'deepseek-legacy' })))
      .toBe('400 reasoning_format: deepseek-legacy is not supported (use auto, deepseek, none) [reasoning_format] unsupported_value');
  });
});

const figures: Figures = { promptTokens: 3, reused: 0, generated: 2, promptMs: 1, decodeMs: 2 };

describe('reasoning_content in chunk and message shapes', () => {
  it('merges adjacent reasoning and adjacent content into one chunk each, in order, tool calls apart', () => {
    const b = new ChatChunkBuilder('id1', 'm', 1, 'fp');
    const deltas: ChatDelta[] = [
      { type: 'reasoning', text: 'a' }, { type: 'reasoning', text: 'b' }, { type: 'content', text: 'c' }, { type: 'content', text: 'd' },
      { type: 'reasoning', text: 'e' }, { type: 'tool_call', index: 0, id: 'call_1', name: 'f' }, { type: 'tool_args', index: 0, text: '{}' },
    ];
    expect(b.deltas(deltas).map((c) => c.choices[0]!.delta)).toEqual([
      { reasoning_content: 'ab' }, { content: 'cd' }, { reasoning_content: 'e' },
      { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{}' } }] },
    ]);
    expect(b.deltas([{ type: 'reasoning', text: '' }, { type: 'content', text: '' }])).toEqual([]);
    const chunk = b.deltas([{ type: 'reasoning', text: 'x' }])[0]!;
    expect(chunk).toMatchObject({ id: 'id1', object: 'chat.completion.chunk', choices: [{ index: 0, finish_reason: null, logprobs: null }] });
  });

  it('a message has reasoning_content only when there was reasoning', () => {
    const base = { id: 'i', model: 'm', created: 1, fingerprint: 'fp', figures };
    const choice = { content: 'answer', calls: [], finish: 'stop' as const };
    const message = (reasoning?: string) =>
      chatCompletionChoices({ ...base, choices: [{ ...choice, ...(reasoning !== undefined ? { reasoning } : {}) }] }).choices[0]!.message;
    expect(message('plan')).toEqual({ role: 'assistant', content: 'answer', reasoning_content: 'plan' });
    expect(message('')).toEqual({ role: 'assistant', content: 'answer' });
    expect(message()).toEqual({ role: 'assistant', content: 'answer' });
  });
});

// ---- the server with scripted engines ----

const running: ScriptedServer[] = [];
afterEach(async () => { for (const r of running.splice(0)) await r.close(); });

/** Serves fake engines that answer every request with `pieces`; returns the server's URL and the engines. */
async function serve(pieces: string[], template: string | null = null) {
  const srv = await serveScripted(() => pieces, { template });
  running.push(srv);
  return { url: srv.url, fakes: srv.fakes };
}

async function post(url: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

interface Delta { content?: string; reasoning_content?: string; tool_calls?: Array<{ function: { name?: string; arguments: string } }> }

/** The deltas of a streamed answer, read from its SSE body. */
async function streamed(url: string, body: Record<string, unknown>): Promise<Delta[]> {
  const res = await post(url, { ...body, stream: true });
  expect(res.status).toBe(200);
  const text = await res.text();
  const payloads = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
  expect(payloads.at(-1)).toBe('[DONE]');
  return payloads.slice(0, -1).map((p) => (JSON.parse(p) as { choices: Array<{ delta: Delta }> }).choices[0]?.delta ?? {});
}

const join2 = (deltas: Delta[], key: 'content' | 'reasoning_content') => deltas.map((d) => d[key] ?? '').join('');

// What a Qwen3 / DeepSeek-R1 model writes, cut the way tokens cut it (tags split too).
const R1_PIECES = ['<th', 'ink>\n', 'plan', '\n</th', 'ink>', '\n\nans', 'wer'];

describe('chat completions with a reasoning model (scripted engine)', () => {
  it('sends the thinking as reasoning_content and the answer as content, streamed and not', async () => {
    const { url, fakes } = await serve(R1_PIECES);
    const res = await post(url, { messages: [user] });
    expect(res.status).toBe(200);
    const j = await res.json() as { choices: Array<{ message: Record<string, unknown>; finish_reason: string }> };
    expect(j.choices[0]!.message).toEqual({ role: 'assistant', content: 'answer', reasoning_content: 'plan' });
    expect(j.choices[0]!.finish_reason).toBe('stop');

    const deltas = await streamed(url, { messages: [user] });
    expect(join2(deltas, 'reasoning_content')).toBe('plan');
    expect(join2(deltas, 'content')).toBe('answer');
    // No chunk mixes the two, and all thinking comes before the answer.
    expect(deltas.some((d) => d.reasoning_content && d.content)).toBe(false);
    const kinds = deltas.filter((d) => d.reasoning_content || d.content).map((d) => (d.reasoning_content ? 'r' : 'c')).join('');
    expect(kinds).toMatch(/^r+c+$/);
    // The engine generated the same text both times: the split is the server's.
    expect(fakes[0]!.all.map((r) => r.text)).toEqual([R1_PIECES.join(''), R1_PIECES.join('')]);
  });

  it("reasoning_format 'none' passes the thinking through as content (no reasoning_content)", async () => {
    const { url } = await serve(R1_PIECES);
    const j = await (await post(url, { messages: [user], reasoning_format: 'none' })).json() as { choices: Array<{ message: Record<string, unknown> }> };
    expect(j.choices[0]!.message).toEqual({ role: 'assistant', content: '<think>\nplan\n</think>\n\nanswer' });
    const deltas = await streamed(url, { messages: [user], reasoning_format: 'none' });
    expect(join2(deltas, 'content')).toBe('<think>\nplan\n</think>\n\nanswer');
    expect(deltas.some((d) => 'reasoning_content' in d)).toBe(false);
  });

  it('an answer without thinking is plain content and the message has no reasoning_content', async () => {
    const { url } = await serve(['Hel', 'lo <think> there']);
    const j = await (await post(url, { messages: [user] })).json() as { choices: Array<{ message: Record<string, unknown> }> };
    expect(j.choices[0]!.message).toEqual({ role: 'assistant', content: 'Hello <think> there' });
  });

  it('starts inside the thinking when the chat template ends the prompt with <think>', async () => {
    const template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
      + "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}";
    const { url } = await serve(['plan', ' more\n', '</think>', '\n\nanswer'], template);
    const j = await (await post(url, { messages: [user] })).json() as { choices: Array<{ message: Record<string, unknown> }> };
    expect(j.choices[0]!.message).toEqual({ role: 'assistant', content: 'answer', reasoning_content: 'plan more' });
    const deltas = await streamed(url, { messages: [user] });
    expect([join2(deltas, 'reasoning_content'), join2(deltas, 'content')]).toEqual(['plan more', 'answer']);
  });

  it('a thinking cut off by max_tokens stays reasoning, with an empty answer', async () => {
    const { url } = await serve(['<think>\n', 'step 1', '\nstep 2', '\nstep 3']);
    const j = await (await post(url, { messages: [user], max_tokens: 3 })).json() as { choices: Array<{ message: Record<string, unknown>; finish_reason: string }> };
    expect(j.choices[0]!.message).toEqual({ role: 'assistant', content: '', reasoning_content: 'step 1\nstep 2' });
    expect(j.choices[0]!.finish_reason).toBe('length');
  });

  it('only the answer reaches the tool-call parser: a call the model merely considered is no call', async () => {
    const considered = '<tool_call>{"name": "delete_all", "arguments": {}}</tool_call>';
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';
    const { url } = await serve(['<think>\nI could call ', considered, ' but no.\n</think>\n\n', call]);
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const j = await (await post(url, { messages: [user], tools })).json() as {
      choices: Array<{ message: { content: string | null; reasoning_content?: string; tool_calls?: Array<{ function: { name: string; arguments: string } }> }; finish_reason: string }>;
    };
    const m = j.choices[0]!.message;
    expect(m.reasoning_content).toBe(`I could call ${considered} but no.`);
    expect(m.tool_calls?.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([['get_weather', { city: 'Oslo' }]]);
    expect(m.content).toBeNull();
    expect(j.choices[0]!.finish_reason).toBe('tool_calls');

    const deltas = await streamed(url, { messages: [user], tools });
    expect(join2(deltas, 'reasoning_content')).toBe(`I could call ${considered} but no.`);
    expect(deltas.flatMap((d) => d.tool_calls ?? []).map((c) => c.function.name).filter(Boolean)).toEqual(['get_weather']);
  });

  it('answers a bad reasoning_format with a 400 naming it, before any generation', async () => {
    const { url, fakes } = await serve(R1_PIECES);
    const res = await post(url, { messages: [user], reasoning_format: 'raw' });
    expect(res.status).toBe(400);
    const j = await res.json() as { error: { message: string; param: string } };
    expect(j.error).toMatchObject({ message: 'reasoning_format: must be one of auto, deepseek, none, got "raw"', param: 'reasoning_format' });
    expect(fakes[0]!.all).toHaveLength(0);
  });
});
