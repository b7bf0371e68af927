// Turning a reasoning model's thinking off or on for one request, whatever its template offers:
// the server's default (--reasoning) goes in as the templates' enable_thinking variable unless the
// request set it (chat_template_kwargs, reasoning_effort, Anthropic's thinking, the Responses
// reasoning.effort). Templates with the switch (Qwen3) render thinking off themselves, with an
// empty `<think></think>` block; where a template opens the thinking regardless (a prompt ending
// in `<think>`: DeepSeek-R1 distills, QwQ), thinking off closes that block at once, so the model
// starts with its answer.
import type { RenderedPrompt } from './chat-prompt.js';
import { promptOpensThinking } from './reasoning.js';

/** The server's default: auto leaves thinking to the template; on and off set enable_thinking. */
export type ReasoningMode = 'auto' | 'on' | 'off';
export const REASONING_MODES: readonly ReasoningMode[] = ['auto', 'on', 'off'];

/** The template variables with the server's default laid under what the request set. */
export function withThinkingDefault(kwargs: Record<string, unknown>, mode: ReasoningMode): Record<string, unknown> {
  if (mode === 'auto' || kwargs.enable_thinking !== undefined) return kwargs;
  return { ...kwargs, enable_thinking: mode === 'on' };
}

/** Thinking off, and the template left it open: the block closed as template text (not client text). */
export function closeOpenThinking(prompt: RenderedPrompt, kwargs: Record<string, unknown>): RenderedPrompt {
  if (kwargs.enable_thinking !== false || !promptOpensThinking(prompt.text)) return prompt;
  const close = prompt.text.endsWith('\n') ? '\n</think>\n\n' : '\n\n</think>\n\n';
  return { ...prompt, text: prompt.text + close, segments: [...prompt.segments, { text: close }] };
}
