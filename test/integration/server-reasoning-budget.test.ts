// A thinking budget on the real engine: a random-weight model never ends its thinking by itself,
// so without a budget every token is thinking; with one, the engine writes the end of thinking
// once the budget is spent and the answer goes on. The template (QwQ's) opens the thinking in the
// prompt when thinking is on, so the budget counts from the first token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, tempDir, type Running } from './server-helpers.js';

let srv: Running;
const dirs = tempDir('strata-budget-');
const BUDGET = 6;
let closeLen = 0;

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({ chatTemplate: 'Qwen-QwQ-32B' }), {
    slots: 2, ctx: 1024, reasoningBudget: BUDGET, sessionsDir: dirs.dir, responsesDir: dirs.dir,
  });
  closeLen = (await json<{ tokens: number[] }>(srv.port, 'POST', '/tokenize', { content: '\n</think>\n\n', parse_special: true })).body.tokens.length;
});
afterAll(async () => {
  await srv?.close();
  dirs.remove();
});

describe('--reasoning-budget and thinking.budget_tokens', () => {
  it('chat: thinking ends at the budget (its tokens and the end of thinking) and the answer goes on', async () => {
    const r = await srv.openai.chat.completions.create({
      model: 'any', messages: [{ role: 'user', content: 'Why is the sky blue?' }], reasoning_effort: 'high', temperature: 0, max_tokens: 30,
    });
    const m = r.choices[0]!.message as { content: string | null; reasoning_content?: string };
    expect(m.reasoning_content?.length ?? 0).toBeGreaterThan(0);
    expect(m.content?.length ?? 0).toBeGreaterThan(0);
    const reasoning = r.usage!.completion_tokens_details!.reasoning_tokens!;
    // The budget's tokens, the end of thinking the engine wrote, and at most the answer's leading whitespace.
    expect(reasoning).toBeGreaterThanOrEqual(BUDGET + closeLen);
    expect(reasoning).toBeLessThan(BUDGET + closeLen + 3);
    expect(r.usage!.completion_tokens).toBe(30);
  }, 300_000);

  it('Messages: a request\'s budget_tokens wins over the server\'s; without a budget the thinking never ends', async () => {
    const ask = async (thinking: Record<string, unknown>) => (await json<{ content: Array<{ type: string; thinking?: string; text?: string }> }>(srv.port, 'POST', '/v1/messages', {
      model: 'any', max_tokens: 24, temperature: 0, messages: [{ role: 'user', content: 'Why is the sky blue?' }], thinking,
    })).body.content;
    const short = await ask({ type: 'enabled', budget_tokens: 2 });
    const long = await ask({ type: 'enabled', budget_tokens: 12 });
    expect(short.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(long.map((b) => b.type)).toEqual(['thinking', 'text']);
    // Greedy: the shorter budget's thinking is the start of the longer one's.
    expect(long[0]!.thinking!.startsWith(short[0]!.thinking!.trimEnd())).toBe(true);
    expect(long[0]!.thinking!.length).toBeGreaterThan(short[0]!.thinking!.length);
    // Budget 0: the thinking the prompt opened ends at once.
    const zero = await ask({ type: 'enabled', budget_tokens: 0 });
    expect(zero.find((b) => b.type === 'thinking')?.thinking ?? '').toBe('');
    expect(zero.find((b) => b.type === 'text')?.text?.length ?? 0).toBeGreaterThan(0);
    // A budget past max_tokens: all of it is thinking, no answer text.
    const none = await ask({ type: 'enabled', budget_tokens: 100 });
    expect(none[0]!.thinking!.startsWith(long[0]!.thinking!.trimEnd())).toBe(true);
    expect(none.filter((b) => b.type === 'text' && b.text !== '')).toEqual([]);
  }, 300_000);

  it('Responses: a reasoning item cut at the budget, then the message', async () => {
    const r = await srv.openai.responses.create({ model: 'any', input: 'Why is the sky blue?', reasoning: { effort: 'high' }, temperature: 0, max_output_tokens: 30, store: false });
    expect(r.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect(r.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThanOrEqual(BUDGET + closeLen);
  }, 300_000);
});
