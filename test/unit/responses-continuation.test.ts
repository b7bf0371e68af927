// previous_response_id's tail (responses/continuation.ts) through real templates: what follows the
// model's own tokens is the end of its turn, then the new turn and the generation prompt, so the
// continued prompt is the whole conversation's rendering whenever the model wrote what the template
// renders; the thinking the model wrote stays (the whole rendering would drop it); and the
// client's text in the tail stays client text (never parsed as control tokens).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ConversationItem } from '../../contract/responses.js';
import { renderChatPrompt } from '../../backend/chat/chat-prompt.js';
import { ClientTextGuard } from '../../backend/chat/client-text.js';
import { createChatTemplate } from '../../backend/chat/template.js';
import { continuationTail, segmentsFrom } from '../../backend/responses/continuation.js';
import { chatMessagesOf } from '../../backend/responses/conversation.js';

const FIXTURES = new URL('../fixtures/templates/', import.meta.url);
const modelOf = (file: string | null) => ({
  template: createChatTemplate({
    chatTemplate: file === null ? null : readFileSync(new URL(file, FIXTURES), 'utf8'), bosText: '<s>', eosText: '</s>',
  }, { now: () => new Date(2025, 0, 5) }),
  bosText: '<s>', clientText: new ClientTextGuard(['<|im_end|>', '<|im_start|>', '</s>', '[INST]']),
});

const message = (text: string): ConversationItem => ({ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] });
const user = (text: string): ConversationItem => ({ type: 'message', role: 'user', content: text });

/** Turn 1's prompt + what the model wrote + the tail, against the whole conversation rendered. */
function continued(file: string | null, wrote: string, output: ConversationItem[], added: ConversationItem[], instructions: string | null = 'Be brief.') {
  const model = modelOf(file);
  const input = [user('Name a lake.')];
  const turn1 = renderChatPrompt(model, chatMessagesOf(instructions, input), { addGenerationPrompt: true });
  const earlier = [...input, ...output];
  const tail = continuationTail(model, { instructions, earlier, outputCount: output.length, added, tools: [], kwargs: {} });
  const whole = renderChatPrompt(model, chatMessagesOf(instructions, [...earlier, ...added]), { addGenerationPrompt: true });
  return { text: tail === null ? null : turn1.text + wrote + tail.text, whole: whole.text, tail };
}

describe('continuationTail', () => {
  const FILES = [
    null, 'Qwen-Qwen2.5-7B-Instruct.jinja', 'Qwen-Qwen3-0.6B.jinja', 'meta-llama-Llama-3.1-8B-Instruct.jinja',
    'google-gemma-2-2b-it.jinja', 'microsoft-Phi-3.5-mini-instruct.jinja', 'deepseek-ai-DeepSeek-V3.1.jinja',
  ];
  it.each(FILES)('%s: the model\'s answer + the tail is the whole conversation rendered', (file) => {
    const instructions = file?.startsWith('google-gemma') ? null : 'Be brief.'; // Gemma 2 refuses a system message
    const r = continued(file, 'Lake Baikal.', [message('Lake Baikal.')], [user('And a <|im_end|> river?')], instructions);
    expect(r.text).toBe(r.whole);
  });

  it('Mistral Nemo (the system message rides on the last user turn): the earlier turns stay as the model read them', () => {
    const r = continued('mistralai-Mistral-Nemo-Instruct-2407.jinja', 'Lake Baikal.', [message('Lake Baikal.')], [user('And a river?')]);
    expect(r.text!.startsWith('<s>[INST]Be brief.\n\nName a lake.[/INST]Lake Baikal.</s>')).toBe(true);
    expect(r.tail!.text.endsWith('And a river?[/INST]')).toBe(true);
  });

  it('the thinking the model wrote stays; the whole rendering drops it', () => {
    const wrote = '<think>\nSomething deep.\n</think>\n\nLake Baikal.';
    const output: ConversationItem[] = [
      { type: 'reasoning', id: 'rs_1', status: 'completed', summary: [], content: [{ type: 'reasoning_text', text: 'Something deep.' }] }, message('Lake Baikal.'),
    ];
    const r = continued('Qwen-Qwen3-0.6B.jinja', wrote, output, [user('And a river?')]);
    expect(r.text).toContain('Something deep.');
    expect(r.whole).not.toContain('Something deep.');
    expect(r.tail!.text).toBe('<|im_end|>\n<|im_start|>user\nAnd a river?<|im_end|>\n<|im_start|>assistant\n');
  });

  it.each(['Qwen-Qwen2.5-7B-Instruct.jinja', 'Qwen-Qwen3-0.6B.jinja'])('%s: a function call the model wrote, then its output: the tool turn follows the call', (file) => {
    const call = '<tool_call>\n{"name": "move", "arguments": {"x": 1}}\n</tool_call>';
    const output: ConversationItem[] = [{ type: 'function_call', id: 'fc_1', status: 'completed', call_id: 'c1', name: 'move', arguments: '{"x": 1}' }];
    const r = continued(file, call, output, [{ type: 'function_call_output', call_id: 'c1', output: 'moved' }]);
    expect(r.text).toBe(r.whole);
    expect(r.tail!.text.startsWith('<|im_end|>\n<|im_start|>user\n<tool_response>\nmoved\n</tool_response>')).toBe(true);
  });

  it('the client\'s text in the tail stays client text', () => {
    const r = continued(null, 'Baikal.', [message('Baikal.')], [user('say <|im_end|>')]);
    const plain = r.tail!.segments.filter((s) => s.plain).map((s) => s.text).join('');
    expect(plain).toBe('<|im_end|>');
    expect(r.tail!.text).toContain('say <|im_end|>');
    expect(r.tail!.addSpecial).toBe(false);
  });

  it('segmentsFrom cuts inside a segment and keeps the kinds', () => {
    expect(segmentsFrom([{ text: 'ab' }, { text: 'cd', plain: true }, { text: 'ef' }], 3)).toEqual([{ text: 'd', plain: true }, { text: 'ef' }]);
    expect(segmentsFrom([{ text: 'ab' }], 2)).toEqual([]);
  });
});
