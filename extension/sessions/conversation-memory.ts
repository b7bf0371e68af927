// The server saves a session's KV state and token count, not its messages. To show a restored
// conversation (panel chat, @strata) the extension keeps the messages it saved, one small
// JSON file per session, and fills them in when the server's restore answer has none.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StrataClient } from '../client/client.js';
import type { ChatMessage } from '../../contract/chat.js';
import { isChatMode } from '../../contract/agent.js';
import { isThinkingLevel, type ConversationSettings } from '../../contract/panel.js';

export interface ConversationStore {
  save(name: string, messages: ChatMessage[]): void;
  load(name: string): ChatMessage[] | null;
  remove(name: string): void;
  /** The conversation's settings (Ask / Agent, thinking), kept beside its messages. */
  saveSettings(name: string, settings: ConversationSettings): void;
  /** What was saved of them (a file from before a setting existed lacks it). */
  loadSettings(name: string): Partial<ConversationSettings> | null;
}

export class FileConversationStore implements ConversationStore {
  constructor(private readonly dir: string) {}

  save(name: string, messages: ChatMessage[]): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(this.file(name), JSON.stringify({ name, messages }), { mode: 0o600 });
  }

  load(name: string): ChatMessage[] | null {
    const v = this.read(name);
    return Array.isArray(v?.messages) ? (v.messages as ChatMessage[]) : null;
  }

  saveSettings(name: string, settings: ConversationSettings): void {
    const v = this.read(name);
    if (!v) return;
    writeFileSync(this.file(name), JSON.stringify({ ...v, mode: settings.mode, thinking: settings.thinking }), { mode: 0o600 });
  }

  loadSettings(name: string): Partial<ConversationSettings> | null {
    const v = this.read(name);
    if (!v) return null;
    return { ...(isChatMode(v.mode) ? { mode: v.mode } : {}), ...(isThinkingLevel(v.thinking) ? { thinking: v.thinking } : {}) };
  }

  private read(name: string): { messages?: unknown; mode?: unknown; thinking?: unknown } | null {
    try {
      return JSON.parse(readFileSync(this.file(name), 'utf8')) as { messages?: unknown; mode?: unknown; thinking?: unknown };
    } catch {
      return null;
    }
  }

  remove(name: string): void {
    rmSync(this.file(name), { force: true });
  }

  private file(name: string): string {
    // encodeURIComponent keeps any name inside the folder ('/' and '..' cannot survive it as a path).
    return join(this.dir, `${encodeURIComponent(name).replace(/\./g, '%2E')}.json`);
  }
}

export type SessionClient = Pick<StrataClient, 'saveSession' | 'restoreSession' | 'deleteSession'>;

/** The same client, with saved conversations remembered and restored alongside the server's session. */
export function rememberingSessions<C extends SessionClient>(client: C, store: ConversationStore): C {
  const wrapped = Object.create(client) as C;
  wrapped.saveSession = async (name, messages, signal, opts) => {
    const saved = await client.saveSession(name, messages, signal, opts);
    store.save(saved.name || name, messages);
    return saved;
  };
  wrapped.restoreSession = async (name, signal) => {
    const r = await client.restoreSession(name, signal);
    const kept = store.load(r.name || name);
    // The server keeps role and text only; an agent conversation's tool calls live in the kept copy.
    const richer = kept?.some((m) => m.toolCalls?.length || m.toolCallId) && (!r.messages || r.messages.length === kept.length);
    return r.messages?.length && !richer ? r : { ...r, messages: kept };
  };
  wrapped.deleteSession = async (name, signal) => {
    await client.deleteSession(name, signal);
    store.remove(name);
  };
  return wrapped;
}
