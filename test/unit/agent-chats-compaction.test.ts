// The panel's agent conversations and compaction (extension/agent/agent-chats.ts) against the
// scripted server with a context per slot: an answer that compacted ends with the conversation to
// go on from (without the loop's system message), the views get the meter and the marker (also
// when a view comes back), and Compact sends back the summarised conversation.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../contract/chat.js';
import type { ToWebview } from '../../contract/panel.js';
import { splitSummary } from '../../contract/compaction.js';
import { AgentChats } from '../../extension/agent/agent-chats.js';
import { SUMMARY_PROMPT } from '../../extension/agent/compaction.js';
import { AgentLoop } from '../../extension/agent/loop.js';
import { NodeWorkspace } from '../../extension/agent/node-workspace.js';
import { WorkspacePaths } from '../../extension/agent/paths.js';
import { READ_TOOLS } from '../../extension/agent/read-tools.js';
import { ToolRegistry } from '../../extension/agent/registry.js';
import { StrataClient } from '../../extension/client/client.js';
import { ScriptedModelServer, type ChatTurnScript } from '../helpers/scripted-model-server.js';

let dir: string;
let server: ScriptedModelServer | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-agent-chats-ctx-'));
  writeFileSync(join(dir, 'big.txt'), 'x'.repeat(4400));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function setup(reads: number) {
  let n = 0;
  const script = (body: Record<string, unknown>): ChatTurnScript => {
    if ((body.messages as Array<{ content: string }>).at(-1)!.content === SUMMARY_PROMPT) return { text: '## Task: read big.txt' };
    return n++ < reads ? { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'big.txt' }) }] } : { text: 'done' };
  };
  server = new ScriptedModelServer({ chat: script, slotContext: 4096 });
  const client = new StrataClient({ baseUrl: await server.start() });
  const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
  const posted: ToWebview[] = [];
  const last: Array<{ name: string; messages: ChatMessage[] }> = [];
  const agents = new AgentChats({
    ensureClient: async () => client,
    prepare: async (_c, messages) => ({ messages, content: messages.at(-1)!.content, note: null, error: null }),
    makeLoop: async (c, onEvent, approvals) => ({
      system: 'SYSTEM',
      loop: new AgentLoop({
        client: c, tools: new ToolRegistry(READ_TOOLS), workspace: new NodeWorkspace(paths, { exclude: () => [] }), paths, approvals, onEvent,
        settings: { maxSteps: 20, autoApproveReadOnly: true, allowedCommands: [], maxResultTokens: 2000 },
        countTokens: async (t, s) => (await c.tokenize(t, s)).length, contextWindow: (s) => c.chatSlotContext(s),
      }),
    }),
    showDiff: async () => undefined,
  }, (m) => posted.push(m), (name, messages) => last.push({ name, messages }));
  return { agents, posted, last };
}

describe('agent conversations and compaction', () => {
  it('an answer that compacted ends with the conversation to go on from; the meter and the marker reach the views and a view that comes back', async () => {
    const { agents, posted, last } = await setup(4);
    await agents.run('a1', 'work', [{ role: 'user', content: 'read big.txt four times' }], []);
    const end = posted.find((m): m is Extract<ToWebview, { type: 'chatEnd' }> => m.type === 'chatEnd')!.end;
    expect(end.error).toBeNull();
    const conv = end.agent!.conversation!;
    expect(conv[0]!.role).toBe('user');
    expect(conv.some((m) => m.role === 'system')).toBe(false);
    expect(conv.at(-1)).toEqual({ role: 'assistant', content: 'done' });
    expect(last.at(-1)).toEqual({ name: 'work', messages: conv });
    const markers = posted.filter((m) => m.type === 'agentCompaction');
    expect(markers.length).toBeGreaterThan(0);
    const meters = posted.filter((m): m is Extract<ToWebview, { type: 'agentContext' }> => m.type === 'agentContext');
    expect(meters.at(-1)!.context.ctx).toBe(4096);
    const replay = agents.replay();
    expect(replay.filter((m) => m.type === 'agentCompaction')).toEqual(markers);
    expect(replay.filter((m) => m.type === 'agentContext')).toEqual([meters.at(-1)]);
  });

  it('the conversation\'s thinking level goes with every step\'s request; auto sends none', async () => {
    const { agents } = await setup(1);
    await agents.run('t1', 'work', [{ role: 'user', content: 'read big.txt' }], [], 'off');
    await agents.run('t2', 'work', [{ role: 'user', content: 'read big.txt' }], [], 'auto');
    const efforts = server!.of('/v1/chat/completions').map((r) => r.body.reasoning_effort ?? 'unset');
    // t1: a read, then the answer; t2 answers at once (the script reads once).
    expect(efforts).toEqual(['none', 'none', 'unset']);
  });

  it('Compact sends back the summarised conversation (without the system message) and remembers it for Save Session', async () => {
    const { agents, posted, last } = await setup(0);
    const messages: ChatMessage[] = [
      { role: 'user', content: 'read' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'read_file', arguments: '{"path":"big.txt"}' }] }, { role: 'tool', toolCallId: 'a', name: 'read_file', content: 'A' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'b', name: 'read_file', arguments: '{"path":"big.txt"}' }] }, { role: 'tool', toolCallId: 'b', name: 'read_file', content: 'B' },
      { role: 'assistant', content: 'ok' },
    ];
    expect(await agents.compact('work', messages)).toBeNull();
    const done = posted.find((m): m is Extract<ToWebview, { type: 'agentCompacted' }> => m.type === 'agentCompacted')!;
    expect(done.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(splitSummary(done.messages[0]!.content)).toEqual({ question: 'read', label: 'the conversation summarised', summary: '## Task: read big.txt' });
    expect(done.compaction.label).toBe('the conversation summarised');
    expect(last.at(-1)).toEqual({ name: 'work', messages: done.messages });
    // Nothing to summarise: said, nothing sent.
    const sent = posted.length;
    expect(await agents.compact('work', messages.slice(0, 3))).toMatch(/nothing to compact/);
    expect(posted.length).toBe(sent);
  });
});
