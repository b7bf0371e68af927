// The agent benchmarks' parts without a model: the fixture (deterministic, the conversations an
// agent sends), how an answer is judged for tool-call validity, and the agent-KV run's figures
// against a scripted OpenAI-compatible server (its prompt sizes and counter are known, so the
// minimum and the computed total are checked exactly).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, agentTranscripts, messagesBefore } from '../../tools/bench-compare/agent-fixture.js';
import { runAgentKv } from '../../tools/bench-compare/agent-kv.js';
import { emptyCounts, judgeAnswer, validatorsFor, validShare } from '../../tools/bench-compare/tool-validity.js';

describe('agent fixture', () => {
  it('is the same for the same salt, with each step\'s call valid for its tool', () => {
    const a = agentTranscripts(3, 12, 24, 'salt');
    expect(agentTranscripts(3, 12, 24, 'salt')).toEqual(a);
    expect(a.map((t) => t.steps.length)).toEqual([12, 12, 12]);
    expect(new Set(a.map((t) => t.system)).size).toBe(3);
    const validators = validatorsFor(AGENT_TOOLS);
    for (const s of a.flatMap((t) => t.steps)) expect(validators.get(s.call.name)!(s.call.arguments), JSON.stringify(s.call)).toBe(true);
    const m = messagesBefore(a[0]!, 2);
    expect(m.map((x) => x.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(m[2]!.tool_calls![0]!.id).toBe(m[3]!.tool_call_id);
    expect(m[2]!.tool_calls![0]!.id).toMatch(/^[A-Za-z0-9]{9}$/); // Mistral's templates want 9 characters
  });
});

describe('tool-call validity judging', () => {
  const validators = validatorsFor(AGENT_TOOLS);
  const answer = (message: Record<string, unknown>) => ({ choices: [{ message }] });
  const call = (name: string, args: string) => ({ function: { name, arguments: args } });

  it('counts valid calls, calls that do not validate, openers left in text, HTTP errors and answers without a call', () => {
    const c = emptyCounts();
    judgeAnswer(c, 200, answer({ tool_calls: [call('search', '{"query": "x", "scope": {"kind": "dir"}}')] }), '<tool_call>', validators);
    judgeAnswer(c, 200, answer({ tool_calls: [call('search', '{"query": "x", "scope": {"kind": "galaxy"}}')] }), '<tool_call>', validators);
    judgeAnswer(c, 200, answer({ tool_calls: [call('search', '{"query": ')] }), '<tool_call>', validators);
    judgeAnswer(c, 200, answer({ tool_calls: [call('nope', '{}')] }), '<tool_call>', validators);
    judgeAnswer(c, 200, answer({ content: 'ok <tool_call>\n{"name": "search", "argu' }), '<tool_call>', validators);
    judgeAnswer(c, 500, { error: { message: 'Failed to parse input' } }, '<tool_call>', validators);
    judgeAnswer(c, 200, answer({ content: 'Just text.' }), '<tool_call>', validators);
    expect({ ...c, failures: c.failures.length }).toEqual({ requests: 7, calls: 4, valid: 1, malformed: 2, noCall: 1, failures: 5 });
    expect(validShare(c)).toBeCloseTo(1 / 6);
    expect(validShare(emptyCounts())).toBeNaN();
  });
});

describe('agent KV run', () => {
  // A scripted server: a prompt is as many tokens as its JSON has characters / 10, and it computes
  // everything past what it already holds of that conversation (keyed by the system prompt).
  let server: Server;
  let url = '';
  let computed = 0;
  const held = new Map<string, number>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.method === 'GET') { res.end(JSON.stringify({ totals: { prompt_tokens_computed: computed } })); return; }
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        const b = JSON.parse(body);
        const prompt = Math.ceil(JSON.stringify(b.messages).length / 10);
        const key = b.messages[0].content as string;
        computed += prompt - Math.min(prompt, held.get(key) ?? 0);
        const completion = 7;
        // The answer is in the next prompt only when it is carried back (the model's own calls).
        held.set(key, prompt + (b.tool_choice === 'required' ? completion : 0));
        const calls = b.tool_choice === 'required' ? [{ id: 'own000001', type: 'function', function: { name: 'search', arguments: '{"query": "q", "scope": {"kind": "file"}}' } }] : [];
        res.end(JSON.stringify({ usage: { prompt_tokens: prompt, completion_tokens: completion }, choices: [{ message: { content: null, tool_calls: calls } }] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('fixture calls: the minimum is each transcript\'s last prompt; every request is counted', async () => {
    computed = 0;
    held.clear();
    const transcripts = agentTranscripts(3, 4, 6, 'kv');
    const r = await runAgentKv({ target: { url, model: 'm' }, transcripts, calls: 'fixture', banned: null, maxTokens: 4 });
    expect(r.requests).toBe(15);
    expect(r.failed).toBe(0);
    const last = [0, 1, 2].map((t) => r.steps.filter((s) => s.transcript === t).at(-1)!.prompt);
    expect(r.minimum).toBe(last.reduce((a, b) => a + b, 0));
    expect(r.computed).toBe(computed);
    // This server keeps every conversation whole: it reads exactly the minimum.
    expect(r.computed).toBe(r.minimum);
    expect(r.steps.map((s) => s.step)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]);
  });

  it('model calls: the model\'s own call is carried back, and what it wrote is not counted in the minimum', async () => {
    computed = 0;
    held.clear();
    const transcripts = agentTranscripts(2, 3, 6, 'kv2');
    const r = await runAgentKv({ target: { url, model: 'm' }, transcripts, calls: 'model', banned: null, maxTokens: 64 });
    const last = [0, 1].map((t) => r.steps.filter((s) => s.transcript === t).at(-1)!.prompt);
    expect(r.minimum).toBe(last[0]! + last[1]! - 2 * 3 * 7);
    // A server that keeps the answers as written reads the minimum here too.
    expect(r.computed).toBe(r.minimum);
  });
});
