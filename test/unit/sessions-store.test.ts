// The session folder as the server reads it: descriptions from the head of each session file
// (format 2) or from a format-1 sidecar, damaged descriptions as SessionUnreadableError, and
// the sweep at start that clears what interrupted saves left.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, win32 } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore, SessionUnreadableError } from '../../backend/sessions/session-store.js';
import { buildSessionFile } from '../helpers/session-files.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

async function store(): Promise<SessionStore> {
  const base = mkdtempSync(join(tmpdir(), 'strata-sessions-'));
  dirs.push(base);
  const s = new SessionStore(join(base, 'nested', 'sessions'));
  await s.ensureDir();
  return s;
}

/** A session file with these parts and an empty state (the checksum is not read here). */
function sessionFile(version: 1 | 2, description: string | null, tokens: number[], identity = 'm.gguf:1:f16'): Buffer {
  return buildSessionFile({
    version, meta: description ?? '', identity, description: 'llama 1M F16', sizes: Buffer.alloc(12),
    tokens: Buffer.from(Int32Array.from(tokens).buffer), state: Buffer.alloc(0),
  });
}

const model = { identity: 'm.gguf:1:f16', name: 'm', file: 'm.gguf' };
const messages = [{ role: 'user' as const, content: 'hello' }, { role: 'assistant' as const, content: 'hi there' }];

describe('SessionStore', () => {
  it('makes a 0700 folder and reads a session file\'s description, tokens and size from its head', async () => {
    const s = await store();
    expect(statSync(s.dir).mode & 0o777).toBe(0o700);
    const file = sessionFile(2, SessionStore.describe(model, messages, new Date('2030-01-01T00:00:00Z')), [1, 2, 3]);
    writeFileSync(s.statePath('chat-1'), file);
    const want = {
      name: 'chat-1', model, tokens: 3, bytes: file.length, created: '2030-01-01T00:00:00.000Z',
      messages, message_count: 2, format: 2,
    };
    expect(await s.get('chat-1')).toEqual(want);
    expect(await s.list()).toEqual([want]);
    expect(await s.get('absent')).toBeNull();
  });

  it('reads a description an earlier version wrote with the sampled tokens\' held text beside it; a save writes none', async () => {
    const s = await store();
    const held = { text: '<|im_start|>user\nhi<|im_end|>\n', bos: false, cuts: [{ chars: 10, tokens: 3, hash: 'ab' }] };
    const old = JSON.stringify({ ...JSON.parse(SessionStore.describe(model, messages, new Date('2030-01-01T00:00:00Z'))), held_text: held });
    writeFileSync(s.statePath('older'), sessionFile(2, old, [1, 2, 3]));
    expect(await s.get('older')).toMatchObject({ name: 'older', model, tokens: 3, messages, message_count: 2, format: 2 });
    expect(Object.keys(JSON.parse(SessionStore.describe(model, messages))).sort()).toEqual(['created', 'messages', 'model']);
  });

  it('a damaged description (not JSON, null, not an object) or file is unreadable, and listed with its error', async () => {
    const s = await store();
    writeFileSync(s.statePath('bad-json'), sessionFile(2, '{"model": nope', [1]));
    writeFileSync(s.statePath('null'), sessionFile(2, 'null', [1]));
    writeFileSync(s.statePath('list'), sessionFile(2, '[1,2]', [1]));
    writeFileSync(s.statePath('text'), 'just some text, not a session\n');
    writeFileSync(s.statePath('cut'), sessionFile(2, SessionStore.describe(model, messages), [1]).subarray(0, 30));
    await expect(s.get('bad-json')).rejects.toThrow(/damaged description .*is not JSON/);
    await expect(s.get('null')).rejects.toThrow(/damaged description .*is null/);
    await expect(s.get('list')).rejects.toBeInstanceOf(SessionUnreadableError);
    await expect(s.get('text')).rejects.toThrow(/not a Strata session file/);
    await expect(s.get('cut')).rejects.toThrow(/damaged \(truncated\)/);
    const listed = await s.list();
    expect(listed.map((x) => x.name)).toEqual(['bad-json', 'cut', 'list', 'null', 'text']);
    expect(listed.every((x) => 'error' in x)).toBe(true);
  });

  it('reads format-1 sessions from their sidecar (no messages kept); a damaged sidecar is unreadable', async () => {
    const s = await store();
    writeFileSync(s.statePath('old'), sessionFile(1, null, [7, 8]));
    writeFileSync(s.legacyMetaPath('old'), JSON.stringify({ name: 'old', model, tokens: 2, bytes: 1, created: '2029-05-05T00:00:00.000Z', messages: 2, save_ms: 3 }));
    expect(await s.get('old')).toMatchObject({ name: 'old', model, tokens: 2, created: '2029-05-05T00:00:00.000Z', messages: null, message_count: 0, format: 1 });
    writeFileSync(s.legacyMetaPath('old'), 'null');
    await expect(s.get('old')).rejects.toThrow(/damaged description \(.*old\.json is null\)/);
    writeFileSync(s.legacyMetaPath('old'), '{ not json');
    await expect(s.get('old')).rejects.toThrow(/damaged description \(.*old\.json is not JSON\)/);
  });

  it('sweep removes temp files of dead processes and sidecars without state; lists format-1 states without sidecar', async () => {
    const s = await store();
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const live = process.pid;
    const files = {
      deadTemp: `a.session.tmp-${dead}-0`, liveTemp: `b.session.tmp-${live}-3`, deadSidecarTemp: `c.json.${dead}.tmp`,
      orphanSidecar: 'gone.json', orphanState: 'lost.session', kept: 'kept.session',
    };
    for (const f of Object.values(files)) writeFileSync(join(s.dir, f), 'x');
    writeFileSync(join(s.dir, files.orphanState), sessionFile(1, null, [1]));
    writeFileSync(join(s.dir, files.kept), sessionFile(2, SessionStore.describe(model, null), [1]));
    const r = await s.sweep();
    expect(r.removed.sort()).toEqual([files.deadTemp, files.deadSidecarTemp, files.orphanSidecar].sort());
    expect(r.orphans).toEqual([files.orphanState]);
    expect(readdirSync(s.dir).sort()).toEqual([files.liveTemp, files.kept, files.orphanState].sort());
    // The orphan is still a session: described from its file alone.
    expect(await s.get('lost')).toMatchObject({ model: { identity: 'm.gguf:1:f16', name: '' }, tokens: 1, messages: null, format: 1 });
  });

  it.runIf(process.platform === 'linux')('sweep removes the temp file of a zombie (a killed server\'s engine nothing reaped): signal 0 still reaches it', async () => {
    // A shell starts a child that waits for our stdin to close, then becomes `sleep`, which never
    // reaps it; once the shell is sleep, closing stdin ends the child and it stays a zombie.
    // (An asynchronous list's stdin is /dev/null: the child reads our pipe through fd 3.)
    const parent = spawn('sh', ['-c', 'exec 3<&0; (read x <&3) & echo $!; exec sleep 60 3<&-'], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(d.toString()))));
      const until = async (what: () => boolean) => { while (!what()) await new Promise((r) => setImmediate(r)); }; // states /proc reports
      await until(() => readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim() === 'sleep');
      parent.stdin!.end();
      await until(() => { const st = readFileSync(`/proc/${zombie}/stat`, 'utf8'); return st[st.lastIndexOf(')') + 2] === 'Z'; });
      expect(() => process.kill(zombie, 0)).not.toThrow();
      const s = await store();
      const temp = `z.session.tmp-${zombie}-0`;
      writeFileSync(join(s.dir, temp), 'x');
      expect((await s.sweep()).removed).toEqual([temp]);
      expect(readdirSync(s.dir)).toEqual([]);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('removes a session with its sidecar, and says when there was none', async () => {
    const s = await store();
    writeFileSync(s.statePath('x'), sessionFile(1, null, [1]));
    writeFileSync(s.legacyMetaPath('x'), '{}');
    expect(await s.remove('x')).toBe(true);
    expect(existsSync(s.legacyMetaPath('x'))).toBe(false);
    expect(await s.remove('x')).toBe(false);
  });

  it('refuses names that could leave the folder', async () => {
    const s = await store();
    for (const bad of ['../x', 'a/b', '.hidden', '', 'a\\b', 'x'.repeat(200)]) {
      expect(() => s.statePath(bad)).toThrowError(/unsafe session name/);
    }
    expect(SessionStore.isSafeName('my_chat-2.v1')).toBe(true);
  });

  it('Windows: file names under a drive-letter folder, backslashes only, whatever separators the folder was given with', () => {
    const s = new SessionStore('C:/Users/Ana Lee\\AppData/Local\\strata/sessions/', win32, 'win32');
    expect(s.statePath('chat-1')).toBe('C:\\Users\\Ana Lee\\AppData\\Local\\strata\\sessions\\chat-1.session');
    expect(s.legacyMetaPath('Notes.v2')).toBe('C:\\Users\\Ana Lee\\AppData\\Local\\strata\\sessions\\Notes.v2.json');
    expect(new SessionStore('\\\\server\\share\\sessions', win32, 'win32').statePath('x')).toBe('\\\\server\\share\\sessions\\x.session');
    for (const bad of ['..\\x', 'a\\b', 'C:x', 'con', 'NUL.1', 'com1', 'x:y']) expect(() => s.statePath(bad), bad).toThrowError(/unsafe session name/);
  });
});
