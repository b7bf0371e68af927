// A Responses conversation (input and output items, oldest first) as the chat messages the model's
// template renders: instructions become the system message, messages keep their text, a
// function_call joins the assistant turn it was written in (as a tool call), a
// function_call_output becomes a tool message, and reasoning items are left out (chat templates
// drop past thinking). Rendered this way, a continued conversation's prompt starts with exactly
// the text of the earlier turns, so the slot's KV of them is reused.
import type { ConversationItem } from '../../contract/responses.js';
import type { ChatMessage, ToolCall } from '../chat/chat-types.js';

export function chatMessagesOf(instructions: string | null, items: readonly ConversationItem[]): ChatMessage[] {
  const out: ChatMessage[] = instructions !== null && instructions !== '' ? [{ role: 'system', content: instructions }] : [];
  for (const item of items) {
    if (item.type === 'message') {
      const text = typeof item.content === 'string' ? item.content : item.content.map((p) => p.text).join('');
      out.push({ role: item.role === 'developer' ? 'system' : item.role, content: text });
    } else if (item.type === 'function_call') {
      const call: ToolCall = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = out.at(-1);
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      out.push({ role: 'tool', content: item.output, tool_call_id: item.call_id });
    }
  }
  return out;
}
