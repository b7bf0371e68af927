import { describe, expect, it } from 'vitest';
import { conversationFromHistory } from '../../extension/chat/history.js';
import { sessionsMarkdown } from '../../extension/chat/format.js';
import { messageText, parseToolInput, toChatMessages } from '../../extension/lm/convert.js';

// Shapes of vscode.LanguageModelTextPart / ToolCallPart / ToolResultPart, without vscode.
const text = (value: string) => ({ value });
const call = (callId: string, name: string, input: object) => ({ callId, name, input });
const result = (callId: string, content: unknown[]) => ({ callId, content });

describe('language model message conversion', () => {
  it('maps roles, tool calls and tool results to chat messages in the right order', () => {
    const out = toChatMessages([
      { role: 3, content: [text('be brief')] },
      { role: 1, content: [text('weather in '), text('Oslo?')], name: 'me' },
      { role: 2, content: [text(''), call('c1', 'weather', { city: 'Oslo' })] },
      { role: 1, content: [result('c1', [text('sunny')]), text('and tomorrow?')] },
      { role: 1, content: [{ mimeType: 'image/png', data: new Uint8Array(1) }] },
    ]);
    expect(out).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather in Oslo?', name: 'me' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'sunny' },
      { role: 'user', content: 'and tomorrow?' },
    ]);
  });
  it('parses tool arguments, keeping broken JSON visible', () => {
    expect(parseToolInput('{"a":1}')).toEqual({ a: 1 });
    expect(parseToolInput('')).toEqual({});
    expect(parseToolInput('{"a":')).toEqual({ _unparsed: '{"a":' });
    expect(parseToolInput('3')).toEqual({ value: 3 });
  });
  it('gives the text of a message for token counting', () => {
    expect(messageText({ role: 1, content: [text('a'), result('x', [text('b')])] })).toBe('ab');
    expect(messageText('plain')).toBe('plain');
  });
});

describe('participant history', () => {
  const P = 'strata.chat';
  const md = (value: string) => ({ value: { value } });
  it('builds the conversation, skipping commands and other participants, starting from a restored session', () => {
    const conv = conversationFromHistory([
      { prompt: 'old question', participant: P },
      { participant: P, response: [md('old answer')], result: {} },
      { prompt: 'other', participant: 'someone.else' },
      { prompt: 'work', command: 'restore', participant: P },
      { participant: P, command: 'restore', response: [md('Restored')], result: { metadata: { restored: { name: 'work', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] } } } },
      { prompt: 'next', participant: P },
      { participant: P, response: [md('part 1 '), md('part 2')], result: {} },
      { prompt: '', command: 'stats', participant: P },
      { participant: P, command: 'stats', response: [md('stats table')], result: {} },
    ], P);
    expect(conv).toEqual([
      { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' },
      { role: 'user', content: 'next' }, { role: 'assistant', content: 'part 1 part 2' },
    ]);
  });
  it('lists sessions as a markdown table', () => {
    expect(sessionsMarkdown([])).toMatch(/No saved sessions yet/);
    const md2 = sessionsMarkdown([{ name: 'a|b', tokens: 10, bytes: 3 * 1024 * 1024, model: 'tiny', savedAt: Date.UTC(2025, 4, 6, 7, 8), path: null, messages: 2 }]);
    expect(md2.split('\n')[2]).toBe('| a\\|b | 10 | 3.0 MiB | tiny | 2025-05-06 07:08 |');
  });
});
