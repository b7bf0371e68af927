// A previous_response_id chain on the real engine (random-weight test model, --deterministic) through
// the official `openai` client: each turn continues from the model's own tokens of the earlier turns
// (cached: all of them but at most the last sampled one, which a cut answer never decoded), the
// stored response's KV is written beside it (a chain keeps one file, its newest response's), and
// after an engine restart, and after a restart of the whole server, the same turn loads that KV
// (cached tokens > 0) and answers identically. Also
// GET /v1/responses/{id}/input_items as the SDK pages it.
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { metrics, startServer, tempDir, until, type Running } from './server-helpers.js';

let srv: Running;
let modelPath: string;
const dirs = tempDir('strata-chain-');
const config = () => ({ slots: 2, ctx: 2048, deterministic: true, sessionsDir: join(dirs.dir, 'sessions'), responsesDir: join(dirs.dir, 'responses') });

beforeAll(async () => {
  modelPath = await ensureTestModel({});
  srv = await startServer(modelPath, config());
});
afterAll(async () => {
  await srv?.close();
  dirs.remove();
});

type Resp = OpenAI.Responses.Response & { usage: NonNullable<OpenAI.Responses.Response['usage']> };
const turn = async (client: OpenAI, input: string, previous: string | null, store = true): Promise<Resp> => (await client.responses.create({
  model: 'any', input, temperature: 0, max_output_tokens: 10, store, ...(previous ? { previous_response_id: previous } : {}),
})) as Resp;
/** The earlier turn's tokens the follow-up held: its prompt and answer (a cut answer's last token was never decoded). */
const held = (r: Resp): number => r.usage.input_tokens + r.usage.output_tokens;

describe('a previous_response_id chain', () => {
  let t1: Resp; let t2: Resp; let t3: Resp;

  it('continues from the earlier turns\' own tokens, their KV reused', async () => {
    t1 = await turn(srv.openai, 'Tell me about lakes.', null);
    t2 = await turn(srv.openai, 'And rivers?', t1.id);
    t3 = await turn(srv.openai, 'And the sea?', t2.id);
    for (const [before, after] of [[t1, t2], [t2, t3]] as const) {
      expect(after.usage.input_tokens).toBeGreaterThan(held(before));
      expect(after.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(held(before) - 1);
      expect(after.usage.input_tokens_details.cached_tokens).toBeLessThan(after.usage.input_tokens);
    }
    // input_tokens counts the prompt the continuation reads.
    expect((await srv.openai.responses.inputTokens.count({ model: 'any', previous_response_id: t2.id, input: 'And the sea?' })).input_tokens).toBe(t3.usage.input_tokens);
    // The KV of each response continued is on disk beside it (a continuation waits for its file).
    for (const r of [t1, t2]) expect(existsSync(join(dirs.dir, 'responses', `${r.id}.session`))).toBe(true);
    console.log(`turns: ${[t1, t2, t3].map((r) => `${r.usage.input_tokens} in / ${r.usage.input_tokens_details.cached_tokens} cached / ${r.usage.output_tokens} out`).join('; ')}`);
  }, 300_000);

  it('input_items lists what a response read, newest first by default, page by page', async () => {
    const all: OpenAI.Responses.ResponseItem[] = [];
    for await (const item of srv.openai.responses.inputItems.list(t3.id, { limit: 2 })) all.push(item);
    // Turn 1's input and output, turn 2's, turn 3's input: newest first.
    const kinds = all.map((i) => (i.type === 'message' ? `${i.role}` : i.type));
    expect(kinds).toEqual(['user', ...t2.output.map((o) => (o.type === 'message' ? 'assistant' : o.type)).reverse(), 'user', ...t1.output.map((o) => (o.type === 'message' ? 'assistant' : o.type)).reverse(), 'user']);
    const texts = all.filter((i): i is OpenAI.Responses.ResponseInputMessageItem => i.type === 'message' && i.role === 'user').map((i) => (i.content[0] as { text: string }).text);
    expect(texts).toEqual(['And the sea?', 'And rivers?', 'Tell me about lakes.']);
    expect(new Set(all.map((i) => i.id)).size).toBe(all.length);
    const asc = await srv.openai.responses.inputItems.list(t3.id, { order: 'asc', limit: 100 });
    expect(asc.data.map((i) => i.id)).toEqual(all.map((i) => i.id).reverse());
    expect(asc.has_more).toBe(false);
    const after = await srv.openai.responses.inputItems.list(t3.id, { order: 'asc', after: asc.data[1]!.id, limit: 1 });
    expect(after.data.map((i) => i.id)).toEqual([asc.data[2]!.id]);
    expect(after.has_more).toBe(true);
    await expect(srv.openai.responses.inputItems.list(t3.id, { limit: 101 })).rejects.toMatchObject({ status: 400, param: 'limit' });
    await expect(srv.openai.responses.inputItems.list(t3.id, { after: 'msg_nope' })).rejects.toMatchObject({ status: 400, param: 'after' });
    await expect(srv.openai.responses.inputItems.list('resp_unknown')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  }, 300_000);

  it('after an engine restart the same turn loads the KV from disk and answers identically', async () => {
    const before = await metrics(srv.port);
    const pid = before.engines[0].pid as number;
    process.kill(pid, 'SIGKILL');
    await until('the engine back', () => metrics(srv.port), (m) => m.engines[0].state === 'ready' && m.engines[0].pid !== pid, 120_000);
    const again = await turn(srv.openai, 'And the sea?', t2.id, false);
    expect(again.output_text).toBe(t3.output_text);
    expect(again.usage.input_tokens).toBe(t3.usage.input_tokens);
    expect(again.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(held(t2) - 1);
  }, 300_000);

  it('after a restart of the server too; a deleted response takes its KV file with it', async () => {
    await srv.close();
    // The chain keeps one KV file, its newest response's; the earlier responses' are links to it.
    const kv = (r: Resp) => lstatSync(join(dirs.dir, 'responses', `${r.id}.session`));
    expect([t1, t2, t3].map((r) => (kv(r).isSymbolicLink() ? 'link' : kv(r).isFile() ? 'file' : '?'))).toEqual(['link', 'link', 'file']);
    srv = await startServer(modelPath, config());
    const again = await turn(srv.openai, 'And the sea?', t2.id, false);
    expect(again.output_text).toBe(t3.output_text);
    expect(again.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(held(t2) - 1);
    await srv.openai.responses.delete(t1.id);
    expect(existsSync(join(dirs.dir, 'responses', `${t1.id}.session`))).toBe(false);
    expect(existsSync(join(dirs.dir, 'responses', `${t1.id}.json`))).toBe(false);
  }, 300_000);
});
