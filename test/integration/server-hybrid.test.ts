// A hybrid model (test model `hybrid`: Qwen3.5's architecture, recurrent gated delta net layers
// and an attention layer, with an MTP head) served over chat completions on its defaults: the head
// drafts (--spec auto), and a next turn whose earlier answer the client sends back otherwise than
// the model wrote it (an agent's edited or re-rendered answer) reuses the whole previous prompt,
// from the recurrent state's checkpoint, and says what a server that never saw the first turn says.
// A new session (another task after the same system prompt and tools) starts from that shared
// start, kept in RAM and in the prefix cache's folder across a restart, though the state cannot be
// cut back to it from the first session's.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, startServer, tempDir, type Running } from './server-helpers.js';

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };
let model = '';
const open: Running[] = [];
const dirs = tempDir('strata-hybrid-server-');

beforeAll(async () => { model = await ensureTestModel({ shape: 'hybrid' }); });
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
  dirs.remove();
});

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

const RULES = Array.from({ length: 70 }, (_, i) => `Rule ${i + 1}: when you change file ${i}, keep its tests and imports consistent and say why in one line.`);
const SYSTEM = ['You are a coding agent working in the user\'s repository.', ...RULES].join('\n');
const TOOLS = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
  { type: 'function', function: { name: 'run_command', description: 'Run a shell command', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } },
];

/** A session's first request: the agent's system prompt and tools, then its task. */
async function task(s: Running, text: string) {
  const r = await json(s.port, 'POST', '/v1/chat/completions', {
    model: 'any', ...greedy(8), tools: TOOLS, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: text }],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { answer: r.body.choices[0].message, prompt: r.body.usage.prompt_tokens as number, cached: r.body.usage.prompt_tokens_details.cached_tokens as number };
}

describe('a hybrid model: new sessions of one agent', () => {
  it('start from the system prompt and tools, in RAM and after a restart, and answer as a fresh server', async () => {
    const cfg = { slots: 1, ctx: 4096, prefixCacheDir: join(dirs.dir, 'prefix-cache'), prefixCacheMib: 64 };
    const first = await startServer(model, cfg);
    let shared = 0;
    try {
      expect((await task(first, 'List the files of the src folder.')).cached).toBe(0);
      const second = await task(first, 'Why does the build fail on Windows?');
      shared = second.cached;
      // The shared start: the system prompt (about 1,500 tokens) and the tools, not the task.
      expect(shared).toBeGreaterThan(1024);
      expect(shared).toBeLessThan(second.prompt - 5);
    } finally {
      await first.close();  // waits for the prefix cache's save
    }
    // One file: the shared start alone (a whole conversation's could not be cut back to it).
    expect(readdirSync(cfg.prefixCacheDir).filter((f) => f.endsWith('.session'))).toHaveLength(1);
    const restarted = await startServer(model, cfg);
    open.push(restarted);
    const third = await task(restarted, 'Add a test for the parser.');
    expect(third.cached).toBe(shared);
    expect(restarted.logs.some((l) => l.includes('prefix cache: loaded'))).toBe(true);
    const fresh = await startServer(model, { slots: 1, ctx: 4096 });
    open.push(fresh);
    const cold = await task(fresh, 'Add a test for the parser.');
    expect(cold.cached).toBe(0);
    expect(third.answer).toEqual(cold.answer);
  });
});
