// previous_response_id continues from the model's own tokens: the stored response's prompt and
// output token ids, then what the template writes after an answer (the end of the assistant turn)
// and the new turn (the request's input and the generation prompt). The request names that state,
// so its held tokens stand in for a re-render of the earlier turns (docs/design.md: a request's
// answer is a function of the request); the thinking the model wrote stays in the conversation,
// and the KV of every earlier token is reusable, whatever the answer's text would tokenize to.
//
// The tail is found by rendering, never by guessing the template's syntax: the whole conversation
// with the stored answer's text replaced by a marker, whose rendering after the marker is the end
// of the assistant turn, the new turn and the generation prompt. When the answer holds function
// calls, the template's text of the calls (the model already wrote them) is cut from its start:
// found as what the closed answer renders after the marker with the calls, less what it renders
// without them. A template whose renders do not line up that way gives no tail, and the caller
// renders the whole conversation again.
import { randomBytes } from 'node:crypto';
import type { PromptSegment } from '../../native/lib/addon.js';
import type { ConversationItem } from '../../contract/responses.js';
import { renderChatPrompt, type ChatPromptModel, type RenderedPrompt } from '../chat/chat-prompt.js';
import type { ChatMessage, ToolSpec } from '../chat/chat-types.js';
import type { RenderOptions } from '../chat/template.js';
import { closeOpenThinking } from '../chat/thinking-switch.js';
import { chatMessagesOf } from './conversation.js';

export interface TailInput {
  instructions: string | null;
  /** The stored conversation: its input items, then its `outputCount` output items. */
  earlier: readonly ConversationItem[];
  outputCount: number;
  /** The request's new input items. */
  added: readonly ConversationItem[];
  /** Tools as rendered (none when tool_choice is none). */
  tools: ToolSpec[];
  /** Template variables (enable_thinking), the server's default laid under. */
  kwargs: Record<string, unknown>;
}

/** `segments` from character `from` of their joined text. */
export function segmentsFrom(segments: readonly PromptSegment[], from: number): PromptSegment[] {
  const out: PromptSegment[] = [];
  let at = 0;
  for (const s of segments) {
    const end = at + s.text.length;
    if (end > from) {
      const text = from > at ? s.text.slice(from - at) : s.text;
      if (text) out.push(s.plain ? { text, plain: true } : { text });
    }
    at = end;
  }
  return out;
}

/** Segments of `r` after the first `mark`, or null when it is not there. */
function afterMark(r: RenderedPrompt, mark: string): PromptSegment[] | null {
  const at = r.text.indexOf(mark);
  return at < 0 ? null : segmentsFrom(r.segments, at + mark.length);
}

const textOf = (segments: readonly PromptSegment[]): string => segments.map((s) => s.text).join('');

/**
 * The text that follows the stored response's own tokens, as template and client segments; null
 * when the template's renders do not line up (see above).
 */
export function continuationTail(model: ChatPromptModel, t: TailInput): RenderedPrompt | null {
  const opts: RenderOptions = {
    ...(t.tools.length > 0 ? { tools: t.tools } : {}),
    ...(Object.keys(t.kwargs).length ? { extraContext: t.kwargs } : {}),
  };
  const inputs = chatMessagesOf(t.instructions, t.earlier.slice(0, t.earlier.length - t.outputCount));
  const answer = chatMessagesOf(null, t.earlier.slice(t.earlier.length - t.outputCount));
  if (answer.length > 1 || answer.some((m) => m.role !== 'assistant')) return null;
  // Random, so no client text can hold it.
  const mark = `STRATA-ANSWER-${randomBytes(8).toString('hex')}`;
  const calls = answer[0]?.tool_calls ?? [];
  const marked: ChatMessage = { role: 'assistant', content: mark, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
  const whole = closeOpenThinking(
    renderChatPrompt(model, [...inputs, marked, ...chatMessagesOf(null, t.added)], { ...opts, addGenerationPrompt: true }), t.kwargs,
  );
  const tail = afterMark(whole, mark);
  if (!tail) return null;
  let skip = 0;
  if (calls.length > 0) {
    const withCalls = afterMark(renderChatPrompt(model, [...inputs, marked], { ...opts, addGenerationPrompt: false }), mark);
    const without = afterMark(renderChatPrompt(model, [...inputs, { role: 'assistant', content: mark }], { ...opts, addGenerationPrompt: false }), mark);
    if (!withCalls || !without) return null;
    const a = textOf(withCalls);
    const b = textOf(without);
    if (!a.endsWith(b) || !textOf(tail).startsWith(a.slice(0, a.length - b.length))) return null;
    skip = a.length - b.length;
  }
  const segments = segmentsFrom(tail, skip);
  return { text: textOf(segments), segments, addSpecial: false, images: [] };
}
