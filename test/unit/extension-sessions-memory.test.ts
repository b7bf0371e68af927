import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RestoredSession, SessionInfo } from '../../contract/sessions.js';
import type { ChatMessage } from '../../contract/chat.js';
import { FileConversationStore, rememberingSessions, type SessionClient } from '../../extension/sessions/conversation-memory.js';

/** Like the real server: restore answers tokens but no messages. */
function server(): SessionClient & { other(): string } {
  const names = new Set<string>();
  const info = (name: string): SessionInfo => ({ name, tokens: 10, bytes: 1, model: 'm', savedAt: 0, path: null, messages: null });
  return {
    saveSession: async (name: string) => { names.add(name); return info(name); },
    restoreSession: async (name: string): Promise<RestoredSession> => {
      if (!names.has(name)) throw new Error(`no session named '${name}'`);
      return { name, messages: null, tokens: 10 };
    },
    deleteSession: async (name: string) => { if (!names.delete(name)) throw new Error(`no session named '${name}'`); },
    other: () => 'still there',
  };
}

describe('rememberingSessions', () => {
  const msgs: ChatMessage[] = [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }];

  it('fills in the messages of a session the extension saved, and forgets them on delete', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-conv-'));
    const c = rememberingSessions(server(), new FileConversationStore(dir));
    await c.saveSession('work.v1', msgs);
    expect((await c.restoreSession('work.v1')).messages).toEqual(msgs);
    expect(statSync(join(dir, readdirSync(dir)[0]!)).mode & 0o777).toBe(0o600);
    expect(c.other()).toBe('still there');
    await c.deleteSession('work.v1');
    expect(readdirSync(dir)).toEqual([]);
    await expect(c.restoreSession('work.v1')).rejects.toThrow("no session named 'work.v1'");
  });

  it('keeps names inside its folder and stores nothing when the server refuses', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-conv-'));
    const store = new FileConversationStore(dir);
    store.save('../../evil', msgs);
    expect(readdirSync(dir)).toEqual(['%2E%2E%2F%2E%2E%2Fevil.json']);
    expect(store.load('../../evil')).toEqual(msgs);
    const refusing: SessionClient = { ...server(), saveSession: async () => { throw new Error('name: may contain only letters'); } };
    const failing = rememberingSessions(refusing, store);
    await expect(failing.saveSession('bad name', msgs)).rejects.toThrow('name: may contain only letters');
    expect(store.load('bad name')).toBeNull();
  });

  it('keeps a conversation\'s settings beside its messages; a file from before a setting, or with a value it does not know, reads without it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-conv-'));
    const store = new FileConversationStore(dir);
    expect(store.loadSettings('work')).toBeNull();
    store.saveSettings('work', { mode: 'agent', thinking: 'high' });
    expect(store.loadSettings('work')).toBeNull(); // settings join a saved conversation, never make one
    store.save('work', msgs);
    store.saveSettings('work', { mode: 'agent', thinking: 'high' });
    expect(store.loadSettings('work')).toEqual({ mode: 'agent', thinking: 'high' });
    expect(store.load('work')).toEqual(msgs);
    const file = join(dir, readdirSync(dir)[0]!);
    writeFileSync(file, JSON.stringify({ name: 'work', messages: msgs, mode: 'agent' }));
    expect(store.loadSettings('work')).toEqual({ mode: 'agent' });
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), mode: 'root', thinking: 'max' }));
    expect(store.loadSettings('work')).toEqual({});
  });
});
