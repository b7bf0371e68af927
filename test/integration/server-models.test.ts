// Several models in one server on real engines and real generated models: a FIM model (StarCoder
// vocabulary) answering /v1/infill and a chat model (Qwen2 vocabulary) answering chat,
// interleaved and neither reloaded; an embedding model taking /v1/embeddings; 404 for a model
// not served; load on first use; LRU under --models-max 1 (the unloaded model reloads on demand
// and answers identically); an unload refused while a request streams; idle unload on an
// injected clock; a session restored only on its own model. /v1/models shows each transition.
import { describe, expect, it } from 'vitest';
import { checkBody } from '../../contract/check.js';
import { modelsBodySchema } from '../../contract/models.js';
import { ensureTestModel } from '../helpers/models.js';
import type { ModelSpec } from '../../backend/app/model-specs.js';
import { greedy, json, startServer, stream, tempDir, type Running } from './server-helpers.js';

async function specs(): Promise<ModelSpec[]> {
  return [
    { name: 'coder', path: await ensureTestModel({ vocab: 'starcoder' }), role: 'completion', settings: {} },
    { name: 'chat', path: await ensureTestModel({ vocab: 'qwen2', seed: 2 }), role: 'chat', settings: { slots: 1 } },
    { name: 'embed', path: await ensureTestModel({ vocab: 'bert-bge', shape: 'embed-bert' }), role: 'embedding', settings: { ctx: 128 } },
  ];
}

const states = async (srv: Running) =>
  Object.fromEntries(checkBody(modelsBodySchema, (await json(srv.port, 'GET', '/v1/models')).body, 'GET /v1/models').data.map((m) => [m.id, m.state]));
const loads = (srv: Running, name: string) => srv.server.pool.rows().find((r) => r.name === name)!.loads;
const infillBody = { input_prefix: 'def add(a, b):\n    return ', input_suffix: '\n\nprint(add(1, 2))\n', ...greedy(8) };
const chatBody = (content: string) => ({ messages: [{ role: 'user' as const, content }], ...greedy(8) });

async function withServer<T>(over: Parameters<typeof startServer>[1], run: (srv: Running) => Promise<T>, now?: () => number): Promise<T> {
  const sessions = tempDir('strata-models-sessions-');
  const models = await specs();
  const srv = await startServer(models[0]!.path, { ctx: 256, models, model: models[0]!.path, sessionsDir: sessions.dir, ...over }, undefined, now ? { now } : {});
  try {
    return await run(srv);
  } finally {
    await srv.close();
    sessions.remove();
  }
}

describe('several models in one server (real engines)', () => {
  it('a FIM model and a chat model answer interleaved, each under its name with its own output, neither reloaded; embeddings go to the embedding model', async () => {
    await withServer({ preload: ['all'] }, async (srv) => {
      await srv.server.pool.load('chat');
      await srv.server.pool.load('embed');
      expect(await states(srv)).toEqual({ coder: 'loaded', chat: 'loaded', embed: 'loaded' });
      const infills: string[] = [];
      const chats: string[] = [];
      for (let i = 0; i < 3; i++) {
        const f = await json(srv.port, 'POST', '/v1/infill', infillBody); // no model: the completion model
        expect(f.status).toBe(200);
        expect(f.body.model).toBe('coder');
        infills.push(f.body.content);
        const c = await srv.openai.chat.completions.create({ model: 'chat', ...chatBody('hello there') });
        expect(c.model).toBe('chat');
        chats.push(c.choices[0]!.message.content ?? '');
      }
      // Greedy: the same answer every time from the same model, and the two models differ.
      expect(new Set(infills).size).toBe(1);
      expect(new Set(chats).size).toBe(1);
      const sameOnCoder = await srv.openai.chat.completions.create({ model: 'coder', ...chatBody('hello there') });
      expect(sameOnCoder.model).toBe('coder');
      expect(sameOnCoder.choices[0]!.message.content).not.toBe(chats[0]);
      const emb = await srv.openai.embeddings.create({ model: 'embed', input: 'def add(a, b)' });
      expect(emb.model).toBe('embed');
      const embDefault = await json(srv.port, 'POST', '/v1/embeddings', { input: 'def add(a, b)' });
      expect(embDefault.body.data[0].embedding).toEqual(emb.data[0]!.embedding);
      expect([loads(srv, 'coder'), loads(srv, 'chat'), loads(srv, 'embed')]).toEqual([1, 1, 1]);
      const unknown = await json(srv.port, 'POST', '/v1/chat/completions', { model: 'gpt-4o', ...chatBody('hi') });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('model_not_found');
      expect(unknown.body.error.message).toContain('served models: coder, chat, embed');
    });
  });

  it('loads on first use, unloads the least recently used under --models-max 1, and the reloaded model answers identically', async () => {
    await withServer({ modelsMax: 1 }, async (srv) => {
      expect(await states(srv)).toEqual({ coder: 'loaded', chat: 'unloaded', embed: 'unloaded' });
      const first = await json(srv.port, 'POST', '/v1/infill', infillBody);
      const streamed = stream(srv.port, '/v1/chat/completions', { model: 'chat', ...chatBody('hello there') });
      const chatEnd = await streamed.end; // waited while chat loaded (coder unloaded to make room)
      expect(chatEnd.how).toBe('done');
      expect(chatEnd.text.length).toBeGreaterThan(0);
      expect(await states(srv)).toEqual({ coder: 'unloaded', chat: 'loaded', embed: 'unloaded' });
      const again = await json(srv.port, 'POST', '/v1/infill', infillBody);
      expect(again.status).toBe(200);
      expect(again.body.content).toBe(first.body.content);
      expect(await states(srv)).toEqual({ coder: 'loaded', chat: 'unloaded', embed: 'unloaded' });
      expect(loads(srv, 'coder')).toBe(2);
    });
  });

  it('refuses to unload a model while a request streams, unloads it after; idle models unload on the injected clock', async () => {
    const clock = { t: 1_000_000 };
    await withServer({ modelIdleS: 60 }, async (srv) => {
      const s = stream(srv.port, '/v1/completions', { model: 'coder', prompt: 'def f():', temperature: 0, max_tokens: 200, ignore_eos: true });
      await s.pieces(1);
      const busy = await json(srv.port, 'POST', '/v1/models/unload', { model: 'coder' });
      expect(busy.status).toBe(409);
      expect(busy.body.error.code).toBe('model_busy');
      clock.t += 600_000;
      expect(await srv.server.pool.sweepIdle()).toEqual([]); // in use: never idle
      expect((await s.end).how).toBe('done');
      clock.t += 59_000;
      expect(await srv.server.pool.sweepIdle()).toEqual([]);
      clock.t += 2_000;
      expect(await srv.server.pool.sweepIdle()).toEqual(['coder']);
      expect(await states(srv)).toEqual({ coder: 'unloaded', chat: 'unloaded', embed: 'unloaded' });
      const loaded = await json(srv.port, 'POST', '/v1/models/load', { model: 'chat' });
      expect(loaded.body).toEqual({ model: 'chat', state: 'loaded' });
      const unloaded = await json(srv.port, 'POST', '/v1/models/unload', { model: 'chat' });
      expect(unloaded.body).toEqual({ model: 'chat', state: 'unloaded' });
    }, () => clock.t);
  });

  it('a session restores only on the model it was saved with (409 naming both)', async () => {
    await withServer({ preload: ['coder', 'chat'] }, async (srv) => {
      await srv.server.pool.load('chat');
      const u1 = { role: 'user', content: 'hi' };
      const reply = await srv.openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], ...greedy(8) });
      const conversation = [u1, { role: 'assistant', content: reply.choices[0]!.message.content ?? '' }];
      const saved = await json(srv.port, 'POST', '/v1/sessions', { model: 'chat', name: 'talk', messages: conversation });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
      const wrong = await json(srv.port, 'POST', '/v1/sessions/talk/restore', { model: 'coder' });
      expect(wrong.status).toBe(409);
      expect(wrong.body.error.code).toBe('session_model_mismatch');
      expect(wrong.body.error.message).toMatch(/saved with model 'chat'.*runs 'coder'/);
      const right = await json(srv.port, 'POST', '/v1/sessions/talk/restore', { model: 'chat' });
      expect(right.status).toBe(200);
      // Naming no model, a restore goes to the model the session was saved with.
      const implied = await json(srv.port, 'POST', '/v1/sessions/talk/restore', {});
      expect(implied.status).toBe(200);
    });
  });
});
