// The /v1/sessions API as the panel, the commands and @strata show it.
import type { ChatMessage } from './chat.js';

export interface SessionInfo {
  name: string;
  tokens: number | null;
  bytes: number | null;
  model: string | null;
  savedAt: number | null;
  path: string | null;
  messages: number | null;
}

export interface RestoredSession {
  name: string;
  /** The conversation, when the server returns it (it needs it to continue the chat). */
  messages: ChatMessage[] | null;
  tokens: number | null;
}
