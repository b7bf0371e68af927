// Model outputs for the tool-call parser, in the shapes each model family writes (Qwen2.5 and
// Hermes: <tool_call> blocks; Llama 3.x: bare JSON with "parameters", <|python_tag|>; Mistral:
// [TOOL_CALLS] arrays and the v11 name[ARGS] form), plus text that only looks like calls.
// `content` is all content the parser should give back, concatenated; invalid calls stay text.
import type { ToolCallFormat } from '../../backend/chat/chat-types.js';

export interface ToolCallFixture {
  name: string;
  format: ToolCallFormat;
  input: string;
  content: string;
  calls: Array<{ name: string; arguments: Record<string, unknown>; id?: string }>;
}

const weather = (city: string): string => `{"name": "get_weather", "arguments": {"city": "${city}"}}`;

export const FIXTURES: ToolCallFixture[] = [
  // --- Hermes / Qwen ---
  {
    name: 'qwen single call',
    format: 'hermes',
    input: '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "San Francisco, CA", "unit": "fahrenheit"}}\n</tool_call>',
    content: '',
    calls: [{ name: 'get_current_weather', arguments: { location: 'San Francisco, CA', unit: 'fahrenheit' } }],
  },
  {
    name: 'qwen two calls with text around',
    format: 'hermes',
    input: `Let me check both cities.\n<tool_call>\n${weather('Paris')}\n</tool_call>\n<tool_call>\n${weather('Tokyo')}\n</tool_call>\nOne moment.`,
    // The newlines before each call are the template's, not content (chat/tool-calls.ts).
    content: 'Let me check both cities.\nOne moment.',
    calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'get_weather', arguments: { city: 'Tokyo' } }],
  },
  {
    name: 'hermes call cut before its closing tag (model stopped)',
    format: 'hermes',
    input: '<tool_call>\n{"name": "search", "arguments": {"q": "llama.cpp"}}\n</tool_',
    content: '',
    calls: [{ name: 'search', arguments: { q: 'llama.cpp' } }],
  },
  {
    name: 'hermes arguments as a JSON string',
    format: 'hermes',
    input: '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>',
    content: '',
    calls: [{ name: 'f', arguments: { a: 1 } }],
  },
  {
    name: 'hermes tags, braces and non-ASCII inside argument strings',
    format: 'hermes',
    input: 'Writing.<tool_call>{"name": "write_file", "arguments": {"path": "a.md", "text": "x </tool_call> y <tool_call> {[}] \\" 日本語 😀"}}</tool_call>',
    content: 'Writing.',
    calls: [{ name: 'write_file', arguments: { path: 'a.md', text: 'x </tool_call> y <tool_call> {[}] " 日本語 😀' } }],
  },
  {
    name: 'hermes array of calls in one block',
    format: 'hermes',
    input: `<tool_call>[${weather('Oslo')}, {"name": "now", "arguments": {}}]</tool_call>`,
    content: '',
    calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }, { name: 'now', arguments: {} }],
  },
  {
    name: 'hermes call without arguments',
    format: 'hermes',
    input: '<tool_call>{"name": "now"}</tool_call>\nDone.',
    content: '\nDone.',
    calls: [{ name: 'now', arguments: {} }],
  },
  {
    name: 'hermes invalid JSON stays text, a later valid call still counts',
    format: 'hermes',
    input: 'Use <tool_call>{"name": "f", "arguments": {oops}}</tool_call> then <tool_call>{"name": "g", "arguments": {}}</tool_call>',
    content: 'Use <tool_call>{"name": "f", "arguments": {oops}}</tool_call> then',
    calls: [{ name: 'g', arguments: {} }],
  },
  {
    name: 'hermes unbalanced JSON closed by the tag stays text',
    format: 'hermes',
    input: 'a <tool_call>{"name": "f", "arguments": {"x": 1}</tool_call> b',
    content: 'a <tool_call>{"name": "f", "arguments": {"x": 1}</tool_call> b',
    calls: [],
  },
  {
    name: 'hermes tag mentioned in prose',
    format: 'hermes',
    input: 'Wrap calls in <tool_call> tags, like <tool_call>this</tool_call>. x < y, <tool_cal.',
    content: 'Wrap calls in <tool_call> tags, like <tool_call>this</tool_call>. x < y, <tool_cal.',
    calls: [],
  },
  {
    name: 'hermes call cut short stays text',
    format: 'hermes',
    input: 'Sure <tool_call>{"name": "f", "argu',
    content: 'Sure <tool_call>{"name": "f", "argu',
    calls: [],
  },
  {
    name: 'hermes call without a name stays text',
    format: 'hermes',
    input: '<tool_call>{"arguments": {}}</tool_call>',
    content: '<tool_call>{"arguments": {}}</tool_call>',
    calls: [],
  },
  {
    name: 'hermes text after the JSON instead of the closing tag stays text',
    format: 'hermes',
    input: '<tool_call>{"name": "f", "arguments": {}} and more',
    content: '<tool_call>{"name": "f", "arguments": {}} and more',
    calls: [],
  },
  {
    name: 'hermes output ending in a partial tag',
    format: 'hermes',
    input: 'The tag is <tool',
    content: 'The tag is <tool',
    calls: [],
  },
  // --- Llama 3.x ---
  {
    name: 'llama bare JSON call',
    format: 'llama3',
    input: '{"name": "get_weather", "parameters": {"city": "Paris"}}',
    content: '',
    calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
  },
  {
    name: 'llama bare JSON call after whitespace, with type',
    format: 'llama3',
    input: '\n\n {"type": "function", "name": "get_weather", "parameters": {"city": "Lima"}}',
    content: '',
    calls: [{ name: 'get_weather', arguments: { city: 'Lima' } }],
  },
  {
    name: 'llama python_tag JSON call',
    format: 'llama3',
    input: '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Rome"}}',
    content: '',
    calls: [{ name: 'get_weather', arguments: { city: 'Rome' } }],
  },
  {
    name: 'llama built-in tool call',
    format: 'llama3',
    input: '<|python_tag|>brave_search.call(query="weather in Paris", count=3)',
    content: '',
    calls: [{ name: 'brave_search', arguments: { query: 'weather in Paris', count: 3 } }],
  },
  {
    name: 'llama JSON answer is not a call',
    format: 'llama3',
    input: '{"answer": 42, "name": "x"}',
    content: '{"answer": 42, "name": "x"}',
    calls: [],
  },
  {
    name: 'llama JSON with a name but no parameters is not a call',
    format: 'llama3',
    input: ' {"name": "Ada Lovelace", "born": 1815}',
    content: ' {"name": "Ada Lovelace", "born": 1815}',
    calls: [],
  },
  {
    name: 'llama JSON after prose is not a call',
    format: 'llama3',
    input: 'Here: {"name": "f", "parameters": {}}',
    content: 'Here: {"name": "f", "parameters": {}}',
    calls: [],
  },
  {
    name: 'llama python_tag with plain code stays text',
    format: 'llama3',
    input: 'Run this <|python_tag|>print(1 + 1)',
    content: 'Run this <|python_tag|>print(1 + 1)',
    calls: [],
  },
  {
    name: 'llama plain answer',
    format: 'llama3',
    input: '  The capital of France is Paris.',
    content: '  The capital of France is Paris.',
    calls: [],
  },
  // --- Mistral ---
  {
    name: 'mistral array with the model id',
    format: 'mistral',
    input: '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}]',
    content: '',
    calls: [{ name: 'get_weather', arguments: { city: 'Paris' }, id: 'a1b2c3d4e' }],
  },
  {
    name: 'mistral two calls after a space, text before',
    format: 'mistral',
    input: `Sure.[TOOL_CALLS] [${weather('Paris')}, ${weather('Bern')}]`,
    content: 'Sure.',
    calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'get_weather', arguments: { city: 'Bern' } }],
  },
  {
    name: 'mistral v11 name[ARGS] calls',
    format: 'mistral',
    input: '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]now[CALL_ID]x9y8z7w6v[ARGS]{}',
    content: '',
    calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'now', arguments: {}, id: 'x9y8z7w6v' }],
  },
  {
    name: 'mistral invalid call stays text',
    format: 'mistral',
    input: '[TOOL_CALLS][{"name": 5}] ok',
    content: '[TOOL_CALLS][{"name": 5}] ok',
    calls: [],
  },
  {
    name: 'mistral tag in prose stays text',
    format: 'mistral',
    input: 'The [TOOL_CALLS] token starts calls; [TOOL_CALL',
    content: 'The [TOOL_CALLS] token starts calls; [TOOL_CALL',
    calls: [],
  },
];
