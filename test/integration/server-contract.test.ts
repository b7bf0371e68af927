// The contract end to end: the real server's /metrics, /v1/traces, /v1/devices and /v1/sessions
// answers, read by the extension's own client (StrataClient, which checks every body against
// contract/), give the figures the server produced. A server field renamed without the contract
// fails here at run time as well as in the type check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrataClient } from '../../extension/client/client.js';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, startServer, tempDir, type Running } from './server-helpers.js';

let s: Running;
const sessions = tempDir('strata-contract-it-');
const messages = [{ role: 'user' as const, content: 'contract check' }];

beforeAll(async () => {
  s = await startServer(await ensureTestModel({}), { slots: 2, ctx: 512, sessionsDir: sessions.dir, parkMib: 64 });
});
afterAll(async () => {
  await s?.close();
  sessions.remove();
});

describe('the extension reads the server through the contract', () => {
  it('metrics, traces, devices and sessions parse and carry what the server did', async () => {
    const answer = await s.openai.chat.completions.create({ model: 'any', messages, ...greedy(4) });
    const id = Number(answer.id.replace('chatcmpl-', ''));
    const client = new StrataClient({ baseUrl: s.url });

    const m = await client.metrics();
    const row = m.requests.find((r) => r.id === String(id));
    expect(row).toMatchObject({ finish: answer.choices[0]!.finish_reason, outputTokens: answer.usage!.completion_tokens, promptTokens: answer.usage!.prompt_tokens });
    expect(m.engines.map((e) => [e.replica, e.alive])).toEqual([[0, true]]);
    expect(m.slots).toHaveLength(2);

    const traces = await client.traces();
    const t = traces.requests.find((r) => r.id === String(id));
    expect(t).toMatchObject({ kind: 'chat', finish: answer.choices[0]!.finish_reason, generated: answer.usage!.completion_tokens });
    expect(t!.dispatched).not.toBeNull();
    expect((await client.trace(String(id))).id).toBe(String(id));

    const devices = await client.devices();
    expect(devices.map((d) => d.name)).toContain('CPU');
    // The suggested GPU backend depends on the machine (null without a GPU the engine cannot use); it parses either way.
    const suggestion = await client.gpuSuggestion();
    expect(suggestion === null || ['vulkan', 'cuda', 'cuda-ext'].includes(suggestion.kind)).toBe(true);

    const saved = await client.saveSession('contract-1', [...messages, { role: 'assistant', content: answer.choices[0]!.message.content ?? '' }]);
    expect(saved).toMatchObject({ name: 'contract-1', messages: 2 });
    expect((await client.sessions()).map((x) => x.name)).toEqual(['contract-1']);
    const restored = await client.restoreSession('contract-1');
    expect(restored.messages).toEqual([{ role: 'user', content: 'contract check' }, { role: 'assistant', content: answer.choices[0]!.message.content ?? '' }]);
    expect(restored.tokens).toBeGreaterThan(0);
  });
});
