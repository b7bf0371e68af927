// A conversation cut to fit the model's context (the planner drops its oldest turns) can lose an
// assistant's tool calls and keep their results; a server rejects a tool result that follows no
// call. Those orphans are dropped, and calls left without any result get one saying so.
import type { ChatMessage } from '../../contract/chat.js';

export function wellFormedToolTurns(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let open = new Set<string>();
  const closeOpen = (): void => {
    // Calls of the previous assistant message that never got a result.
    const last = [...out].reverse().find((m) => m.role === 'assistant');
    for (const id of open) out.push({ role: 'tool', toolCallId: id, name: last?.toolCalls?.find((c) => c.id === id)?.name ?? '', content: 'no result (the conversation was cut to fit)' });
    open = new Set();
  };
  for (const m of messages) {
    if (m.role === 'tool') {
      if (m.toolCallId && open.has(m.toolCallId)) { open.delete(m.toolCallId); out.push(m); }
      continue;
    }
    closeOpen();
    out.push(m);
    if (m.role === 'assistant' && m.toolCalls?.length) open = new Set(m.toolCalls.map((c) => c.id));
  }
  closeOpen();
  return out;
}
