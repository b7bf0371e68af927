// VS Code language-model messages -> the server's chat messages. Duck-typed on purpose (no
// `instanceof vscode.X`) so it runs and is tested without VS Code.
import type { ChatMessage, ToolCall } from '../../contract/chat.js';

/** LanguageModelChatMessageRole: 1 user, 2 assistant; 3 is system in newer VS Code builds. */
export interface LmMessageLike {
  readonly role: number;
  readonly content: ReadonlyArray<unknown>;
  readonly name?: string | undefined;
}

const isText = (p: unknown): p is { value: string } => typeof (p as { value?: unknown })?.value === 'string';
const isToolCall = (p: unknown): p is { callId: string; name: string; input: unknown } =>
  typeof (p as { callId?: unknown })?.callId === 'string' && typeof (p as { name?: unknown }).name === 'string' && 'input' in (p as object);
const isToolResult = (p: unknown): p is { callId: string; content: unknown[] } =>
  typeof (p as { callId?: unknown })?.callId === 'string' && Array.isArray((p as { content?: unknown }).content);

/** Text of a tool result's parts (text parts as is, anything else as JSON). */
function resultText(content: unknown[]): string {
  return content.map((c) => (isText(c) ? c.value : typeof c === 'string' ? c : JSON.stringify(c))).join('');
}

export function toChatMessages(messages: readonly LmMessageLike[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const texts: string[] = [];
    const calls: ToolCall[] = [];
    const results: ChatMessage[] = [];
    for (const part of m.content) {
      if (isText(part)) texts.push(part.value);
      else if (isToolCall(part)) calls.push({ id: part.callId, name: part.name, arguments: JSON.stringify(part.input ?? {}) });
      else if (isToolResult(part)) results.push({ role: 'tool', toolCallId: part.callId, content: resultText(part.content) });
      // Images and other data parts: the local models take text only.
    }
    // Tool results answer the assistant's calls just before them, so they come first.
    out.push(...results);
    const content = texts.join('');
    if (m.role === 2) {
      if (content || calls.length) out.push({ role: 'assistant', content, ...(calls.length ? { toolCalls: calls } : {}) });
    } else if (content) {
      out.push({ role: m.role === 3 ? 'system' : 'user', content, ...(m.name ? { name: m.name } : {}) });
    }
  }
  return out;
}

/** Tool-call arguments text -> the object VS Code wants; a model's broken JSON becomes {} plus the raw text. */
export function parseToolInput(args: string): object {
  try {
    const v: unknown = JSON.parse(args || '{}');
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { _unparsed: args };
  }
}

/** Plain text of a message, for token counting. */
export function messageText(m: LmMessageLike | string): string {
  if (typeof m === 'string') return m;
  return m.content.map((p) => (isText(p) ? p.value : isToolCall(p) ? `${p.name}${JSON.stringify(p.input)}` : isToolResult(p) ? resultText(p.content) : '')).join('');
}
