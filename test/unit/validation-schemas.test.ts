import { describe, expect, it } from 'vitest';
import { ApiError } from '../../backend/validation/errors.js';
import {
  parseChatRequest, parseCompletionRequest, parseDetokenizeRequest, parseInfillRequest, parseSessionSaveRequest,
  parseTokenizeRequest, sanitizeSessionName,
} from '../../backend/validation/schemas.js';

/** "status message [param]" of the ApiError fn throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return `${e.status} ${e.message}${e.param ? ` [${e.param}]` : ''}`;
    throw e;
  }
  throw new Error('expected an ApiError');
}

const user = { role: 'user', content: 'Hi' };
const chat = (extra: Record<string, unknown>) => parseChatRequest({ messages: [user], ...extra });

describe('parseChatRequest', () => {
  it('gives defaults for a minimal request and ignores unknown fields', () => {
    expect(parseChatRequest({ model: 'm', messages: [user], cache_prompt: true, user: 'u', metadata: { x: 1 }, stream_options: null })).toEqual({
      model: 'm', maxTokens: null, stop: [], stream: false, includeUsage: false, sampling: {}, ignoreEos: false,
      returnProgress: false, timingsPerToken: false, n: 1, logprobs: null, constraint: null, draftMax: null, prediction: null,
      messages: [{ role: 'user', content: 'Hi' }], tools: [], toolChoice: 'none', parallelToolCalls: true, templateKwargs: {},
      reasoningFormat: 'auto', reasoningEffort: null,
    });
  });

  it('reads every generation field into engine sampling params', () => {
    const r = chat({
      temperature: 0.7, top_p: 0.9, top_k: 40, min_p: 0.05, seed: 42, frequency_penalty: -0.5, presence_penalty: 1.5,
      repeat_penalty: 1.1, repeat_last_n: 64, logit_bias: { 15: -100, 7: false, 9: 2.5 }, max_tokens: 99, stop: 'END',
      stream: true, stream_options: { include_usage: true }, n: 1, ignore_eos: true, return_progress: true, timings_per_token: true,
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(r.sampling).toEqual({
      temperature: 0.7, topP: 0.9, topK: 40, minP: 0.05, seed: 42, frequencyPenalty: -0.5, presencePenalty: 1.5,
      repeatPenalty: 1.1, repeatLastN: 64, logitBias: [[7, -Infinity], [9, 2.5], [15, -100]],
    });
    expect([r.maxTokens, r.stop, r.stream, r.includeUsage, r.ignoreEos, r.returnProgress, r.timingsPerToken]).toEqual(
      [99, ['END'], true, true, true, true, true],
    );
    expect(r.templateKwargs).toEqual({ enable_thinking: false });
    expect(chat({ logit_bias: [[3, 1], [4, false]] }).sampling.logitBias).toEqual([[3, 1], [4, -Infinity]]);
  });

  it('prefers max_completion_tokens, then max_tokens, then n_predict (-1 = no limit)', () => {
    expect(chat({ max_completion_tokens: 5, max_tokens: 9 }).maxTokens).toBe(5);
    expect(chat({ max_tokens: 9, n_predict: 3 }).maxTokens).toBe(9);
    expect(chat({ n_predict: 3 }).maxTokens).toBe(3);
    expect(chat({ n_predict: -1 }).maxTokens).toBeNull();
    expect(chat({ max_tokens: null }).maxTokens).toBeNull();
  });

  it('refuses out-of-range and mistyped sampling fields, naming them', () => {
    expect(refusal(() => chat({ temperature: 2.5 }))).toBe('400 temperature: must be between 0 and 2, got 2.5 [temperature]');
    expect(refusal(() => chat({ temperature: '0.5' }))).toBe('400 temperature: must be a number, got a string [temperature]');
    expect(refusal(() => chat({ top_p: 0 }))).toBe('400 top_p: must be greater than 0 and at most 1, got 0 [top_p]');
    expect(refusal(() => chat({ top_k: -1 }))).toBe('400 top_k: must be at least 0, got -1 [top_k]');
    expect(refusal(() => chat({ top_k: 1.5 }))).toBe('400 top_k: must be an integer, got 1.5 [top_k]');
    expect(refusal(() => chat({ min_p: 1.1 }))).toBe('400 min_p: must be between 0 and 1, got 1.1 [min_p]');
    expect(refusal(() => chat({ seed: 0.5 }))).toBe('400 seed: must be an integer, got 0.5 [seed]');
    expect(refusal(() => chat({ presence_penalty: -3 }))).toBe('400 presence_penalty: must be between -2 and 2, got -3 [presence_penalty]');
    expect(refusal(() => chat({ frequency_penalty: 2.01 }))).toBe('400 frequency_penalty: must be between -2 and 2, got 2.01 [frequency_penalty]');
    expect(refusal(() => chat({ repeat_penalty: 0 }))).toBe('400 repeat_penalty: must be greater than 0, got 0 [repeat_penalty]');
    expect(refusal(() => chat({ max_tokens: 0 }))).toBe('400 max_tokens: must be at least 1, got 0 [max_tokens]');
    expect(refusal(() => chat({ max_completion_tokens: 2.5 }))).toBe('400 max_completion_tokens: must be an integer, got 2.5 [max_completion_tokens]');
    expect(refusal(() => chat({ n_predict: 0 }))).toBe('400 n_predict: must be -1 (no limit) or at least 1, got 0 [n_predict]');
    expect(refusal(() => chat({ stream: 'yes' }))).toBe('400 stream: must be true or false, got a string [stream]');
    expect(refusal(() => chat({ stream_options: { include_usage: 1 } }))).toBe('400 stream_options.include_usage: must be true or false, got a number [stream_options.include_usage]');
    expect(refusal(() => chat({ logit_bias: { abc: 1 } }))).toBe('400 logit_bias.abc: token id must be a non-negative integer [logit_bias.abc]');
    expect(refusal(() => chat({ logit_bias: { 5: 101 } }))).toBe('400 logit_bias.5: must be between -100 and 100, got 101 [logit_bias.5]');
    expect(refusal(() => chat({ logit_bias: [[5]] }))).toBe('400 logit_bias[0]: must be a [token id, bias] pair [logit_bias[0]]');
  });

  it('says what is wrong with numbers past double range and integers past 2^53 (not "a number, got a number")', () => {
    // JSON.parse reads 1e400 as Infinity, so this is what a client sending it produces.
    const body = (text: string) => parseChatRequest(JSON.parse(`{"messages": [{"role": "user", "content": "x"}], ${text}}`));
    expect(refusal(() => body('"temperature": 1e400'))).toBe('400 temperature: must be between 0 and 2, got a number too large to represent [temperature]');
    expect(refusal(() => body('"seed": -1e400'))).toBe('400 seed: must be a finite number, got a number too small to represent [seed]');
    expect(refusal(() => body('"max_tokens": 9007199254740994'))).toBe(
      '400 max_tokens: must be an integer of at most 9007199254740991, got 9007199254740994 [max_tokens]',
    );
    expect(refusal(() => body('"seed": -9007199254740994'))).toBe(
      '400 seed: must be an integer of at least -9007199254740991, got -9007199254740994 [seed]',
    );
    expect(body('"max_tokens": 9007199254740991').maxTokens).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('refuses free-form JSON nested too deep (tool schemas, arguments, template kwargs) with a 400, not a stack overflow', () => {
    // Built by JSON.parse, which does not recurse, as the HTTP layer builds it.
    const deep = (n: number) => JSON.parse('{"a":'.repeat(n) + '1' + '}'.repeat(n)) as Record<string, unknown>;
    const tool = (parameters: unknown) => ({ tools: [{ type: 'function', function: { name: 'f', parameters } }] });
    expect(refusal(() => chat(tool(deep(10_000))))).toBe('400 tools[0].function.parameters: is nested more than 64 levels deep [tools[0].function.parameters]');
    expect(refusal(() => chat({ chat_template_kwargs: deep(10_000) }))).toBe('400 chat_template_kwargs: is nested more than 64 levels deep [chat_template_kwargs]');
    const call = (args: unknown) => parseChatRequest({ messages: [user, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: args } }] }] });
    const argsPath = 'messages[1].tool_calls[0].function.arguments';
    expect(refusal(() => call(deep(10_000)))).toBe(`400 ${argsPath}: is nested more than 64 levels deep [${argsPath}]`);
    // The JSON text form reaches templates parsed, so the same limit holds for it.
    expect(refusal(() => call('['.repeat(10_000) + ']'.repeat(10_000)))).toBe(`400 ${argsPath}: is nested more than 64 levels deep [${argsPath}]`);
    // 64 levels are fine; so is arguments text that is not JSON at all.
    expect(chat(tool(deep(63))).tools).toHaveLength(1);
    expect(chat({ chat_template_kwargs: deep(63) }).templateKwargs).toBeTruthy();
    expect(call('not json {{{').messages[1]!.tool_calls![0]!.function.arguments).toBe('not json {{{');
  });

  it('checks stop strings', () => {
    expect(chat({ stop: ['a', 'b'] }).stop).toEqual(['a', 'b']);
    expect(chat({ stop: null }).stop).toEqual([]);
    expect(refusal(() => chat({ stop: Array(9).fill('x') }))).toBe('400 stop: at most 8 stop strings, got 9 [stop]');
    expect(refusal(() => chat({ stop: ['a', ''] }))).toBe('400 stop[1]: must not be empty [stop[1]]');
    expect(refusal(() => chat({ stop: ['a', 3] }))).toBe('400 stop[1]: must be a string, got a number [stop[1]]');
  });

  it('reads n, logprobs, response_format, grammar and speculative.n_max; refuses what does not fit, clearly', () => {
    expect(chat({ n: 3 }).n).toBe(3);
    expect(refusal(() => chat({ n: 0 }))).toBe('400 n: must be between 1 and 256, got 0 [n]');
    expect(chat({ logprobs: false }).logprobs).toBeNull();
    expect(chat({ logprobs: true }).logprobs).toBe(0);
    expect(chat({ logprobs: true, top_logprobs: 5 }).logprobs).toBe(5);
    expect(refusal(() => chat({ top_logprobs: 5 }))).toBe('400 top_logprobs: needs logprobs: true [top_logprobs]');
    expect(refusal(() => chat({ logprobs: true, top_logprobs: 21 }))).toBe('400 top_logprobs: must be between 0 and 20, got 21 [top_logprobs]');
    expect(chat({ response_format: { type: 'text' } }).constraint).toBeNull();
    expect(chat({ response_format: { type: 'json_object' } }).constraint).toEqual({ kind: 'json_schema', schema: { type: 'object' }, name: null, strict: true, param: 'response_format' });
    const schema = { type: 'object', properties: { a: { type: 'integer' } } };
    expect(chat({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } } }).constraint)
      .toEqual({ kind: 'json_schema', schema, name: 'x', strict: true, param: 'response_format.json_schema.schema' });
    expect(refusal(() => chat({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }))).toBe(
      '400 response_format.json_schema.schema: is required [response_format.json_schema.schema]');
    expect(refusal(() => chat({ response_format: { type: 'yaml' } }))).toBe(
      '400 response_format.type: must be one of text, json_object, json_schema, got "yaml" [response_format.type]');
    expect(chat({ grammar: 'root ::= "a"' }).constraint).toEqual({ kind: 'gbnf', grammar: 'root ::= "a"', param: 'grammar' });
    expect(refusal(() => chat({ grammar: 'root ::= "a"', json_schema: {} }))).toBe('400 grammar: give only one of response_format, json_schema and grammar [grammar]');
    const tools = [{ type: 'function', function: { name: 'f' } }];
    expect(refusal(() => chat({ tools, tool_choice: 'required', response_format: { type: 'json_object' } }))).toBe(
      '400 response_format: cannot be combined with a tool_choice that forces a tool call [response_format]');
    expect(chat({ speculative: { n_max: 0 } }).draftMax).toBe(0);
    expect(chat({ 'speculative.n_max': 6 }).draftMax).toBe(6);
    expect(refusal(() => chat({ speculative: { n_max: 300 } }))).toBe('400 speculative.n_max: must be between 0 and 256, got 300 [speculative.n_max]');
    expect(refusal(() => chat({ best_of: 2 }))).toBe('400 best_of: only 1 is supported (use n for several choices) [best_of]');
  });

  it('validates messages, naming the exact field', () => {
    const msgs = (...m: unknown[]) => () => parseChatRequest({ messages: m });
    expect(refusal(() => parseChatRequest({}))).toBe('400 messages: is required [messages]');
    expect(refusal(() => parseChatRequest({ messages: [] }))).toBe('400 messages: must contain at least one message [messages]');
    expect(refusal(() => parseChatRequest({ messages: 'hi' }))).toBe('400 messages: must be an array, got a string [messages]');
    expect(refusal(() => parseChatRequest([user]))).toBe('400 request body: must be a JSON object, got an array');
    expect(refusal(msgs(user, user, { role: 'robot', content: 'x' }))).toBe(
      '400 messages[2].role: must be one of system, user, assistant, tool [messages[2].role]',
    );
    expect(refusal(msgs(5))).toBe('400 messages[0]: must be a JSON object, got a number [messages[0]]');
    expect(refusal(msgs({ role: 'user' }))).toBe('400 messages[0].content: is required for role user [messages[0].content]');
    expect(refusal(msgs({ role: 'user', content: 7 }))).toBe(
      '400 messages[0].content: must be a string or an array of content parts, got a number [messages[0].content]',
    );
    expect(refusal(msgs({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }))).toBe(
      '400 messages[0].content[0].image_url.url: a URL that is not a data URL is not fetched: the server fetches nothing a request points at; send the image inline as a data URL (data:image/png;base64,...) [messages[0].content[0].image_url.url]',
    );
    expect(refusal(msgs({ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }))).toBe(
      '400 messages[0].content[0].type: input_audio content is not supported (text and image_url) [messages[0].content[0].type]',
    );
    expect(refusal(msgs({ role: 'user', content: [{ type: 'text' }] }))).toBe(
      '400 messages[0].content[0].text: is required [messages[0].content[0].text]',
    );
    expect(refusal(msgs(user, { role: 'assistant' }))).toBe(
      '400 messages[1].content: is required unless the message has tool_calls [messages[1].content]',
    );
    expect(refusal(msgs(user, { role: 'tool', content: 'r' }))).toBe('400 messages[1].tool_call_id: is required for role tool [messages[1].tool_call_id]');
    expect(refusal(msgs({ ...user, tool_calls: [] }))).toBe('400 messages[0].tool_calls: only assistant messages carry tool calls [messages[0].tool_calls]');
    expect(refusal(msgs(user, { role: 'assistant', tool_calls: [{ id: 'c', function: { arguments: '{}' } }] }))).toBe(
      '400 messages[1].tool_calls[0].function.name: is required [messages[1].tool_calls[0].function.name]',
    );
  });

  it('keeps a full tool conversation, developer as system, object arguments as JSON text', () => {
    const r = parseChatRequest({
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather' }, { type: 'text', text: 'in Paris?' }], name: 'ann' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: { city: 'Paris' } } }] },
        { role: 'tool', tool_call_id: 'c1', content: '21C' },
      ],
      tools: [{ type: 'function', function: { name: 'w', description: 'weather', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'w' } },
      parallel_tool_calls: false,
    });
    expect(r.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather' }, { type: 'text', text: 'in Paris?' }], name: 'ann' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', content: '21C', tool_call_id: 'c1' },
    ]);
    expect(r.tools).toEqual([{ type: 'function', function: { name: 'w', description: 'weather', parameters: { type: 'object' } } }]);
    expect(r.toolChoice).toEqual({ type: 'function', function: { name: 'w' } });
    expect(r.parallelToolCalls).toBe(false);
  });

  it('validates tools and tool_choice', () => {
    const tool = (name: unknown) => ({ type: 'function', function: { name } });
    expect(chat({ tools: [tool('a')] }).toolChoice).toBe('auto');
    expect(chat({ tools: [tool('a')], tool_choice: 'required' }).toolChoice).toBe('required');
    expect(refusal(() => chat({ tools: [tool('bad name')] }))).toBe(
      '400 tools[0].function.name: must be 1-64 characters of a-z, A-Z, 0-9, _ . - [tools[0].function.name]',
    );
    expect(refusal(() => chat({ tools: [tool('a'), tool('a')] }))).toBe('400 tools[1].function.name: duplicate tool name a [tools[1].function.name]');
    expect(refusal(() => chat({ tools: [{ type: 'retrieval' }] }))).toBe('400 tools[0].type: must be function [tools[0].type]');
    expect(refusal(() => chat({ tools: [{ type: 'function', function: { name: 'a', parameters: 'x' } }] }))).toBe(
      '400 tools[0].function.parameters: must be a JSON object, got a string [tools[0].function.parameters]',
    );
    expect(refusal(() => chat({ tool_choice: 'required' }))).toBe('400 tool_choice: required needs tools [tool_choice]');
    expect(refusal(() => chat({ tool_choice: 'sometimes' }))).toBe('400 tool_choice: must be one of auto, none, required [tool_choice]');
    expect(refusal(() => chat({ tools: [tool('a')], tool_choice: { type: 'function', function: { name: 'b' } } }))).toBe(
      '400 tool_choice.function.name: no tool named b in tools [tool_choice.function.name]',
    );
  });
});

describe('parseCompletionRequest', () => {
  it('accepts text, token ids and one-element batches', () => {
    expect(parseCompletionRequest({ prompt: 'Once', max_tokens: 4 })).toMatchObject({ prompt: 'Once', maxTokens: 4, stream: false });
    expect(parseCompletionRequest({ prompt: [1, 2, 3] }).prompt).toEqual([1, 2, 3]);
    expect(parseCompletionRequest({ prompt: ['Once'] }).prompt).toBe('Once');
    expect(parseCompletionRequest({ prompt: [[5, 6]] }).prompt).toEqual([5, 6]);
  });

  it('refuses missing, batched or odd prompts and unsupported options', () => {
    expect(refusal(() => parseCompletionRequest({}))).toBe('400 prompt: is required [prompt]');
    expect(refusal(() => parseCompletionRequest({ prompt: ['a', 'b'] }))).toBe('400 prompt: only one prompt per request is supported, got 2 [prompt]');
    expect(refusal(() => parseCompletionRequest({ prompt: { text: 'a' } }))).toBe('400 prompt: must be a string or an array of token ids, got an object [prompt]');
    expect(refusal(() => parseCompletionRequest({ prompt: [1, -2] }))).toBe('400 prompt[1]: must be at least 0, got -2 [prompt[1]]');
    expect(refusal(() => parseCompletionRequest({ prompt: 'a', echo: true }))).toBe('400 echo: echo is not supported [echo]');
    expect(refusal(() => parseCompletionRequest({ prompt: 'a', suffix: 'b' }))).toBe(
      '400 suffix: suffix is not supported here; use /v1/infill for fill-in-the-middle [suffix]',
    );
    expect(parseCompletionRequest({ prompt: 'a', logprobs: 2 }).logprobs).toBe(2);
    expect(refusal(() => parseCompletionRequest({ prompt: 'a', logprobs: 21 }))).toBe('400 logprobs: must be between 0 and 20, got 21 [logprobs]');
    expect(refusal(() => parseCompletionRequest({ prompt: 'a', top_logprobs: 2 }))).toBe(
      '400 top_logprobs: is a chat completions field; here logprobs is the number of alternatives [top_logprobs]');
    expect(parseCompletionRequest({ prompt: 'a', n: 3 }).n).toBe(3);
    expect(parseCompletionRequest({ prompt: 'a', json_schema: { type: 'string' } }).constraint?.kind).toBe('json_schema');
    expect(refusal(() => parseCompletionRequest({ prompt: 'a', response_format: { type: 'json_object' } }))).toBe(
      '400 response_format: is a chat completions field; use json_schema or grammar here [response_format]');
  });
});

describe('parseInfillRequest', () => {
  it("reads llama-server's infill shape", () => {
    const r = parseInfillRequest({
      input_prefix: 'def f(', input_suffix: '):\n', prompt: 'x', input_extra: [{ filename: 'a.py', text: 'import os\n' }, { text: 'y' }],
      n_predict: 32, t_max_predict_ms: 250, temperature: 0, stop: ['\n\n'], stream: false, samplers: 'ignored',
    });
    expect(r).toMatchObject({
      inputPrefix: 'def f(', inputSuffix: '):\n', prompt: 'x', maxTokens: 32, tMaxPredictMs: 250, stop: ['\n\n'],
      inputExtra: [{ filename: 'a.py', text: 'import os\n' }, { filename: '', text: 'y' }], sampling: { temperature: 0 },
    });
    expect(parseInfillRequest({})).toMatchObject({ inputPrefix: '', inputSuffix: '', prompt: '', inputExtra: [], tMaxPredictMs: null, supersedeKey: null });
    expect(parseInfillRequest({ supersede_key: 'file:///src/a.c' }).supersedeKey).toBe('file:///src/a.c');
  });

  it('names bad fields', () => {
    expect(refusal(() => parseInfillRequest({ input_prefix: 3 }))).toBe('400 input_prefix: must be a string, got a number [input_prefix]');
    expect(refusal(() => parseInfillRequest({ input_extra: [{ filename: 'a' }] }))).toBe('400 input_extra[0].text: is required [input_extra[0].text]');
    expect(refusal(() => parseInfillRequest({ t_max_predict_ms: -5 }))).toBe('400 t_max_predict_ms: must be at least 0, got -5 [t_max_predict_ms]');
    expect(refusal(() => parseInfillRequest({ supersede_key: 7 }))).toBe('400 supersede_key: must be a string, got a number [supersede_key]');
    expect(refusal(() => parseInfillRequest({ supersede_key: '' }))).toBe('400 supersede_key: must be 1-2048 characters, got 0 [supersede_key]');
    expect(parseInfillRequest({ n: 3 }).n).toBe(3);
    expect(refusal(() => parseInfillRequest({ n: 0 }))).toMatch(/^400 n: /);
    expect(refusal(() => parseInfillRequest({ logprobs: 3 }))).toBe('400 logprobs: log probabilities are not supported on infill [logprobs]');
    expect(parseInfillRequest({ n: 1, logprobs: false }).n).toBe(1);
  });
});

describe('tokenize and detokenize', () => {
  it('reads the fields with llama-server defaults', () => {
    expect(parseTokenizeRequest({ content: 'hi' })).toEqual({ content: 'hi', addSpecial: false, parseSpecial: true, withPieces: false });
    expect(parseTokenizeRequest({ content: '', add_special: true, with_pieces: true, parse_special: false })).toEqual(
      { content: '', addSpecial: true, parseSpecial: false, withPieces: true },
    );
    expect(parseDetokenizeRequest({ tokens: [1, 2] })).toEqual({ tokens: [1, 2] });
  });

  it('names bad fields', () => {
    expect(refusal(() => parseTokenizeRequest({}))).toBe('400 content: is required [content]');
    expect(refusal(() => parseTokenizeRequest({ content: 'x', with_pieces: 'yes' }))).toBe('400 with_pieces: must be true or false, got a string [with_pieces]');
    expect(refusal(() => parseDetokenizeRequest({ tokens: [1, 'a'] }))).toBe('400 tokens[1]: must be a number, got a string [tokens[1]]');
    expect(refusal(() => parseDetokenizeRequest({}))).toBe('400 tokens: is required [tokens]');
  });
});

describe('sessions', () => {
  it('allows safe file names only', () => {
    for (const ok of ['chat-1', 'A.b_c', 'x'.repeat(64), 'v1.2']) expect(sanitizeSessionName(ok)).toBe(ok);
    expect(refusal(() => sanitizeSessionName(''))).toBe('400 name: must be 1-64 characters, got 0 [name]');
    expect(refusal(() => sanitizeSessionName('x'.repeat(65)))).toBe('400 name: must be 1-64 characters, got 65 [name]');
    expect(refusal(() => sanitizeSessionName('.hidden'))).toBe('400 name: must not start with a dot [name]');
    expect(refusal(() => sanitizeSessionName('../etc/passwd'))).toBe('400 name: must not start with a dot [name]');
    expect(refusal(() => sanitizeSessionName('a/b'))).toBe(`400 name: may contain only letters, digits, '.', '_' and '-' (found "/") [name]`);
    expect(refusal(() => sanitizeSessionName('naïve'))).toBe(`400 name: may contain only letters, digits, '.', '_' and '-' (found "ï") [name]`);
    expect(refusal(() => sanitizeSessionName(5))).toBe('400 name: must be a string, got a number [name]');
  });

  it('reads a save request from messages or a prompt, not both', () => {
    expect(parseSessionSaveRequest({ name: 'work', messages: [user] })).toEqual({ name: 'work', messages: [{ role: 'user', content: 'Hi' }], tools: [], prompt: null });
    expect(parseSessionSaveRequest({ name: 'raw', prompt: 'text' })).toEqual({ name: 'raw', messages: null, tools: [], prompt: 'text' });
    expect(parseSessionSaveRequest({ name: 'latest' })).toEqual({ name: 'latest', messages: null, tools: [], prompt: null });
    expect(refusal(() => parseSessionSaveRequest({ name: 'x', messages: [user], prompt: 'p' }))).toBe('400 prompt: give messages or prompt, not both [prompt]');
    expect(refusal(() => parseSessionSaveRequest({ messages: [user] }))).toBe('400 name: is required [name]');
    expect(refusal(() => parseSessionSaveRequest({ name: 'a b' }))).toBe(`400 name: may contain only letters, digits, '.', '_' and '-' (found " ") [name]`);
    expect(refusal(() => parseSessionSaveRequest({ name: 'x', messages: [{ role: 'user' }] }))).toBe(
      '400 messages[0].content: is required for role user [messages[0].content]',
    );
  });
});
