// A long agent transcript through the real loop on the real server and engine, within a small
// context per slot: 40 forced calls of a tool whose results add up to about 3× the context, then a
// plain answer. The loop measures the prompt before each step (the server's count of the last one
// plus the new messages, counted with /v1/tokenize), compacts with stubs, then with summaries the
// model writes, and completes. A random-weight model (Qwen2.5's tokenizer and template, the hermes
// tool format) plays the agent: what is tested is the budget and the KV it re-reads, not judgement.
// The compacted conversation then saves as a session and restores as it was.
// Prints the figures (prompt tokens computed against the minimum, compactions, re-read each).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ChatMessage } from '../../contract/chat.js';
import { splitSummary } from '../../contract/compaction.js';
import { AgentLoop, type AgentEvent } from '../../extension/agent/loop.js';
import { isStub } from '../../extension/agent/compaction.js';
import { NodeWorkspace } from '../../extension/agent/node-workspace.js';
import { WorkspacePaths } from '../../extension/agent/paths.js';
import { ToolRegistry } from '../../extension/agent/registry.js';
import type { AgentTool } from '../../extension/agent/types.js';
import { StrataClient } from '../../extension/client/client.js';
import { ensureTestModel } from '../helpers/models.js';
import { startServer, tempDir, type Running } from './server-helpers.js';

// 41 grammar-constrained steps over a 152K vocabulary and the summaries, on a loaded 2-core machine (~25 s a step).
vi.setConfig({ testTimeout: 2_400_000 });

const CTX = 2048;
const STEPS = 40;

/** A chunk of ~150 tokens, different at every call. */
const chunk = (k: number): string => `part ${k}:\n${Array.from({ length: 40 }, (_, i) => `w${k}x${i}`).join(' ')}`;

describe('a 40-step agent transcript within a 2,048-token slot', () => {
  let srv: Running;
  let sessions: { dir: string; remove(): void };
  beforeAll(async () => {
    sessions = tempDir('strata-agent-ctx-sessions-');
    srv = await startServer(await ensureTestModel({ vocab: 'qwen2.5-coder', chatTemplate: 'Qwen-Qwen2.5-7B-Instruct' }), { ctx: CTX, slots: 1, sessionsDir: sessions.dir });
  });
  afterAll(async () => {
    await srv?.close();
    sessions?.remove();
  });

  it('completes with stubs, then summaries; every request fits; each compaction re-reads at most one context; the compacted session saves and restores', async () => {
    const client = new StrataClient({ baseUrl: srv.url });
    let calls = 0;
    const readChunk: AgentTool = {
      name: 'read_chunk', description: 'Reads the next part of the document.', kind: 'read',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      run: async () => ({ type: 'text', text: chunk(++calls) }),
    };
    const dir = tempDir('strata-agent-ctx-ws-');
    const paths = new WorkspacePaths([{ name: 'ws', path: dir.dir }]);
    const events: AgentEvent[] = [];
    const tools = new ToolRegistry([readChunk]);
    const loop = new AgentLoop({
      client, tools, workspace: new NodeWorkspace(paths, { exclude: () => [] }), paths,
      approvals: { allowTool: async () => true, review: async (c) => c.map(() => false), allowCommand: async () => false },
      settings: { maxSteps: STEPS + 1, autoApproveReadOnly: true, allowedCommands: [], maxResultTokens: 400 },
      toolChoice: (step) => (step <= STEPS ? { name: 'read_chunk' } : 'none'),
      maxTokens: 40,
      countTokens: async (text, signal) => (await client.tokenize(text, signal)).length,
      contextWindow: (signal) => client.chatSlotContext(signal),
      onEvent: (e) => events.push(e),
    });
    const question: ChatMessage[] = [{ role: 'system', content: 'You are an agent. Read the document part by part.' }, { role: 'user', content: 'Read the whole document, then say what it is about.' }];
    const started = Date.now();
    const run = await loop.run(question, new AbortController().signal);
    dir.remove();
    expect(run.error).toBeNull();
    expect(run.end).toBe('answer');
    expect(run.steps).toBe(STEPS + 1);
    expect(calls).toBe(STEPS);
    const resultTokens = (await Promise.all(run.messages.filter((m) => m.role === 'tool').map(async (m) => (await client.tokenize(m.content)).length))).reduce((a, b) => a + b, 0);
    expect(resultTokens).toBeGreaterThan(2.5 * CTX);

    const compactions = events.filter((e): e is Extract<AgentEvent, { type: 'compaction' }> => e.type === 'compaction').map((e) => e.compaction);
    const kinds = compactions.map((c) => (c.summary ? 'summary' : 'stubs'));
    expect(kinds[0]).toBe('stubs');
    expect(kinds).toContain('summary');
    expect(run.context.ctx).toBe(CTX);
    // Hysteresis: from 85% down to 50% of the context, so several steps between compactions.
    expect(compactions.length).toBeLessThan(STEPS / 2);
    // Each compaction re-reads at most one context (the summary request's prompt and the next step's).
    for (const c of run.context.compactions) expect(c.reread).toBeLessThanOrEqual(CTX);

    // The conversation goes on from the system message, the question with the last summary, the last steps.
    const conv = run.conversation!;
    expect(conv[0]).toEqual(question[0]);
    expect(splitSummary(conv[1]!.content).question).toBe(question[1]!.content);
    expect(splitSummary(conv[1]!.content).label).toBe(compactions.filter((c) => c.summary).at(-1)!.label);
    const lastResult = [...conv].reverse().find((m) => m.role === 'tool')!;
    expect(isStub(lastResult)).toBe(false);
    expect(lastResult.content).toBe(chunk(STEPS));

    const s = run.context;
    const perCompaction = s.compactions.map((c) => `${c.kind} ${c.before}→${c.after}, re-read ${c.reread}`).join('; ');
    console.log(`agent transcript, ${STEPS} forced steps, ctx ${CTX} per slot: ${((Date.now() - started) / 1000).toFixed(1)} s; results ${resultTokens} tokens (${(resultTokens / CTX).toFixed(1)}× the context); `
      + `${s.requests} requests; prompt tokens sent ${s.promptTokens}, computed ${s.computedTokens}, minimum (each step's new tokens once) ${s.newTokens} `
      + `(computed/minimum ${(s.computedTokens / s.newTokens).toFixed(2)}); ${s.compactions.length} compactions: ${perCompaction}; re-read outside compactions ${s.rereadElsewhere}`);

    // The compacted conversation saves as a session (with the tools, so its KV matches) and restores as it was.
    const saved = await client.saveSession('agent-compacted', conv, undefined, { tools: tools.specs() });
    expect(saved.tokens).toBeGreaterThan(0);
    expect(saved.tokens!).toBeLessThan(CTX);
    const restored = await client.restoreSession('agent-compacted');
    expect(restored.messages?.map((m) => ({ role: m.role, content: m.content }))).toEqual(conv.map((m) => ({ role: m.role, content: m.content })));
    expect(splitSummary(restored.messages![1]!.content).summary).toBe(splitSummary(conv[1]!.content).summary);
  });
});
