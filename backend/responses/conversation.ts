// A Responses conversation (input and output items, oldest first) as the chat messages the model's
// template renders: instructions become the system message, messages keep their text, a
// function_call joins the assistant turn it was written in (as a tool call), a
// function_call_output becomes a tool message, and reasoning items are left out (chat templates
// drop past thinking). Rendered this way, a continued conversation's prompt starts with exactly
// the text of the earlier turns, so the slot's KV of them is reused.
import type { ConversationItem } from '../../contract/responses.js';
import type { ChatMessage, ContentPart, ToolCall } from '../chat/chat-types.js';
import { imageFromUrl } from '../validation/images.js';
import { qualifiedName } from '../validation/responses-schema.js';

export function chatMessagesOf(instructions: string | null, items: readonly ConversationItem[]): ChatMessage[] {
  const out: ChatMessage[] = instructions !== null && instructions !== '' ? [{ role: 'system', content: instructions }] : [];
  for (const item of items) {
    if (item.type === 'message') {
      out.push({ role: item.role === 'developer' ? 'system' : item.role, content: messageContent(item.content) });
    } else if (item.type === 'function_call') {
      // A namespace's member is offered to the model under its qualified name (validation/responses-schema.ts).
      const name = item.namespace !== undefined ? qualifiedName(item.namespace, item.name) : item.name;
      const call: ToolCall = { id: item.call_id, type: 'function', function: { name, arguments: item.arguments } };
      const last = out.at(-1);
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      // An output no call asked for goes as its tool's result, by name.
      const by = item.call_id !== undefined ? { tool_call_id: item.call_id }
        : item.name !== undefined ? { name: item.namespace !== undefined ? qualifiedName(item.namespace, item.name) : item.name } : {};
      out.push({ role: 'tool', content: item.output, ...by });
    }
  }
  return out;
}

/**
 * A message's text (its parts joined as they always were), or with input_image parts, text and
 * image parts in order (the URL was checked when the request came in; a stored one is read again).
 */
function messageContent(content: Extract<ConversationItem, { type: 'message' }>['content'] | Array<{ type: string; text?: string }>): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!content.some((p) => p.type === 'input_image')) return content.map((p) => ('text' in p ? p.text : '')).join('');
  const parts: ContentPart[] = [];
  for (const p of content) {
    if (p.type === 'input_image') parts.push(imageFromUrl((p as { image_url: string }).image_url, 'input_image.image_url'));
    else if (parts.at(-1)?.type === 'text') (parts.at(-1) as { text: string }).text += (p as { text: string }).text;
    else parts.push({ type: 'text', text: (p as { text: string }).text });
  }
  return parts;
}
