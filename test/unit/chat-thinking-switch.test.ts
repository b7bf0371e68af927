// Thinking off and on, per request and by the server's --reasoning default, with scripted engines
// whose model carries a reasoning template: a template with the enable_thinking switch renders it;
// one that opens <think> regardless gets the block closed at once, so the answer is content.
import { afterEach, describe, expect, it } from 'vitest';
import type { ReasoningMode } from '../../backend/chat/thinking-switch.js';
import { serveScripted, type ScriptedServer } from '../helpers/scripted-server.js';

const CHATML = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
// Qwen3's switch: thinking off renders an empty think block after the assistant header.
const SWITCH = `${CHATML}{% if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}`;
// DeepSeek-R1 distills: the assistant turn always opens the thinking.
const FORCED = `${CHATML}{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}`;

const running: ScriptedServer[] = [];
afterEach(async () => { for (const r of running.splice(0)) await r.close(); });

async function serve(template: string, pieces: string[], reasoning: ReasoningMode = 'auto') {
  const srv = await serveScripted(() => pieces, { template, config: { reasoning } });
  running.push(srv);
  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await fetch(`${srv.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() as any };
  };
  /** The prompt the engine was given for the last request, as text. */
  const lastPrompt = () => srv.fakes[0]!.detokenize(srv.fakes[0]!.all.at(-1)!.input.prompt as number[]);
  return { post, lastPrompt, url: srv.url };
}

const user = [{ role: 'user', content: 'Hi' }];
const CLOSED = '<|im_start|>assistant\n<think>\n\n</think>\n\n';

describe('thinking off and on', () => {
  it('reasoning_effort, thinking and reasoning.effort set the template\'s switch; chat_template_kwargs win over the effort', async () => {
    const { post, lastPrompt } = await serve(SWITCH, ['answer']);
    await post('/v1/chat/completions', { messages: user });
    expect(await lastPrompt()).toMatch(/<\|im_start\|>assistant\n$/);
    await post('/v1/chat/completions', { messages: user, reasoning_effort: 'none' });
    expect((await lastPrompt()).endsWith(CLOSED)).toBe(true);
    await post('/v1/chat/completions', { messages: user, reasoning_effort: 'none', chat_template_kwargs: { enable_thinking: true } });
    expect(await lastPrompt()).toMatch(/<\|im_start\|>assistant\n$/);
    await post('/v1/messages', { messages: user, max_tokens: 8, thinking: { type: 'disabled' } });
    expect((await lastPrompt()).endsWith(CLOSED)).toBe(true);
    await post('/v1/responses', { input: 'Hi', reasoning: { effort: 'minimal' } });
    expect((await lastPrompt()).endsWith(CLOSED)).toBe(true);
    const bad = await post('/v1/chat/completions', { messages: user, reasoning_effort: 'max' });
    expect(bad).toMatchObject({ status: 400, body: { error: { param: 'reasoning_effort' } } });
  });

  it('--reasoning off is the default a request can override', async () => {
    const { post, lastPrompt } = await serve(SWITCH, ['answer'], 'off');
    await post('/v1/chat/completions', { messages: user });
    expect((await lastPrompt()).endsWith(CLOSED)).toBe(true);
    await post('/v1/chat/completions', { messages: user, reasoning_effort: 'high' });
    expect(await lastPrompt()).toMatch(/<\|im_start\|>assistant\n$/);
  });

  it('a template that opens the thinking regardless: off closes it at once and the answer is content', async () => {
    const { post, lastPrompt } = await serve(FORCED, ['plan', '</think>', 'answer']);
    const on = await post('/v1/chat/completions', { messages: user });
    expect(on.body.choices[0].message).toMatchObject({ content: 'answer', reasoning_content: 'plan' });
    expect(await lastPrompt()).toMatch(/assistant\n<think>\n$/);
    const { post: postOff, lastPrompt: lastOff } = await serve(FORCED, ['answer'], 'off');
    const off = await postOff('/v1/chat/completions', { messages: user });
    expect((await lastOff()).endsWith(CLOSED)).toBe(true);
    expect(off.body.choices[0].message).toEqual({ role: 'assistant', content: 'answer' });
    const r = await postOff('/v1/responses', { input: 'Hi' });
    expect(r.body.output.map((i: { type: string }) => i.type)).toEqual(['message']);
    expect(r.body.usage.output_tokens_details.reasoning_tokens).toBe(0);
  });

  it('chat usage counts the tokens written inside the thinking, tags included, streamed and not', async () => {
    // <th|ink>\n|plan|\n</th|ink> are the thinking's five tokens; the answer is two more.
    const { post, url } = await serve(CHATML, ['<th', 'ink>\n', 'plan', '\n</th', 'ink>', '\n\nans', 'wer']);
    const whole = await post('/v1/chat/completions', { messages: user });
    expect(whole.body.usage).toMatchObject({ completion_tokens: 7, completion_tokens_details: { reasoning_tokens: 5 } });
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: user, stream: true, stream_options: { include_usage: true } }),
    });
    const chunks = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
    expect(chunks.at(-1).usage.completion_tokens_details).toEqual({ reasoning_tokens: 5 });
    const { post: plain } = await serve(CHATML, ['no', ' thinking']);
    expect((await plain('/v1/chat/completions', { messages: user })).body.usage.completion_tokens_details).toBeUndefined();
  });

  it('a thinking budget goes to the engine from --reasoning-budget, or from the request\'s thinking.budget_tokens', async () => {
    const srv = await serveScripted(() => ['answer'], { template: FORCED, config: { reasoningBudget: 5 } });
    running.push(srv);
    const send = (path: string, body: Record<string, unknown>) => fetch(`${srv.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const budget = () => srv.fakes[0]!.all.at(-1)!.input.sampling?.thinkingBudget;
    await send('/v1/chat/completions', { messages: user });
    expect(budget()).toMatchObject({ tokens: 5, inside: true, open: [...Buffer.from('<think>')], close: [...Buffer.from('\n</think>\n\n')] });
    await send('/v1/messages', { messages: user, max_tokens: 8, thinking: { type: 'enabled', budget_tokens: 2 } });
    expect(budget()?.tokens).toBe(2);
    const bad = await send('/v1/messages', { messages: user, max_tokens: 8, thinking: { type: 'enabled', budget_tokens: -1 } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/thinking\.budget_tokens/);
    // No budget by default: the engine gets none.
    const plain = await serveScripted(() => ['answer'], { template: FORCED });
    running.push(plain);
    await fetch(`${plain.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: user }) });
    expect(plain.fakes[0]!.all.at(-1)!.input.sampling?.thinkingBudget).toBeUndefined();
  });
});
