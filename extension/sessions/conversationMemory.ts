// The server saves a session's KV state and token count, not its messages. To show a restored
// conversation (panel chat, @strata) the extension keeps the messages it saved, one small
// JSON file per session, and fills them in when the server's restore answer has none.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StrataClient } from '../client/client.js';
import type { ChatMessage } from '../../contract/chat.js';

export interface ConversationStore {
  save(name: string, messages: ChatMessage[]): void;
  load(name: string): ChatMessage[] | null;
  remove(name: string): void;
}

export class FileConversationStore implements ConversationStore {
  constructor(private readonly dir: string) {}

  save(name: string, messages: ChatMessage[]): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(this.file(name), JSON.stringify({ name, messages }), { mode: 0o600 });
  }

  load(name: string): ChatMessage[] | null {
    try {
      const v = JSON.parse(readFileSync(this.file(name), 'utf8')) as { messages?: unknown };
      return Array.isArray(v.messages) ? (v.messages as ChatMessage[]) : null;
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
  wrapped.saveSession = async (name, messages, signal) => {
    const saved = await client.saveSession(name, messages, signal);
    store.save(saved.name || name, messages);
    return saved;
  };
  wrapped.restoreSession = async (name, signal) => {
    const r = await client.restoreSession(name, signal);
    return r.messages?.length ? r : { ...r, messages: store.load(r.name || name) };
  };
  wrapped.deleteSession = async (name, signal) => {
    await client.deleteSession(name, signal);
    store.remove(name);
  };
  return wrapped;
}
