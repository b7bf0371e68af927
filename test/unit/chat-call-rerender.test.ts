// A tool call written the way the grammar makes the model write it (tool-grammar.ts) comes back,
// once the parser has read it and the client has sent the calls back, as the very same text in
// the next prompt, through each model family's real template: the condition for an agent's KV to
// be reused up to the tool's result at every step. One and several calls, with content before them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CallStyle, ChatMessage, ToolSpec } from '../../backend/chat/chat-types.js';
import { renderChatPrompt } from '../../backend/chat/chat-prompt.js';
import { ClientTextGuard } from '../../backend/chat/client-text.js';
import { createChatTemplate, type ChatTemplate } from '../../backend/chat/template.js';
import { ToolCallStreamParser } from '../../backend/chat/tool-calls.js';

const FIXTURES = new URL('../fixtures/templates/', import.meta.url);
const template = (file: string | null): ChatTemplate => createChatTemplate({
  chatTemplate: file === null ? null : readFileSync(new URL(file, FIXTURES), 'utf8'), bosText: '<s>', eosText: '</s>',
}, { now: () => new Date(2025, 0, 5) });

const tools: ToolSpec[] = [
  { type: 'function', function: { name: 'move', parameters: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'number' } }, required: ['x', 'y'] } } },
  { type: 'function', function: { name: 'say', parameters: { type: 'object', properties: { text: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['text'] } } },
];
const user: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Move, then say hi.' }];

const HERMES_ONE = '<tool_call>\n{"name": "move", "arguments": {"x": 1, "y": 2.5}}\n</tool_call>';
const HERMES_TWO = `${HERMES_ONE}\n<tool_call>\n{"name": "say", "arguments": {"text": "h\\"i ✓", "tags": ["a", "b"]}}\n</tool_call>`;

interface Case { file: string | null; style: CallStyle; answers: string[]; noSystem?: boolean }
const hermes: CallStyle = { format: 'hermes', mistral: 'array', json: 'python' };
const CASES: Case[] = [
  { file: 'Qwen-Qwen2.5-7B-Instruct.jinja', style: hermes, answers: [HERMES_ONE, HERMES_TWO, `Moving now.\n${HERMES_TWO}`] },
  { file: 'Qwen-Qwen3-0.6B.jinja', style: hermes, answers: [HERMES_ONE, HERMES_TWO, `Moving now.\n${HERMES_ONE}`] },
  // Hermes 3 renders no content beside calls.
  { file: 'NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja', style: hermes, answers: [HERMES_ONE, HERMES_TWO] },
  // Templates without tools: calls folded into the assistant's text, tools into the system message.
  { file: 'ggml-vocab-qwen2.jinja', style: hermes, answers: [HERMES_ONE, `Moving now.\n${HERMES_TWO}`] },
  { file: null, style: hermes, answers: [HERMES_TWO, `Moving now.\n${HERMES_ONE}`] },
  // Llama 3.1 refuses two calls in one message.
  { file: 'meta-llama-Llama-3.1-8B-Instruct.jinja', style: { ...hermes, format: 'llama3' }, answers: ['{"name": "move", "parameters": {"x": -3, "y": 0.25}}'] },
  { file: 'meta-llama-Llama-3.2-3B-Instruct.jinja', style: { ...hermes, format: 'llama3' }, answers: ['{"name": "say", "parameters": {"text": "hi"}}'] },
  {
    // Nemo writes the system prompt into the last message only when that is the user's: the prefix
    // changes after any call whatever the call's text (a property of the template), so none here.
    file: 'mistralai-Mistral-Nemo-Instruct-2407.jinja', style: { ...hermes, format: 'mistral' }, noSystem: true,
    answers: ['[TOOL_CALLS][{"name": "move", "arguments": {"x": 1, "y": 2.5}, "id": "abc123XYZ"}, {"name": "say", "arguments": {"text": "hi"}, "id": "def456UVW"}]'],
  },
  {
    file: 'unsloth-mistral-Devstral-Small-2507.jinja', style: { ...hermes, format: 'mistral', mistral: 'named' },
    answers: ['[TOOL_CALLS]move[ARGS]{"x": 1, "y": 2.5}', '[TOOL_CALLS]move[ARGS]{"x": 1, "y": 2.5}[TOOL_CALLS]say[ARGS]{"text": "hi", "tags": []}'],
  },
  {
    file: 'Mistral-Small-3.2-24B-Instruct-2506.jinja', style: { ...hermes, format: 'mistral', mistral: 'named-id' },
    answers: ['[TOOL_CALLS]move[CALL_ID]abc123XYZ[ARGS]{"x": 1, "y": 2.5}[TOOL_CALLS]say[CALL_ID]def456UVW[ARGS]{"text": "hi"}'],
  },
];

describe('tool calls re-render as the model wrote them', () => {
  it.each(CASES.map((c) => [c.file ?? 'ChatML fallback', c] as const))('%s', (_name, c) => {
    const t = template(c.file);
    expect(t.callStyle).toEqual(c.style);
    const model = { template: t, bosText: '<s>', clientText: new ClientTextGuard([]) };
    const asked = c.noSystem ? user.slice(1) : user;
    const before = renderChatPrompt(model, asked, { tools, addGenerationPrompt: true }).text;
    for (const answer of c.answers) {
      const parser = new ToolCallStreamParser(c.style.format, { json: c.style.json });
      const deltas = [...parser.push(answer), ...parser.end()];
      const content = deltas.map((d) => (d.type === 'content' ? d.text : '')).join('');
      expect(parser.calls.length).toBeGreaterThan(0);
      const next = renderChatPrompt(model, [
        ...asked,
        { role: 'assistant', content: content || null, tool_calls: [...parser.calls] },
        ...parser.calls.map((call) => ({ role: 'tool' as const, tool_call_id: call.id, content: 'done' })),
      ], { tools, addGenerationPrompt: true }).text;
      expect(next.slice(before.length, before.length + answer.length)).toBe(answer);
      expect(next.startsWith(before)).toBe(true);
    }
  });
});

describe('what the parser returns', () => {
  it('arguments in the template\'s JSON style; no whitespace between content and a call; an id the format keeps', () => {
    const p = new ToolCallStreamParser('hermes');
    const out = [...p.push('Sure.\n'), ...p.push('\n<tool_call>\n{"name":"f","arguments":{"a":[1,{"b":null}]}}\n</tool_call>'), ...p.end()];
    expect(out.filter((d) => d.type === 'content')).toEqual([{ type: 'content', text: 'Sure.' }]);
    expect(p.calls[0]!.function.arguments).toBe('{"a": [1, {"b": null}]}');
    const compact = new ToolCallStreamParser('hermes', { json: 'compact' });
    compact.push('<tool_call>{"name": "f", "arguments": {"a": [1, 2]}}</tool_call>');
    expect(compact.calls[0]!.function.arguments).toBe('{"a":[1,2]}');
  });

  it('whitespace before something that is not a call stays content, character for character', () => {
    const p = new ToolCallStreamParser('hermes');
    const text = 'a \n<tool_call>not json</tool_call> b  ';
    const out = [...p.push(text.slice(0, 5)), ...p.push(text.slice(5)), ...p.end()];
    expect(out.map((d) => (d.type === 'content' ? d.text : '')).join('')).toBe(text);
    expect(p.calls).toHaveLength(0);
  });

  it('holds back only whitespace that a call may follow: plain text streams as it comes', () => {
    const p = new ToolCallStreamParser('hermes');
    expect(p.push('Hello ')).toEqual([{ type: 'content', text: 'Hello' }]);
    expect(p.push('world')).toEqual([{ type: 'content', text: ' world' }]);
    expect(p.end()).toEqual([]);
  });
});
