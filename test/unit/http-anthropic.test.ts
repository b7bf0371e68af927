// Anthropic Messages: request conversion into chat messages, and the streamed block events.
import { describe, expect, it } from 'vitest';
import { parseMessagesRequest } from '../../backend/validation/anthropic-schema.js';
import { anthropicUsage, BlockStream, contentBlocks, stopReason } from '../../backend/http/anthropic-shapes.js';

const refusal = (body: unknown): string => {
  try { parseMessagesRequest(body); return 'accepted'; } catch (e) { return (e as Error).message; }
};

describe('parseMessagesRequest', () => {
  it('turns system, content blocks, tool_use and tool_result into chat messages', () => {
    const r = parseMessagesRequest({
      model: 'm', max_tokens: 10, system: [{ type: 'text', text: 'Be ' }, { type: 'text', text: 'brief.' }], stop_sequences: ['END'],
      temperature: 0.5, top_k: 3, stream: true, thinking: { type: 'disabled' },
      tools: [{ name: 'w', description: 'weather', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: '' }, { type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 't1', name: 'w', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'Sunny' }] }, { type: 'text', text: 'And tomorrow?' }] },
      ],
    });
    expect(r.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', content: 'Sunny', tool_call_id: 't1' },
      { role: 'user', content: 'And tomorrow?' },
    ]);
    expect(r.tools).toEqual([{ type: 'function', function: { name: 'w', description: 'weather', parameters: { type: 'object' } } }]);
    expect([r.toolChoice, r.parallelToolCalls, r.stop, r.stream, r.maxTokens]).toEqual(['required', false, ['END'], true, 10]);
    expect(r.sampling).toEqual({ temperature: 0.5, topK: 3 });
    expect(r.templateKwargs).toEqual({ enable_thinking: false });
    expect(parseMessagesRequest({ max_tokens: 1, tools: r.tools.map((t) => ({ name: t.function.name, input_schema: {} })), tool_choice: { type: 'tool', name: 'w' }, messages: [{ role: 'user', content: 'x' }] }).toolChoice)
      .toEqual({ type: 'function', function: { name: 'w' } });
  });

  it('refuses what it cannot take, naming the field', () => {
    const user = [{ role: 'user', content: 'x' }];
    expect(refusal({ messages: user })).toBe('max_tokens: is required');
    expect(refusal({ max_tokens: 0, messages: user })).toBe('max_tokens: must be at least 1, got 0');
    expect(refusal({ max_tokens: 1, messages: [] })).toBe('messages: must contain at least one message');
    expect(refusal({ max_tokens: 1, messages: [{ role: 'tool', content: 'x' }] })).toBe('messages[0].role: must be one of user, assistant, system');
    expect(refusal({ max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] }))
      .toBe('messages[0].content[0].type: tool_use blocks belong to assistant messages');
    expect(refusal({ max_tokens: 1, messages: user, tool_choice: { type: 'any' } })).toBe('tool_choice: any needs tools');
    expect(refusal({ max_tokens: 1, messages: user, tools: [{ type: 'web_search_20250305', name: 'web_search' }], tool_choice: { type: 'tool', name: 'web_search' } }))
      .toMatch(/^tool_choice: tool needs tools|no tool named web_search/);
  });
});

describe('Anthropic shapes', () => {
  it('streams blocks in order: thinking (with its signature), text, then each tool call with its JSON', () => {
    const s = new BlockStream();
    const events = [
      ...s.push([{ type: 'reasoning', text: 'plan' }, { type: 'content', text: 'Hi' }, { type: 'content', text: ' there' }]),
      ...s.push([{ type: 'tool_call', index: 0, id: 'c1', name: 'w' }, { type: 'tool_args', index: 0, text: '{"a":1}' }]),
      ...s.end(),
    ];
    expect(events.map((e) => [e.event, (e.data as { index?: number }).index])).toEqual([
      ['content_block_start', 0], ['content_block_delta', 0], ['content_block_delta', 0], ['content_block_stop', 0],
      ['content_block_start', 1], ['content_block_delta', 1], ['content_block_delta', 1], ['content_block_stop', 1],
      ['content_block_start', 2], ['content_block_delta', 2], ['content_block_stop', 2],
    ]);
    expect(events[2]!.data).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: '' } });
    expect(events[8]!.data).toEqual({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'c1', name: 'w', input: {} } });
    expect(events[9]!.data).toEqual({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } });
    // An answer with nothing in it still has one (empty) text block.
    expect(new BlockStream().end().map((e) => e.event)).toEqual(['content_block_start', 'content_block_stop']);
  });

  it('whole content, stop reasons and usage', () => {
    const call = { id: 'c', type: 'function' as const, function: { name: 'w', arguments: '{"x":2}' } };
    expect(contentBlocks('think', 'text', [call])).toEqual([
      { type: 'thinking', thinking: 'think', signature: '' }, { type: 'text', text: 'text' }, { type: 'tool_use', id: 'c', name: 'w', input: { x: 2 } },
    ]);
    expect(contentBlocks('', '', [])).toEqual([{ type: 'text', text: '' }]);
    expect([stopReason('stop', [], undefined), stopReason('length', [], undefined), stopReason('stop', [], 'END'), stopReason('stop', [call], undefined)])
      .toEqual(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use']);
    expect(anthropicUsage(100, 60, 5)).toEqual({ input_tokens: 40, output_tokens: 5, cache_read_input_tokens: 60, cache_creation_input_tokens: 0 });
  });
});
