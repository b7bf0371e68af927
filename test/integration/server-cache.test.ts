// Conversation cache end to end, greedy on a real tiny model: a follow-up turn reuses its
// prefix (cached_tokens > 0) and says what a fresh server says; a conversation forced out of
// its slot comes back from the park with the same text; a saved session restored by another
// server process continues with the same text.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, metrics, startServer, tempDir, type Running } from './server-helpers.js';

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
  const s = await startServer(model, { slots: 2, ctx: 1024, sessionsDir: sessions.dir, cacheMib: 256 });
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
    const saved = await json(a.port, 'POST', '/v1/sessions', { name: 'sea-poem', messages: [u1, { role: 'assistant', content: r1 }] });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ name: 'sea-poem', messages: 2 });
    expect(saved.body.tokens).toBeGreaterThan(0);
    expect(statSync(join(sessions.dir, 'sea-poem.session')).mode & 0o777).toBe(0o600);
    expect(statSync(join(sessions.dir, 'sea-poem.json')).mode & 0o777).toBe(0o600);
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
    const cont = await chat(c, [u1, { role: 'assistant', content: r1 }, u2]);
    expect(cont.cached).toBeGreaterThan(0);
    expect(cont.text).toBe(fresh.text);

    // Errors: unknown, a bad name, and a session of another model.
    expect((await json(c.port, 'POST', '/v1/sessions/nope/restore')).status).toBe(404);
    const bad = await json(c.port, 'POST', '/v1/sessions/..%2Fetc/restore');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('name');
    const meta = JSON.parse(readFileSync(join(sessions.dir, 'sea-poem.json'), 'utf8'));
    writeFileSync(join(sessions.dir, 'other.json'), JSON.stringify({ ...meta, name: 'other', model: { ...meta.model, identity: 'other.gguf:1:f16:nofa:0', name: 'other-model', file: 'other.gguf' } }));
    writeFileSync(join(sessions.dir, 'other.session'), readFileSync(join(sessions.dir, 'sea-poem.session')));
    const other = await json(c.port, 'POST', '/v1/sessions/other/restore');
    expect(other.status).toBe(409);
    expect(other.body.error.message).toMatch(/other-model/);
    expect((await json(c.port, 'DELETE', '/v1/sessions/other')).status).toBe(200);
    expect((await json(c.port, 'DELETE', '/v1/sessions/other')).status).toBe(404);
    const m = await metrics(c.port);
    expect(m.totals.invariant_violations).toBe(0);
  });
});
