// The agent loop within the model's context per slot, against the scripted OpenAI-compatible server
// (test/helpers/scripted-model-server.ts) that reports a context per slot, counts prompts with its
// stand-in tokenizer and refuses one that does not fit, as Strata does. An agent that reads file
// after file of ~1,100 tokens on 4,096 tokens per slot: without the budget it fails at its third
// step; with it, it compacts (stubs, then a summary) and finishes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../contract/chat.js';
import type { AgentCompactionView } from '../../contract/agent.js';
import { splitSummary } from '../../contract/compaction.js';
import { StrataClient } from '../../extension/client/client.js';
import { AgentLoop, type AgentEvent } from '../../extension/agent/loop.js';
import { SUMMARY_PROMPT, isStub } from '../../extension/agent/compaction.js';
import { NodeWorkspace } from '../../extension/agent/node-workspace.js';
import { WorkspacePaths } from '../../extension/agent/paths.js';
import { ToolRegistry } from '../../extension/agent/registry.js';
import { READ_TOOLS } from '../../extension/agent/read-tools.js';
import { ScriptedModelServer, type ChatTurnScript } from '../helpers/scripted-model-server.js';

const CTX = 4096;
const FILES = 24;
let dir: string;
let server: ScriptedModelServer | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-agent-ctx-'));
  // ~1,100 tokens each for the stand-in tokenizer (4 characters a token).
  for (let i = 1; i <= FILES; i++) writeFileSync(join(dir, `f${i}.ts`), Array.from({ length: 110 }, (_, k) => `const v${i}_${k} = ${k};`).join('\n').padEnd(4400, ' '));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const isSummaryRequest = (body: Record<string, unknown>): boolean => (body.messages as Array<{ content?: string }>).at(-1)?.content === SUMMARY_PROMPT;

/** Reads f1..fN in turn (one a step), then answers; a summary request gets a summary. */
function reader(): (body: Record<string, unknown>) => ChatTurnScript {
  let step = 0;
  return (body) => {
    if (isSummaryRequest(body)) return { text: '## Task: read every file.\n## Learned: each file declares constants.\n## Files changed: none.\n## Left to do: read the rest.' };
    step++;
    return step <= FILES ? { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: `f${step}.ts` }) }] } : { text: 'All files read.' };
  };
}

async function setup(opts: { budget: boolean }) {
  server = new ScriptedModelServer({ chat: reader(), slotContext: CTX });
  const url = await server.start();
  const client = new StrataClient({ baseUrl: url });
  const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
  const events: AgentEvent[] = [];
  const loop = new AgentLoop({
    client, tools: new ToolRegistry(READ_TOOLS), workspace: new NodeWorkspace(paths, { exclude: () => [] }), paths,
    approvals: { allowTool: async () => true, review: async (c) => c.map(() => false), allowCommand: async () => false },
    settings: { maxSteps: 60, autoApproveReadOnly: true, allowedCommands: [], maxResultTokens: 2000 },
    countTokens: async (text, signal) => (await client.tokenize(text, signal)).length,
    ...(opts.budget ? { contextWindow: (signal: AbortSignal) => client.chatSlotContext(signal) } : {}),
    onEvent: (e) => events.push(e),
  });
  return { loop, events, srv: server };
}

const question: ChatMessage[] = [{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'Read every file.' }];

describe('the agent loop within the context per slot', () => {
  it('without a budget, two results of ~1,100 tokens overflow 4,096 tokens at the third step', async () => {
    const { loop } = await setup({ budget: false });
    const run = await loop.run(question, new AbortController().signal);
    expect(run.end).toBe('error');
    expect(run.steps).toBe(4);
    expect(run.error).toMatch(/does not fit the context of 4096 tokens per slot/);
  });

  it('compacts (stubs first, then a summary) and finishes; every request fits; the latest results stay whole', async () => {
    const { loop, events, srv } = await setup({ budget: true });
    const run = await loop.run(question, new AbortController().signal);
    expect(run.error).toBeNull();
    expect(run.end).toBe('answer');
    expect(run.messages.at(-1)).toEqual({ role: 'assistant', content: 'All files read.' });
    const chats = srv.of('/v1/chat/completions');
    // Results of 24 × ~1,100 tokens: over 6 contexts in all.
    expect(run.messages.filter((m) => m.role === 'tool').reduce((n, m) => n + m.content.length / 4, 0)).toBeGreaterThan(6 * CTX);
    for (const r of chats) expect(Math.ceil(JSON.stringify([r.body.messages, r.body.tools ?? null]).length / 4)).toBeLessThan(CTX);

    const compactions = events.filter((e): e is Extract<AgentEvent, { type: 'compaction' }> => e.type === 'compaction').map((e) => e.compaction);
    const kinds = compactions.map((c: AgentCompactionView) => (c.summary ? 'summary' : 'stubs'));
    expect(kinds[0]).toBe('stubs');
    expect(kinds).toContain('summary');
    // Each compaction goes down to about half the context, so there are few of them: far fewer than steps.
    expect(compactions.length).toBeLessThan(run.steps / 2);
    for (const c of compactions) expect(c.after).toBeLessThanOrEqual(CTX * 0.5 + 600);
    expect(run.context.compactions.map((c) => c.kind)).toEqual(kinds);
    console.log(`scripted: ${run.steps} steps, ${JSON.stringify(run.context)}`);

    // The summary request: the conversation (within the context) and the prompt; no tool call allowed.
    const summaries = chats.filter((r) => isSummaryRequest(r.body));
    expect(summaries.length).toBe(kinds.filter((k) => k === 'summary').length);
    for (const r of summaries) expect(r.body.tool_choice).toBe('none');

    // Every step request ends with its latest results whole, never a stub.
    for (const r of chats.filter((x) => !isSummaryRequest(x.body))) {
      const msgs = r.body.messages as Array<{ role: string; content: string }>;
      if (msgs.at(-1)!.role === 'tool') { expect(msgs.at(-1)!.content).not.toMatch(/^\[elided/); expect(msgs.at(-1)!.content).toContain('= 109;'); }
    }

    // The run goes on from the compacted conversation: system, the question with the summary, the last steps.
    const conv = run.conversation!;
    expect(conv[0]).toEqual(question[0]);
    const q = splitSummary(conv[1]!.content);
    expect(q.question).toBe('Read every file.');
    expect(q.summary).toMatch(/## Left to do/);
    expect(q.label).toBe(compactions.filter((c) => c.summary).at(-1)!.label);
    expect(conv.at(-1)).toEqual({ role: 'assistant', content: 'All files read.' });
    // What the next question sends fits with room to answer.
    expect(Math.ceil(JSON.stringify(conv).length / 4)).toBeLessThan(CTX * 0.85);

    // The panel's meter: the context use against the context per slot, after every step.
    const meter = events.filter((e): e is Extract<AgentEvent, { type: 'context' }> => e.type === 'context').map((e) => e.context);
    expect(meter.every((m) => m.ctx === CTX)).toBe(true);
    expect(Math.max(...meter.map((m) => m.used))).toBeLessThan(CTX);
  });

  it('Compact on demand summarises a finished conversation; the summary request fits', async () => {
    const { loop, srv } = await setup({ budget: true });
    const finished: ChatMessage[] = [...question];
    for (let i = 1; i <= 3; i++) {
      finished.push({ role: 'assistant', content: '', toolCalls: [{ id: `c${i}`, name: 'read_file', arguments: JSON.stringify({ path: `f${i}.ts` }) }] });
      finished.push({ role: 'tool', toolCallId: `c${i}`, name: 'read_file', content: 'x'.repeat(3000) });
    }
    finished.push({ role: 'assistant', content: 'Three files read.' });
    const done = (await loop.compact(finished, new AbortController().signal))!;
    expect(done.compaction.label).toBe('the conversation summarised');
    expect(done.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(done.messages.at(-2)!.content).toBe('x'.repeat(3000));
    expect(splitSummary(done.messages[1]!.content).summary).toMatch(/## Task/);
    const req = srv.of('/v1/chat/completions').at(-1)!;
    expect(isSummaryRequest(req.body)).toBe(true);
    // A stub never reaches the kept step.
    expect(done.messages.filter((m) => isStub(m))).toHaveLength(0);
  });
});
