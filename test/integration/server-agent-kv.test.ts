// An agent's KV across steps, end to end on the real server and engine: each step sends the
// conversation back with the model's own tool call and the tool's result, and the server reuses
// what it holds of the previous request up to the first token the new prompt's own tokenization
// differs in: at least the whole previous prompt, at most every token the model wrote besides
// (the call's text may tokenize otherwise than the model sampled it; the prompt is always the
// request's own tokenization, so the answer does not depend on what the server held). Also when
// other conversations took the slots in between (the park), after a 2,000-line tool result, and
// after a restart when the conversation was saved as a session. The model is random; tool_choice
// naming the tool makes each answer a call (forced grammar), which is then carried back as any
// agent would. Tokenizer and template: the 'mistral' test vocabulary (SentencePiece with Mistral's
// control tokens) with Mistral Small 3.2's template (calls as [TOOL_CALLS]name[CALL_ID]id[ARGS]{…}).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, tempDir, type Running } from './server-helpers.js';

// Forced tool calls on a loaded 2-core machine: minutes per test.
vi.setConfig({ testTimeout: 900_000 });

interface Message { role: string; content: string | null; tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>; tool_call_id?: string }
interface Step { prompt: number; cached: number; completion: number }

const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { enum: ['a.ts', 'b.ts'] } }, required: ['path'], additionalProperties: false } } }];

let model = '';
const sessions = tempDir('strata-agent-kv-');
const open: Running[] = [];

beforeAll(async () => {
  model = await ensureTestModel({ vocab: 'mistral', chatTemplate: 'Mistral-Small-3.2-24B-Instruct-2506' });
  await server();
});
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
  sessions.remove();
});

async function server(): Promise<Running> {
  const s = await startServer(model, { slots: 2, ctx: 4096, sessionsDir: sessions.dir, parkMib: 512 });
  open.push(s);
  return s;
}

/** One agent step: the model calls the tool (forced), the call and `result` join the conversation. */
async function step(s: Running, conv: Message[], result: string): Promise<Step> {
  const r = await json(s.port, 'POST', '/v1/chat/completions', {
    messages: conv, tools, tool_choice: { type: 'function', function: { name: 'read_file' } }, temperature: 0, max_tokens: 60,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const msg = r.body.choices[0].message;
  expect(r.body.choices[0].finish_reason).toBe('tool_calls');
  conv.push({ role: 'assistant', content: msg.content, tool_calls: msg.tool_calls });
  conv.push({ role: 'tool', tool_call_id: msg.tool_calls[0].id, content: result });
  return { prompt: r.body.usage.prompt_tokens, cached: r.body.usage.prompt_tokens_details.cached_tokens, completion: r.body.usage.completion_tokens };
}

/** The previous step's prompt is reused whole, and its answer up to where its text tokenizes otherwise. */
function expectOnlyNew(prev: Step, next: Step): void {
  expect(next.cached).toBeGreaterThanOrEqual(prev.prompt);
  expect(next.cached).toBeLessThanOrEqual(prev.prompt + prev.completion);
  expect(next.prompt).toBeGreaterThan(next.cached);
}

const start = (task: string): Message[] => [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: task }];

describe('agent steps read only what they add', () => {
  it('step after step on one conversation', async () => {
    const s = open[0]!;
    const conv = start('Read the files.');
    const steps: Step[] = [];
    for (let i = 0; i < 3; i++) steps.push(await step(s, conv, `file ${i}:\nexport const x${i} = ${i};\n`));
    expect(steps[0]!.cached).toBe(0);
    expectOnlyNew(steps[0]!, steps[1]!);
    expectOnlyNew(steps[1]!, steps[2]!);
  });

  it('three conversations on two slots, interleaved: each comes back from the park whole', async () => {
    const s = open[0]!;
    const convs = ['Fix the bug.', 'Add a test.', 'Rename x.'].map(start);
    const last: Step[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [i, conv] of convs.entries()) {
        const st = await step(s, conv, `round ${round}, conversation ${i}: ok\n`);
        if (round > 0) expectOnlyNew(last[i]!, st);
        last[i] = st;
      }
    }
    const m = (await json(s.port, 'GET', '/metrics')).body;
    expect(m.conversation_cache.hits).toBeGreaterThanOrEqual(3);
  });

  it('a 2,000-line tool result, then other conversations, then the next step: the prefix and the result are still whole', async () => {
    const s = open[0]!;
    const conv = start('Read the big file.');
    await step(s, conv, 'small\n');
    // 2,000 lines, most of them blank (2,199 tokens): the tiny model's context is 4,096 tokens a slot.
    const file = Array.from({ length: 2000 }, (_, i) => (i % 10 === 0 ? '}' : '')).join('\n');
    await step(s, conv, file);
    const read = await step(s, conv, 'ok\n'); // the step that reads the file
    expect(read.prompt - read.cached).toBeGreaterThan(2000);
    await step(s, start('Something else.'), 'x');
    await step(s, start('And another.'), 'y');
    expectOnlyNew(read, await step(s, conv, 'done'));
  });

  it('after a restart, from the saved session', async () => {
    const a = open[0]!;
    const conv = start('Read, save, come back.');
    await step(a, conv, 'one\n');
    const before = await step(a, conv, 'two\n');
    const saved = await json(a.port, 'POST', '/v1/sessions', { name: 'agent', messages: conv, tools });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body.tokens).toBeGreaterThan(before.prompt);
    await a.close();
    open.splice(0, 1);

    const b = await server();
    const restored = await json(b.port, 'POST', '/v1/sessions/agent/restore');
    expect(restored.status).toBe(200);
    expectOnlyNew(before, await step(b, conv, 'three\n'));
  });
});
