import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ChatTemplateError, createChatTemplate, detectToolFormat, type ChatTemplate } from '../../backend/chat/template.js';
import type { ChatMessage, ToolSpec } from '../../backend/chat/chat-types.js';
import { strftime } from '../../backend/chat/jinja-env.js';
import { ToolCallStreamParser } from '../../backend/chat/tool-calls.js';

const FIXTURES = new URL('../fixtures/templates/', import.meta.url);
const source = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8');
const NOW = () => new Date(2025, 0, 5, 9, 30);

function model(name: string | null, bosText = '<s>', eosText = '</s>'): ChatTemplate {
  return createChatTemplate({ chatTemplate: name === null ? null : source(name), bosText, eosText }, { now: NOW });
}

const TOOLS: ToolSpec[] = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Get the weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
}];

const TOOL_TURN: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Paris?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: '{"temp": 21}' },
];

const TOOLS_SYSTEM = '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n'
  + 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n'
  + '{"type": "function", "function": {"name": "get_weather", "description": "Get the weather", "parameters": '
  + '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}\n</tools>\n\n'
  + 'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n'
  + '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

const QWEN_TOOL_TURN = `<|im_start|>system\nYou are terse.\n\n${TOOLS_SYSTEM}<|im_end|>\n`
  + '<|im_start|>user\nWeather in Paris?<|im_end|>\n'
  + '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n'
  + '<|im_start|>user\n<tool_response>\n{"temp": 21}\n</tool_response><|im_end|>\n'
  + '<|im_start|>assistant\n';

describe('llama.cpp chat template conformance cases', () => {
  interface Case { name: string; template: string; expected: string; expectedJinja: string; bos: string; eos: string; supportedWithJinja: boolean }
  const cases = (JSON.parse(source('llama-cpp-chat-template-cases.json')) as Case[]).filter((c) => c.supportedWithJinja);
  const conversation: ChatMessage[] = [
    { role: 'system', content: 'You are a helpful assistant' },
    { role: 'user', content: 'Hello' },
    { role: 'assistant', content: 'Hi there' },
    { role: 'user', content: 'Who are you' },
    { role: 'assistant', content: '   I am an assistant   ' },
    { role: 'user', content: 'Another question' },
  ];
  it('has the cases', () => expect(cases.length).toBeGreaterThanOrEqual(30));
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const t = createChatTemplate({ chatTemplate: c.template, bosText: c.bos, eosText: c.eos });
    expect(t.source).toBe('model');
    expect(t.render(conversation, {})).toBe(c.expectedJinja || c.expected);
  });
});

describe('Qwen2.5 template', () => {
  const t = model('Qwen-Qwen2.5-7B-Instruct.jinja');

  it('is detected as Hermes with native tools', () => {
    expect([t.source, t.toolFormat, t.nativeTools, t.fallbackReason]).toEqual(['model', 'hermes', true, null]);
  });

  it('renders tools, a tool call (arguments as an object) and its result', () => {
    expect(t.render(TOOL_TURN, { tools: TOOLS })).toBe(QWEN_TOOL_TURN);
  });

  it('renders its default system prompt and no generation prompt when asked', () => {
    expect(t.render([{ role: 'user', content: 'Hi' }], { addGenerationPrompt: false })).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n',
    );
  });

  it('writes tool calls the Hermes parser reads back', () => {
    const calls = [
      { id: 'call_a', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_b', type: 'function' as const, function: { name: 'now', arguments: '{}' } },
    ];
    const text = t.render([{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: calls }], { addGenerationPrompt: false });
    const reply = text.slice(text.lastIndexOf('<|im_start|>assistant\n') + '<|im_start|>assistant\n'.length, text.lastIndexOf('<|im_end|>'));
    const parser = new ToolCallStreamParser(t.toolFormat);
    parser.push(reply);
    parser.end();
    expect(parser.calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([['get_weather', { city: 'Paris' }], ['now', {}]]);
  });
});

describe('the qwen2 vocab GGUF template (no tool support)', () => {
  const t = model('ggml-vocab-qwen2.jinja');

  it('gets Hermes tools injected into the system message', () => {
    expect([t.source, t.toolFormat, t.nativeTools]).toEqual(['model', 'hermes', false]);
    expect(t.render(TOOL_TURN, { tools: TOOLS })).toBe(QWEN_TOOL_TURN);
  });

  it('renders a plain chat with its own default system prompt, text parts joined by newlines', () => {
    expect(t.render([{ role: 'user', content: [{ type: 'text', text: 'Hello' }, { type: 'text', text: 'there' }] }], {})).toBe(
      '<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello\nthere<|im_end|>\n<|im_start|>assistant\n',
    );
  });
});

describe('ChatML fallback', () => {
  it('is used without a template and says so', () => {
    const t = model(null);
    expect([t.source, t.fallbackReason, t.toolFormat, t.nativeTools]).toEqual(['fallback', 'the model has no chat template', 'hermes', true]);
    const msgs: ChatMessage[] = [
      { role: 'system', content: 'S' }, { role: 'user', content: 'U1' }, { role: 'assistant', content: 'A1' }, { role: 'user', content: 'U2' },
    ];
    expect(t.render(msgs, {})).toBe(
      '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\nU2<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(t.render(TOOL_TURN, { tools: TOOLS })).toBe(QWEN_TOOL_TURN);
  });

  it('replaces a template that does not parse or cannot render a plain chat', () => {
    const broken = createChatTemplate({ chatTemplate: '{% for m in messages %}{{ m.content }}', bosText: '', eosText: '' });
    expect(broken.source).toBe('fallback');
    expect(broken.fallbackReason).toMatch(/does not parse/);
    const failing = createChatTemplate({ chatTemplate: '{{ messages[0].content + undefined_thing.x }}', bosText: '', eosText: '' });
    expect(failing.source).toBe('fallback');
    expect(failing.fallbackReason).toMatch(/fails on a plain conversation/);
    expect(failing.render([{ role: 'user', content: 'Hi' }], {})).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  });
});

describe('Llama 3.x templates', () => {
  it('3.1: JSON calls with "parameters", its built-in date, tools in the first user message', () => {
    const t = model('meta-llama-Llama-3.1-8B-Instruct.jinja', '<|begin_of_text|>');
    expect([t.toolFormat, t.nativeTools]).toEqual(['llama3', true]);
    expect(t.render([{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Hi' }], {})).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n'
      + 'You are terse.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
    const out = t.render(TOOL_TURN, { tools: TOOLS });
    expect(out).toContain('Environment: ipython\n');
    expect(out).toContain('"name": "get_weather"');
    expect(out).toContain('Weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>');
    expect(out.endsWith('<|start_header_id|>assistant<|end_header_id|>\n\n')).toBe(true);
  });

  it('3.1: the template refusing two calls in one message becomes a "raised" error', () => {
    const t = model('meta-llama-Llama-3.1-8B-Instruct.jinja');
    const two: ChatMessage = { role: 'assistant', content: null, tool_calls: [TOOL_TURN[2]!.tool_calls![0]!, { ...TOOL_TURN[2]!.tool_calls![0]!, id: 'call_2' }] };
    let err: unknown;
    try { t.render([{ role: 'user', content: 'x' }, two], { tools: TOOLS }); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(ChatTemplateError);
    expect((err as ChatTemplateError).kind).toBe('raised');
    expect((err as Error).message).toBe('chat template rejected the messages: This model only supports single tool-calls at once!');
  });

  it('3.2: strftime_now gives the (pinned) current date', () => {
    const t = model('meta-llama-Llama-3.2-3B-Instruct.jinja');
    expect(t.render([{ role: 'user', content: 'Hi' }], {})).toContain('Today Date: 05 Jan 2025\n');
  });
});

describe('Mistral Nemo template', () => {
  const t = model('mistralai-Mistral-Nemo-Instruct-2407.jinja');

  it('renders calls and results with the same 9-character id', () => {
    expect([t.toolFormat, t.nativeTools]).toEqual(['mistral', true]);
    const out = t.render(TOOL_TURN.slice(1), { tools: TOOLS });
    const m = /\[TOOL_CALLS\]\[\{"name": "get_weather", "arguments": \{"city": "Paris"\}, "id": "([A-Za-z0-9]{9})"\}\]<\/s>\[TOOL_RESULTS\]\{"content": \{"temp": 21\}, "call_id": "([A-Za-z0-9]{9})"\}\[\/TOOL_RESULTS\]$/.exec(out);
    expect(m).not.toBeNull();
    expect(m![1]).toBe(m![2]);
    expect(out.startsWith('<s>[AVAILABLE_TOOLS][{"type": "function", "function": {"name": "get_weather"')).toBe(true);
  });

  it("reports the template's own rule when roles do not alternate", () => {
    expect(() => t.render([{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }], {})).toThrow(
      'chat template rejected the messages: After the optional system message, conversation roles must alternate user/assistant/user/assistant/...',
    );
  });
});

describe('templates without a system role or tools', () => {
  it('Gemma 2: system merged into the first user turn, tool results folded into a user turn', () => {
    const t = model('google-gemma-2-2b-it.jinja');
    expect([t.toolFormat, t.nativeTools]).toEqual(['hermes', false]);
    expect(t.render([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], {})).toBe(
      '<s><start_of_turn>user\nBe brief.\nHi<end_of_turn>\n<start_of_turn>model\n',
    );
    const out = t.render([...TOOL_TURN, { role: 'user', content: 'And Rome?' }], { tools: TOOLS });
    expect(out).toBe(
      `<s><start_of_turn>user\nYou are terse.\n\n${TOOLS_SYSTEM}\nWeather in Paris?<end_of_turn>\n`
      + '<start_of_turn>model\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><end_of_turn>\n'
      + '<start_of_turn>user\n<tool_response>\n{"temp": 21}\n</tool_response>\nAnd Rome?<end_of_turn>\n<start_of_turn>model\n',
    );
  });

  it('DeepSeek Coder: its default system prompt, or ours with tools', () => {
    const t = model('deepseek-ai-deepseek-coder-33b-instruct.jinja', '<｜begin▁of▁sentence｜>');
    expect(t.render([{ role: 'user', content: 'Sort a list in Python' }], {})).toBe(
      '<｜begin▁of▁sentence｜>You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, '
      + 'and you only answer questions related to computer science. For politically sensitive questions, security and privacy issues, '
      + 'and other non-computer science questions, you will refuse to answer\n### Instruction:\nSort a list in Python\n### Response:\n',
    );
    const out = t.render([{ role: 'user', content: 'Weather?' }], { tools: TOOLS });
    expect(out).toBe(`<｜begin▁of▁sentence｜>${TOOLS_SYSTEM}### Instruction:\nWeather?\n### Response:\n`);
  });

  it('DeepSeek V3.1 (a tool format we do not parse) gets Hermes tools injected', () => {
    const t = model('deepseek-ai-DeepSeek-V3.1.jinja');
    expect([t.toolFormat, t.nativeTools]).toEqual(['hermes', false]);
    expect(t.render([{ role: 'user', content: 'Weather?' }], { tools: TOOLS })).toContain(`${TOOLS_SYSTEM}<｜User｜>Weather?<｜Assistant｜>`);
  });
});

describe('render options and errors', () => {
  it('passes chat_template_kwargs, but never over messages or tokens', () => {
    const t = model('Qwen-Qwen3-0.6B.jinja');
    const msgs: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    expect(t.render(msgs, { extraContext: { enable_thinking: false } })).toBe(
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    );
    expect(t.render(msgs, { extraContext: { messages: [], bos_token: 'X', raise_exception: 1 } })).toBe(t.render(msgs, {}));
  });

  it('turns a failure inside the template into a "render" error', () => {
    const t = createChatTemplate({
      chatTemplate: "{% for m in messages %}{% if m.content == 'boom' %}{% for x in m.missing %}{% endfor %}{% endif %}{{ m.content }}{% endfor %}",
      bosText: '', eosText: '',
    });
    expect(t.source).toBe('model');
    let err: unknown;
    try { t.render([{ role: 'user', content: 'boom' }], {}); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(ChatTemplateError);
    expect((err as ChatTemplateError).kind).toBe('render');
    expect((err as Error).message).toMatch(/^chat template failed to render: /);
  });

  it('gives Jinja no undefined keys (`in` tests stay false)', () => {
    const t = createChatTemplate({
      chatTemplate: "{% for m in messages %}{{ 'tool_calls' in m }},{{ 'name' in m }};{% endfor %}", bosText: '', eosText: '',
    });
    expect(t.render([{ role: 'user', content: 'a' }, { role: 'user', content: 'b', name: 'bob' }], {})).toBe('false,false;false,true;');
  });
});

describe('detectToolFormat and strftime', () => {
  it('reads the format from template texts', () => {
    expect(detectToolFormat(source('Qwen-Qwen2.5-7B-Instruct.jinja'))).toBe('hermes');
    expect(detectToolFormat(source('NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja'))).toBe('hermes');
    expect(detectToolFormat(source('meta-llama-Llama-3.1-8B-Instruct.jinja'))).toBe('llama3');
    expect(detectToolFormat(source('meta-llama-Llama-3.2-3B-Instruct.jinja'))).toBe('llama3');
    expect(detectToolFormat(source('mistralai-Mistral-Nemo-Instruct-2407.jinja'))).toBe('mistral');
    expect(detectToolFormat(source('deepseek-ai-DeepSeek-V3.1.jinja'))).toBe('none');
    expect(detectToolFormat(source('ggml-vocab-qwen2.jinja'))).toBe('none');
  });

  it('formats dates in English whatever the locale', () => {
    const d = new Date(2024, 6, 26, 14, 5, 9);
    expect(strftime(d, '%d %b %Y')).toBe('26 Jul 2024');
    expect(strftime(d, '%A, %B %d, %y %H:%M:%S %I%p %j %%')).toBe('Friday, July 26, 24 14:05:09 02PM 208 %');
  });
});
