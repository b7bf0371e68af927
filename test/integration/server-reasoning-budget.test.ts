// A thinking budget on the real engine: a random-weight model never ends its thinking by itself,
// so without a budget every token is thinking; with one, the engine writes the end of thinking
// once the budget is spent and the answer goes on. The template (QwQ's) opens the thinking in the
// prompt when thinking is on (--reasoning on here), so the budget counts from the first token. Reasoning efforts map to
// budgets (--reasoning-effort-budgets); the Anthropic client's thinking blocks, whole and streamed.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, tempDir, type Running } from './server-helpers.js';

let srv: Running;
const dirs = tempDir('strata-budget-');
const BUDGET = 6;
/** --reasoning-effort-budgets low,medium,high: small, so each is seen to end the thinking. */
const EFFORTS = { low: 2, medium: 5, high: 9 } as const;
let closeLen = 0;

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({ chatTemplate: 'Qwen-QwQ-32B' }), {
    slots: 2, ctx: 1024, reasoning: 'on', reasoningBudget: BUDGET, reasoningEffortBudgets: [EFFORTS.low, EFFORTS.medium, EFFORTS.high], sessionsDir: dirs.dir, responsesDir: dirs.dir,
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
      model: 'any', messages: [{ role: 'user', content: 'Why is the sky blue?' }], temperature: 0, max_tokens: 30,
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
    // A budget past the context per slot (1,024 here) is the context: the same answer, not an error.
    const huge = await ask({ type: 'enabled', budget_tokens: 100_000 });
    expect(huge).toEqual(none);
  }, 300_000);

  it('Responses: a reasoning item cut at the budget, then the message', async () => {
    const r = await srv.openai.responses.create({ model: 'any', input: 'Why is the sky blue?', temperature: 0, max_output_tokens: 30, store: false });
    expect(r.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect(r.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThanOrEqual(BUDGET + closeLen);
  }, 300_000);
});

describe('reasoning efforts as budgets', () => {
  it('chat reasoning_effort and Responses reasoning.effort: low, medium and high end the thinking at their budgets; minimal and none think not at all', async () => {
    const chatReasoning = async (effort: 'none' | 'minimal' | 'low' | 'medium' | 'high') => {
      const r = await srv.openai.chat.completions.create({
        model: 'any', messages: [{ role: 'user', content: 'Why is the sky blue?' }], reasoning_effort: effort, temperature: 0, max_tokens: 30,
      });
      const m = r.choices[0]!.message as { content: string | null; reasoning_content?: string };
      return { tokens: r.usage!.completion_tokens_details?.reasoning_tokens ?? 0, text: m.reasoning_content ?? '', answer: m.content ?? '' };
    };
    const seen: number[] = [];
    for (const effort of ['low', 'medium', 'high'] as const) {
      const r = await chatReasoning(effort);
      // The budget's tokens, the end of thinking the engine wrote, at most the answer's leading whitespace; then the answer.
      expect(r.tokens, effort).toBeGreaterThanOrEqual(EFFORTS[effort] + closeLen);
      expect(r.tokens, effort).toBeLessThan(EFFORTS[effort] + closeLen + 3);
      expect(r.answer.length, effort).toBeGreaterThan(0);
      const resp = await srv.openai.responses.create({ model: 'any', input: 'Why is the sky blue?', reasoning: { effort }, temperature: 0, max_output_tokens: 30, store: false });
      expect(resp.usage!.output_tokens_details.reasoning_tokens, effort).toBe(r.tokens);
      seen.push(r.tokens);
    }
    expect(seen[0]).toBeLessThan(seen[1]!);
    expect(seen[1]).toBeLessThan(seen[2]!);
    for (const effort of ['none', 'minimal'] as const) {
      const r = await chatReasoning(effort);
      expect(r.tokens, effort).toBe(0);
      expect(r.text, effort).toBe('');
      const resp = await srv.openai.responses.create({ model: 'any', input: 'Why is the sky blue?', reasoning: { effort }, temperature: 0, max_output_tokens: 10, store: false });
      expect(resp.output.map((i) => i.type), effort).toEqual(['message']);
      expect(resp.usage!.output_tokens_details.reasoning_tokens, effort).toBe(0);
    }
  }, 300_000);
});

describe('the Anthropic client\'s thinking blocks', () => {
  it('whole and streamed: a thinking block within budget_tokens, then the text block', async () => {
    const client = new Anthropic({ baseURL: srv.url, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
    const ask = { model: 'any', max_tokens: 24, messages: [{ role: 'user' as const, content: 'Why is the sky blue?' }], thinking: { type: 'enabled' as const, budget_tokens: 4 } };
    const whole = await client.messages.create(ask);
    expect(whole.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    const thinking = (whole.content[0] as Anthropic.ThinkingBlock).thinking;
    expect(thinking.length).toBeGreaterThan(0);
    // Within the budget: the thinking is at most 4 tokens of text.
    const tokens = (await json<{ tokens: number[] }>(srv.port, 'POST', '/tokenize', { content: thinking.trim() })).body.tokens.length;
    expect(tokens).toBeLessThanOrEqual(4);
    expect(typeof (whole.content[0] as Anthropic.ThinkingBlock).signature).toBe('string');

    const stream = client.messages.stream(ask);
    const kinds: string[] = [];
    for await (const ev of stream) if (ev.type === 'content_block_delta') kinds.push(ev.delta.type);
    const final = await stream.finalMessage();
    expect(final.content).toEqual(whole.content);
    expect(kinds).toContain('thinking_delta');
    expect(kinds).toContain('text_delta');
    expect(kinds.indexOf('thinking_delta')).toBeLessThan(kinds.indexOf('text_delta'));
    // Thinking disabled: no thinking block.
    const off = await client.messages.create({ ...ask, thinking: { type: 'disabled' } });
    expect(off.content.map((b) => b.type)).toEqual(['text']);
  }, 300_000);
});
