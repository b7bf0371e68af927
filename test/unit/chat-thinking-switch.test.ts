// Thinking off and on, per request and by the server's --reasoning default, with scripted engines
// whose model carries a reasoning template: a template with the enable_thinking switch renders it;
// one that opens <think> regardless gets the block closed at once, so the answer is content.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StrataServer } from '../../backend/app/app.js';
import { defaultConfig } from '../../backend/app/config.js';
import { silentLogger } from '../../backend/log/logger.js';
import type { ReasoningMode } from '../../backend/chat/thinking-switch.js';
import type { ModelInfo } from '../../native/lib/addon.js';
import { FakeEngineClient, type FakeEngineOptions } from '../helpers/fake-engine-client.js';

const CHATML = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
// Qwen3's switch: thinking off renders an empty think block after the assistant header.
const SWITCH = `${CHATML}{% if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}`;
// DeepSeek-R1 distills: the assistant turn always opens the thinking.
const FORCED = `${CHATML}{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}`;

class TemplatedFake extends FakeEngineClient {
  constructor(opts: FakeEngineOptions, private readonly template: string) { super(opts); }
  override async start(): Promise<ModelInfo> {
    const info = await super.start();
    info.chatTemplate = this.template;
    return info;
  }
}

const running: Array<{ server: StrataServer; dir: string }> = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.server.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

async function serve(template: string, pieces: string[], reasoning: ReasoningMode = 'auto') {
  const dir = mkdtempSync(join(tmpdir(), 'strata-thinking-'));
  const modelPath = join(dir, 'fake.gguf');
  writeFileSync(modelPath, 'not really a model: the scripted engines never read it');
  const fakes: FakeEngineClient[] = [];
  const server = new StrataServer({
    config: { ...defaultConfig(), port: 0, sessionsDir: dir, responsesDir: join(dir, 'responses'), reasoning }, modelPath, log: silentLogger,
    engineFactory: (replica) => {
      const f = new TemplatedFake({ replica, slots: 2, ctx: 1024, autoRun: { tokens: pieces.length, text: () => pieces } }, template);
      fakes.push(f);
      return f;
    },
  });
  running.push({ server, dir });
  const { url } = await server.listen();
  await server.startEngines();
  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() as any };
  };
  /** The prompt the engine was given for the last request, as text. */
  const lastPrompt = () => fakes[0]!.detokenize(fakes[0]!.all.at(-1)!.input.prompt as number[]);
  return { post, lastPrompt };
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
});
