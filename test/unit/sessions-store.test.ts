import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore, type SessionMeta } from '../../backend/sessions/session-store.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

function store(): SessionStore {
  const base = mkdtempSync(join(tmpdir(), 'strata-sessions-'));
  dirs.push(base);
  return new SessionStore(join(base, 'nested', 'sessions'));
}

const meta = (name: string): SessionMeta => ({
  name, model: { identity: 'm.gguf:1:f16:nofa:abc', name: 'm', file: 'm.gguf' }, tokens: 42, bytes: 1234,
  created: '2030-01-01T00:00:00.000Z', messages: 2, save_ms: 3,
});

describe('SessionStore', () => {
  it('writes a 0600 sidecar beside the 0600 state file, in a 0700 folder, and lists it', async () => {
    const s = store();
    await s.ensureDir();
    expect(statSync(s.dir).mode & 0o777).toBe(0o700);
    writeFileSync(s.statePath('chat-1'), 'state', { mode: 0o644 });
    await s.writeMeta(meta('chat-1'));
    expect(statSync(s.metaPath('chat-1')).mode & 0o777).toBe(0o600);
    expect(statSync(s.statePath('chat-1')).mode & 0o777).toBe(0o600);
    expect(await s.list()).toEqual([meta('chat-1')]);
    expect(await s.get('chat-1')).toEqual(meta('chat-1'));
  });

  it('does not list a sidecar whose state file is missing, and removes both files', async () => {
    const s = store();
    await s.ensureDir();
    await s.writeMeta(meta('orphan'));
    expect(await s.list()).toEqual([]);
    writeFileSync(s.statePath('orphan'), 'state');
    expect(await s.remove('orphan')).toBe(true);
    expect(await s.remove('orphan')).toBe(false);
    expect(await s.get('orphan')).toBeNull();
  });

  it('refuses names that could leave the folder', () => {
    const s = store();
    for (const bad of ['../x', 'a/b', '.hidden', '', 'a\\b', 'x'.repeat(200)]) {
      expect(() => s.statePath(bad)).toThrowError(/unsafe session name/);
    }
    expect(SessionStore.isSafeName('my_chat-2.v1')).toBe(true);
  });
});
