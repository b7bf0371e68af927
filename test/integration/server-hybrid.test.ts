// A hybrid model (test model `hybrid`: Qwen3.5's architecture, recurrent gated delta net layers
// and an attention layer, with an MTP head) served over chat completions on its defaults: the head
// drafts (--spec auto), and a next turn whose earlier answer the client sends back otherwise than
// the model wrote it (an agent's edited or re-rendered answer) reuses the whole previous prompt,
// from the recurrent state's checkpoint, and says what a server that never saw the first turn says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, startServer, type Running } from './server-helpers.js';

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };
let model = '';
const open: Running[] = [];

beforeAll(async () => { model = await ensureTestModel({ shape: 'hybrid' }); });
afterAll(async () => { await Promise.all(open.map((s) => s.close())); });

async function server(): Promise<Running> {
  const s = await startServer(model, { slots: 1, ctx: 1024 });
  open.push(s);
  return s;
}

async function chat(s: Running, messages: Msg[]) {
  const res = await s.openai.chat.completions.create({ model: 'any', messages, ...greedy(8) });
  const drafted = (res as unknown as { timings?: { draft_n?: number } }).timings?.draft_n ?? 0;
  return { text: res.choices[0]!.message.content ?? '', cached: res.usage?.prompt_tokens_details?.cached_tokens ?? 0, prompt: res.usage!.prompt_tokens, drafted };
}

describe('a hybrid model served on its defaults', () => {
  it('drafts with its MTP head, and a next turn with its answer sent back otherwise reuses the whole previous prompt', async () => {
    const s = await server();
    const models = await json(s.port, 'GET', '/v1/models');
    expect(models.body.data[0].meta.speculative).toMatchObject({ mtp: true });
    const start: Msg[] = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'Fix the off-by-one in the loop.' }];
    const first = await chat(s, start);
    expect(first.cached).toBe(0);
    expect(first.drafted).toBeGreaterThan(0);
    const next: Msg[] = [...start, { role: 'assistant', content: 'I changed `<=` to `<` in the loop bound.' }, { role: 'user', content: 'Now run the tests.' }];
    const second = await chat(s, next);
    expect(second.cached).toBe(first.prompt);
    const fresh = await chat(await server(), next);
    expect(fresh.cached).toBe(0);
    expect(second.text).toBe(fresh.text);
  });
});
