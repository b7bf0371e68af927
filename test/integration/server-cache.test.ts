// Conversation cache end to end, greedy on a real tiny model: a follow-up turn reuses its
// prefix (cached_tokens > 0) and says what a fresh server says; a conversation forced out of
// its slot comes back from the park with the same text; a saved session restored by another
// server process continues with the same text and returns the messages it was saved with
// (restored into an idle slot, or the park while both slots are busy); damaged descriptions
// are a 422; what an interrupted save left is gone after the next start.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { buildSessionFile, parseSessionFile } from '../helpers/session-files.js';
import { greedy, json, metrics, startServer, stream, tempDir, type Running } from './server-helpers.js';

type Msg = { role: 'user' | 'assistant'; content: string };
let model = '';
const sessions = tempDir('strata-sessions-it-');
const open: Running[] = [];

beforeAll(async () => { model = await ensureTestModel({}); });
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
  sessions.remove();
});

async function server(): Promise<Running> {
  const s = await startServer(model, { slots: 2, ctx: 1024, sessionsDir: sessions.dir, parkMib: 256 });
  open.push(s);
  return s;
}

async function close(s: Running): Promise<void> {
  await s.close();
  open.splice(open.indexOf(s), 1);
}

async function chat(s: Running, messages: Msg[]) {
  const res = await s.openai.chat.completions.create({ model: 'any', messages, ...greedy(6) });
  return { text: res.choices[0]!.message.content ?? '', cached: res.usage?.prompt_tokens_details?.cached_tokens ?? 0, prompt: res.usage!.prompt_tokens };
}

const u1: Msg = { role: 'user', content: 'Write a short poem about the sea.' };
const u2: Msg = { role: 'user', content: 'Now make it about mountains.' };

describe('conversation cache and sessions (real engine, greedy)', () => {
  let r1 = '';
  let followUp = { text: '', cached: 0, prompt: 0 };
  let fresh = { text: '', cached: 0, prompt: 0 };

  it('a follow-up turn reuses the cached prefix', async () => {
    const a = await server();
    r1 = (await chat(a, [u1])).text;
    expect(r1.length).toBeGreaterThan(0);
    // Save the conversation while its slot holds it (restored later by another process).
    const conversation = [u1, { role: 'assistant', content: r1 }];
    const saved = await json(a.port, 'POST', '/v1/sessions', { name: 'sea-poem', messages: conversation });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ name: 'sea-poem', messages: conversation, message_count: 2, format: 2 });
    expect(saved.body.tokens).toBeGreaterThan(0);
    expect(saved.body.timings.engine_ms).toBeGreaterThan(0);
    expect(saved.body.timings.engine.sync_ms).toBeGreaterThan(0);
    // One file, 0600, and nothing else in the folder.
    expect(readdirSync(sessions.dir)).toEqual(['sea-poem.session']);
    expect(statSync(join(sessions.dir, 'sea-poem.session')).mode & 0o777).toBe(0o600);
    const got = await json(a.port, 'GET', '/v1/sessions/sea-poem');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ name: 'sea-poem', messages: conversation, tokens: saved.body.tokens, bytes: saved.body.bytes });
    followUp = await chat(a, [u1, { role: 'assistant', content: r1 }, u2]);
    expect(followUp.cached).toBeGreaterThan(0);
    expect(followUp.cached).toBeLessThan(followUp.prompt);
    await close(a);
  });

  it('says the same as a fresh server, and the same again after being parked and restored', async () => {
    const b = await server();
    fresh = await chat(b, [u1, { role: 'assistant', content: r1 }, u2]);
    expect(fresh.cached).toBe(0);
    expect(followUp.text).toBe(fresh.text);

    expect((await chat(b, [u1])).text).toBe(r1);
    // Two other conversations on two slots: the first one's slot is taken and it is parked.
    await chat(b, [{ role: 'user', content: 'List some fruits that are red.' }]);
    await chat(b, [{ role: 'user', content: 'How do airplanes stay in the air?' }]);
    const again = await chat(b, [u1, { role: 'assistant', content: r1 }, u2]);
    expect(again.text).toBe(fresh.text);
    expect(again.cached).toBeGreaterThan(0);
    const m = await metrics(b.port);
    const last = m.requests.at(-1);
    expect(last.restored).toBe(true);
    expect(m.conversation_cache.hits).toBeGreaterThan(0);
    await close(b);
  });

  it('a saved session restored after a server restart continues with the same text', async () => {
    const c = await server();
    const list = await json(c.port, 'GET', '/v1/sessions');
    expect(list.body.data.map((x: { name: string }) => x.name)).toEqual(['sea-poem']);
    const restored = await json(c.port, 'POST', '/v1/sessions/sea-poem/restore');
    expect(restored.status).toBe(200);
    expect(restored.body.tokens).toBeGreaterThan(0);
    // Both slots idle: straight into one (the next request reuses that slot's KV as it is).
    expect(restored.body.into).toBe('slot');
    // The messages saved with it come back with the restore (another window can show the chat).
    expect(restored.body.messages).toEqual([u1, { role: 'assistant', content: r1 }]);
    const cont = await chat(c, [u1, { role: 'assistant', content: r1 }, u2]);
    expect(cont.cached).toBeGreaterThan(0);
    expect(cont.text).toBe(fresh.text);

    // Errors: unknown, a bad name, and a session of another model.
    expect((await json(c.port, 'POST', '/v1/sessions/nope/restore')).status).toBe(404);
    const bad = await json(c.port, 'POST', '/v1/sessions/..%2Fetc/restore');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('name');
    const parts = parseSessionFile(readFileSync(join(sessions.dir, 'sea-poem.session')));
    const meta = JSON.parse(parts.meta);
    writeFileSync(join(sessions.dir, 'other.session'), buildSessionFile({
      ...parts, identity: 'other.gguf:1:f16:nofa:0', meta: JSON.stringify({ ...meta, model: { identity: 'other.gguf:1:f16:nofa:0', name: 'other-model', file: 'other.gguf' } }),
    }));
    const other = await json(c.port, 'POST', '/v1/sessions/other/restore');
    expect(other.status).toBe(409);
    expect(other.body.error.message).toMatch(/other-model/);
    expect((await json(c.port, 'DELETE', '/v1/sessions/other')).status).toBe(200);
    expect((await json(c.port, 'DELETE', '/v1/sessions/other')).status).toBe(404);
    const m = await metrics(c.port);
    expect(m.totals.invariant_violations).toBe(0);
    await close(c);
  });

  it('a damaged description (not JSON, or null) is a 422 on GET and restore, as a damaged state file is', async () => {
    const parts = parseSessionFile(readFileSync(join(sessions.dir, 'sea-poem.session')));
    writeFileSync(join(sessions.dir, 'bad-json.session'), buildSessionFile({ ...parts, meta: '{"model": {' }));
    writeFileSync(join(sessions.dir, 'null-desc.session'), buildSessionFile({ ...parts, meta: 'null' }));
    // Format 1 (older versions): the state file and a NAME.json sidecar.
    writeFileSync(join(sessions.dir, 'old-null.session'), buildSessionFile({ ...parts, version: 1 }));
    writeFileSync(join(sessions.dir, 'old-null.json'), 'null');
    writeFileSync(join(sessions.dir, 'old-text.session'), buildSessionFile({ ...parts, version: 1 }));
    writeFileSync(join(sessions.dir, 'old-text.json'), 'this is not json');
    const flipped = readFileSync(join(sessions.dir, 'sea-poem.session'));
    flipped[flipped.length - 100]! ^= 0xff;
    writeFileSync(join(sessions.dir, 'bad-state.session'), flipped);
    const d = await server();
    for (const name of ['bad-json', 'null-desc', 'old-null', 'old-text']) {
      const get = await json(d.port, 'GET', `/v1/sessions/${name}`);
      expect(get.status, name).toBe(422);
      expect(get.body.error).toMatchObject({ code: 'session_unreadable', param: 'name' });
      expect(get.body.error.message).toMatch(/damaged description/);
      expect((await json(d.port, 'POST', `/v1/sessions/${name}/restore`)).status, name).toBe(422);
    }
    const state = await json(d.port, 'POST', '/v1/sessions/bad-state/restore');
    expect(state.status).toBe(422);
    expect(state.body.error.message).toMatch(/checksum mismatch/);
    // Listed with their errors (so they can be seen and deleted), beside the good one.
    const list = await json(d.port, 'GET', '/v1/sessions');
    expect(list.body.data.find((x: { name: string }) => x.name === 'null-desc').error).toMatch(/damaged description/);
    expect(list.body.data.find((x: { name: string }) => x.name === 'sea-poem').messages).toHaveLength(2);
    for (const name of ['bad-json', 'null-desc', 'old-null', 'old-text', 'bad-state']) {
      expect((await json(d.port, 'DELETE', `/v1/sessions/${name}`)).status).toBe(200);
    }
    await close(d);
  });

  it('a restore while every slot is busy goes to the park, and the conversation continues the same from there', async () => {
    const f = await server();
    // Two long completions, one per slot, running once their text flows.
    const busy = [0, 1].map((i) => stream(f.port, '/v1/completions', { prompt: `Keep counting, ${i}:`, ...greedy(900), ignore_eos: true }));
    await Promise.all(busy.map((b) => b.pieces(3)));
    const restored = await json(f.port, 'POST', '/v1/sessions/sea-poem/restore');
    expect(restored.status).toBe(200);
    expect(restored.body.into).toBe('park');
    for (const b of busy) b.abort();
    await Promise.all(busy.map((b) => b.end));
    const cont = await chat(f, [u1, { role: 'assistant', content: r1 }, u2]);
    expect(cont.cached).toBeGreaterThan(0);
    expect(cont.text).toBe(fresh.text);
    expect((await metrics(f.port)).requests.at(-1).restored).toBe(true);
    await close(f);
  });

  it('a format-1 session (older versions) still restores, without messages', async () => {
    const parts = parseSessionFile(readFileSync(join(sessions.dir, 'sea-poem.session')));
    const meta = JSON.parse(parts.meta);
    writeFileSync(join(sessions.dir, 'old.session'), buildSessionFile({ ...parts, version: 1 }));
    writeFileSync(join(sessions.dir, 'old.json'), JSON.stringify({ name: 'old', model: meta.model, tokens: 1, bytes: 1, created: meta.created, messages: 2, save_ms: 1 }));
    const e = await server();
    const restored = await json(e.port, 'POST', '/v1/sessions/old/restore');
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ name: 'old', messages: null, tokens: parts.tokens.length / 4, into: 'slot' });
    const cont = await chat(e, [u1, { role: 'assistant', content: r1 }, u2]);
    expect(cont.cached).toBeGreaterThan(0);
    expect(cont.text).toBe(fresh.text);
    // Saving it again writes one file of the current format and drops the sidecar.
    const again = await json(e.port, 'POST', '/v1/sessions', { name: 'old', messages: [u1, { role: 'assistant', content: r1 }] });
    expect(again.status).toBe(201);
    expect(existsSync(join(sessions.dir, 'old.json'))).toBe(false);
    expect(parseSessionFile(readFileSync(join(sessions.dir, 'old.session'))).version).toBe(2);
    expect((await json(e.port, 'DELETE', '/v1/sessions/old')).status).toBe(200);
    await close(e);
  });

  it('what an interrupted save left (temp file of a dead process, a sidecar without state) is gone after the next start; a live process\'s stays', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const litter = [`sea-poem.session.tmp-${dead}-0`, `half.session.tmp-${dead}-7`, 'nothing.json'];
    const writing = `busy.session.tmp-${process.pid}-2`; // a save this process is still writing
    for (const f of [...litter, writing]) writeFileSync(join(sessions.dir, f), Buffer.alloc(4096, 1));
    const f = await server();
    expect(readdirSync(sessions.dir).sort()).toEqual([writing, 'sea-poem.session']);
    const said = f.logs.find((l) => l.includes('removed leftovers of interrupted saves')) ?? '';
    for (const gone of litter) expect(said).toContain(gone);
    expect(said).not.toContain(writing);
    rmSync(join(sessions.dir, writing));
    // The session itself is untouched.
    expect((await json(f.port, 'GET', '/v1/sessions/sea-poem')).status).toBe(200);
    await close(f);
  });
});
