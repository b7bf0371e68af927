// A chat participant's conversation from VS Code's chat history, as server messages. Pure:
// works on plain shapes of ChatRequestTurn / ChatResponseTurn.
import type { ChatMessage } from '../../contract/chat.js';

export interface RequestTurnLike { prompt: string; command?: string | undefined; participant: string }
export interface ResponseTurnLike {
  participant: string;
  command?: string | undefined;
  response: ReadonlyArray<unknown>;
  result: { metadata?: { [key: string]: unknown } | undefined };
}
export type TurnLike = RequestTurnLike | ResponseTurnLike;

export interface RestoredMeta { name: string; messages: ChatMessage[] }

const isResponse = (t: TurnLike): t is ResponseTurnLike => 'response' in t;

/**
 * The answer's text: markdown parts only (a progress line such as "Thinking…" has a plain string
 * value and is no answer), without the preface the participant put before it (a trimming note).
 */
function responseText(t: ResponseTurnLike): string {
  const text = t.response.map((p) => {
    const md = ((p as { value?: unknown }).value as { value?: unknown } | undefined)?.value;
    return typeof md === 'string' ? md : '';
  }).join('');
  const preface = t.result.metadata?.preface;
  return typeof preface === 'string' && preface && text.startsWith(preface) ? text.slice(preface.length) : text;
}

/**
 * The conversation so far: messages of a session restored in this chat (kept in that turn's
 * result metadata) followed by the ordinary question/answer turns after it. Slash-command turns
 * are bookkeeping, not conversation, and are skipped.
 */
export function conversationFromHistory(history: readonly TurnLike[], participant: string): ChatMessage[] {
  let out: ChatMessage[] = [];
  for (let i = 0; i < history.length; i++) {
    const t = history[i]!;
    if (t.participant !== participant) continue;
    if (isResponse(t)) {
      const restored = t.result.metadata?.restored as RestoredMeta | undefined;
      if (restored && Array.isArray(restored.messages)) {
        out = restored.messages.map((m) => ({ ...m }));
        continue;
      }
      if (t.command) continue;
      const text = responseText(t);
      if (text) out.push({ role: 'assistant', content: text });
    } else {
      if (t.command) continue;
      out.push({ role: 'user', content: t.prompt });
    }
  }
  return out;
}
