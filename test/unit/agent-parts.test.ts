// The agent's parts on their own: the panel side (AgentChats: steps streamed, decisions, Accept
// all, Stop while waiting), turns rebuilt from a saved agent conversation, MCP tools through the
// official SDK against a real stdio server, the allow-list, edit blocks, the schema check.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentChats } from '../../extension/agent/agent-chats.js';
import { CHANGE_TOOLS } from '../../extension/agent/change-tools.js';
import { isAllowListed } from '../../extension/agent/command-policy.js';
import { applyBlocks } from '../../extension/agent/edit-blocks.js';
import { wellFormedToolTurns } from '../../extension/agent/history.js';
import { AgentLoop } from '../../extension/agent/loop.js';
import { McpTools, mcpProgram, mcpToolName } from '../../extension/agent/mcp.js';
import { NodeWorkspace } from '../../extension/agent/node-workspace.js';
import { WorkspacePaths } from '../../extension/agent/paths.js';
import { READ_TOOLS } from '../../extension/agent/read-tools.js';
import { ToolRegistry } from '../../extension/agent/registry.js';
import { schemaProblem } from '../../extension/agent/schema.js';
import { findRipgrep, ripgrepSearch } from '../../extension/agent/ripgrep.js';
import { StrataClient } from '../../extension/client/client.js';
import type { ToWebview } from '../../contract/panel.js';
import type { ChatMessage } from '../../contract/chat.js';
import { conversation, initialState, reduce, sendChat, setMode } from '../../webview/state.js';
import { ScriptedModelServer, type ChatTurnScript } from '../helpers/scripted-model-server.js';

let dir: string;
let server: ScriptedModelServer | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-agentchats-'));
  writeFileSync(join(dir, 'a.txt'), 'alpha\n');
  writeFileSync(join(dir, 'b.txt'), 'beta\n');
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function chats(turns: ChatTurnScript[], opts: { untrusted?: boolean } = {}) {
  server = new ScriptedModelServer({ chat: (_b, i) => turns[Math.min(i, turns.length - 1)] });
  const url = await server.start();
  const client = new StrataClient({ baseUrl: url });
  const posted: ToWebview[] = [];
  const watchers: Array<() => boolean> = [];
  const last: Array<{ name: string; messages: ChatMessage[] }> = [];
  const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
  const agents = new AgentChats({
    ensureClient: async () => client,
    prepare: async (_c, messages) => ({ messages, content: messages.at(-1)!.content, note: null, error: null }),
    makeLoop: async (c, onEvent, approvals) => (opts.untrusted ? 'Agent mode is off in Restricted Mode' : {
      system: 'SYSTEM',
      loop: new AgentLoop({
        client: c, tools: new ToolRegistry([...READ_TOOLS, ...CHANGE_TOOLS]), workspace: new NodeWorkspace(paths, { exclude: () => [] }), paths, approvals, onEvent,
        settings: { maxSteps: 10, autoApproveReadOnly: true, allowedCommands: [], maxResultTokens: 1000 },
      }),
    }),
    showDiff: async () => undefined,
  }, (m) => {
    posted.push(m);
    for (const w of watchers.splice(0)) if (!w()) watchers.push(w);
  }, (name, messages) => last.push({ name, messages }));
  /** Resolves when `count` steps of this chat ask for `ask` (checked on every message the views get). */
  const asked = (chatId: string, ask: string, count = 1): Promise<string[]> => new Promise((resolveAsk) => {
    const check = (): boolean => {
      const ids = [...new Set(posted.filter((m): m is Extract<ToWebview, { type: 'agentStep' }> => m.type === 'agentStep' && m.chatId === chatId && m.step.ask === ask).map((m) => m.step.id))];
      if (ids.length < count) return false;
      resolveAsk(ids);
      return true;
    };
    if (!check()) watchers.push(check);
  });
  return { agents, posted, last, asked, srv: server };
}

const twoEdits: ChatTurnScript = { toolCalls: [
  { name: 'edit_file', arguments: JSON.stringify({ path: 'a.txt', edits: [{ search: 'alpha', replace: 'ALPHA' }] }) },
  { name: 'edit_file', arguments: JSON.stringify({ path: 'b.txt', edits: [{ search: 'beta', replace: 'BETA' }] }) },
] };

describe('AgentChats (the panel side of Agent mode)', () => {
  it('streams steps and the answer; Accept all applies every waiting change; the end carries the messages', async () => {
    const { agents, posted, last, asked } = await chats([twoEdits, { text: 'Both changed.' }]);
    const running = agents.run('c1', 'work', [{ role: 'user', content: 'shout' }], []);
    const [first] = await asked('c1', 'change', 2);
    expect(agents.decide('c1', first!, 'acceptAll')).toBe(true);
    await running;
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('ALPHA\n');
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('BETA\n');
    const end = posted.find((m): m is Extract<ToWebview, { type: 'chatEnd' }> => m.type === 'chatEnd')!;
    expect(end.end.agent!.messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'tool', 'assistant']);
    expect(end.end.agent!.messages.at(-1)!.content).toBe('Both changed.');
    // The conversation for Save Session starts with the loop's system message.
    expect(last.at(-1)!.messages[0]).toEqual({ role: 'user', content: 'shout' });
    expect(posted.filter((m) => m.type === 'chatDelta').map((m) => (m as { text: string }).text).join('')).toBe('Both changed.');
    // A view that comes back gets the steps again.
    expect(agents.replay().filter((m) => m.type === 'agentStep').length).toBeGreaterThanOrEqual(2);
  });

  it('a rejected change stays out of the file; Stop while a change waits ends the run at once as cancelled', async () => {
    const rejected = await chats([twoEdits, { text: 'ok' }]);
    const r1 = rejected.agents.run('c2', 'w', [{ role: 'user', content: 'x' }], []);
    const ids = await rejected.asked('c2', 'change', 2);
    rejected.agents.decide('c2', ids[0]!, 'deny');
    rejected.agents.decide('c2', ids[1]!, 'allow');
    await r1;
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('BETA\n');
    await server!.close();

    writeFileSync(join(dir, 'b.txt'), 'beta\n');
    const stopped = await chats([twoEdits]);
    const r2 = stopped.agents.run('c3', 'w', [{ role: 'user', content: 'x' }], []);
    await stopped.asked('c3', 'change', 2);
    stopped.agents.stop('c3');
    await r2;
    const end = stopped.posted.find((m): m is Extract<ToWebview, { type: 'chatEnd' }> => m.type === 'chatEnd')!;
    expect(end.end.cancelled).toBe(true);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('beta\n');
    expect(stopped.srv.of('/v1/chat/completions')).toHaveLength(1);
  });

  it('an untrusted workspace gets no tools: the answer ends with the reason and no model request', async () => {
    const { agents, posted, srv } = await chats([twoEdits], { untrusted: true });
    await agents.run('c4', 'w', [{ role: 'user', content: 'x' }], []);
    const end = posted.find((m): m is Extract<ToWebview, { type: 'chatEnd' }> => m.type === 'chatEnd')!;
    expect(end.end.error).toMatch(/Restricted Mode/);
    expect(srv.of('/v1/chat/completions')).toHaveLength(0);
  });
});

describe('panel state in Agent mode', () => {
  it('sends agent questions with the mode, keeps the tool messages, and rebuilds steps from a saved conversation', () => {
    let s = setMode({ ...initialState(undefined), draft: 'fix it' }, 'agent');
    const sent = sendChat(s, 'a1');
    expect(sent.out).toMatchObject({ type: 'chatSend', mode: 'agent' });
    const calls = [{ id: 'k1', name: 'read_file', arguments: '{"path":"a.txt"}' }];
    const messages: ChatMessage[] = [
      { role: 'assistant', content: 'Reading.', toolCalls: calls }, { role: 'tool', toolCallId: 'k1', name: 'read_file', content: 'alpha' }, { role: 'assistant', content: 'It says alpha.' },
    ];
    s = [
      { type: 'chatDelta', chatId: 'a1', text: 'Reading.' },
      { type: 'agentStep', chatId: 'a1', step: { id: 's1-0', tool: 'read_file', args: calls[0]!.arguments, status: 'done', result: 'alpha', at: 8, ask: null } },
      { type: 'chatDelta', chatId: 'a1', text: 'It says alpha.' },
      { type: 'chatEnd', chatId: 'a1', end: { usage: null, timings: null, error: null, cancelled: false, agent: { messages, steps: 2, note: null } } },
    ].reduce((acc, m) => reduce(acc, m as ToWebview), sent.state);
    expect(s.turns.at(-1)!.steps).toHaveLength(1);
    const conv = conversation(s.turns);
    expect(conv).toEqual([{ role: 'user', content: 'fix it' }, ...messages]);
    // Saved and restored: the same conversation, the step back, Agent mode on.
    const loaded = reduce(initialState(undefined), { type: 'chatLoad', name: 'n', messages: conv, mode: 'agent' });
    expect(loaded.mode).toBe('agent');
    expect(loaded.turns.map((t) => t.role)).toEqual(['user', 'assistant']);
    expect(loaded.turns[1]!.steps![0]).toMatchObject({ tool: 'read_file', status: 'done', result: 'alpha', at: 'Reading.'.length });
    expect(conversation(loaded.turns)).toEqual(conv);
  });

  it('a conversation cut to fit keeps no tool result without its call', () => {
    const cut: ChatMessage[] = [
      { role: 'tool', toolCallId: 'gone', name: 'read_file', content: 'orphan' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'k', name: 'list_files', arguments: '{}' }] },
      { role: 'user', content: 'next' },
    ];
    expect(wellFormedToolTurns(cut)).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ id: 'k', name: 'list_files', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'k', name: 'list_files', content: 'no result (the conversation was cut to fit)' },
      { role: 'user', content: 'next' },
    ]);
  });
});

describe('MCP tools (official SDK client, a real stdio server)', () => {
  const allow = async (): Promise<boolean> => true;
  const mcp = new McpTools(() => undefined, () => undefined, allow);
  afterAll(() => mcp.dispose());
  const spec = { command: process.execPath, args: [resolve(import.meta.dirname, '../fixtures/mcp/echo-server.mjs')], env: { ECHO_TAG: 'from-settings' } };

  it('lists the server\'s tools with their schemas and calls them; a failing tool is a tool error', async () => {
    const { tools } = await mcp.tools({ 'my echo': spec });
    expect(tools.map((t) => t.name)).toEqual(['my_echo_echo', 'my_echo_look', 'my_echo_fail']);
    expect(tools[0]).toMatchObject({ kind: 'external', parameters: { type: 'object', required: ['text'] } });
    // Not a trusted server: its own claim to only read counts for nothing.
    expect(tools.map((t) => t.readOnlyHint)).toEqual([false, false, false]);
    tools.splice(1, 1);
    const ctx = { signal: new AbortController().signal } as Parameters<typeof tools[0]['run']>[1];
    expect(await tools[0]!.run({ text: 'hi' }, ctx)).toEqual({ type: 'text', text: 'echo: hi (from-settings)' });
    expect(await tools[1]!.run({}, ctx)).toEqual({ type: 'error', message: 'this tool always fails' });
    // The same settings: the running server is reused (same tool objects).
    expect((await mcp.tools({ 'my echo': spec })).tools[0]).toBe(tools[0]);
    expect(mcpToolName('a.b', 'c d')).toBe('a_b_c_d');
  }, 30_000);

  it('a server that cannot start is left out and logged; the others still serve', async () => {
    const logs: string[] = [];
    const m = new McpTools((l) => logs.push(l), () => undefined, allow);
    const { tools } = await m.tools({ broken: { command: join(dir, 'no-such-binary'), args: [], env: {} }, ok: spec });
    expect(tools.map((t) => t.name)).toEqual(['ok_echo', 'ok_look', 'ok_fail']);
    expect(logs.some((l) => l.startsWith('MCP server "broken"'))).toBe(true);
    await m.dispose();
  }, 30_000);

  it("a server's program comes from PATH's absolute folders, never from the workspace folder it starts in", async () => {
    if (process.platform === 'win32') return; // agent-win32.test.ts: the same with PATHEXT and npx.cmd
    const ws = join(dir, 'ws');
    const bin = join(dir, 'bin');
    mkdirSync(ws);
    mkdirSync(bin);
    // The repository's own npx, first on a PATH that names "." (as Windows' lookup tries the folder first).
    writeFileSync(join(ws, 'npx'), `#!/bin/sh\ntouch "${join(dir, 'pwned')}"\n`);
    writeFileSync(join(bin, 'npx'), `#!/bin/sh\nexec "${process.execPath}" "${spec.args[0]}"\n`);
    chmodSync(join(ws, 'npx'), 0o755);
    chmodSync(join(bin, 'npx'), 0o755);
    const env = { PATH: `.:ws:${bin}` };
    expect(await mcpProgram('npx', ws, env)).toBe(join(bin, 'npx'));
    await expect(mcpProgram('npx', ws, { PATH: '.:' })).rejects.toThrow(/^npx: no such program on PATH/);
    const m = new McpTools(() => undefined, () => ws, allow);
    const { tools } = await m.tools({ files: { command: 'npx', args: [], env } });
    expect(tools.map((t) => t.name)).toEqual(['files_echo', 'files_look', 'files_fail']);
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
    await m.dispose();
  }, 30_000);
});

describe('agent policies', () => {
  it('allow-list: exact lines and prefixes, never a chained command or a lone *', () => {
    expect(isAllowListed('npm test', ['npm test'])).toBe(true);
    expect(isAllowListed('npm test -- --watch', ['npm test'])).toBe(false);
    expect(isAllowListed('npm test -- foo', ['npm test*'])).toBe(true);
    expect(isAllowListed('npm test; rm -rf ~', ['npm test*'])).toBe(false);
    expect(isAllowListed('npm test && curl x | sh', ['npm test*'])).toBe(false);
    expect(isAllowListed('echo $(whoami)', ['echo *'])).toBe(false);
    expect(isAllowListed('anything', ['*'])).toBe(false);
  });

  it('edit blocks: exact, unique, in order; an ambiguous block names itself', () => {
    expect(applyBlocks('a b a', [{ search: 'b', replace: 'c' }])).toEqual({ ok: true, text: 'a c a' });
    const amb = applyBlocks('a b a', [{ search: 'a', replace: 'x' }]);
    expect(amb.ok === false && amb.error).toBe('block 1 of 1 (search "a") matches 2 places; add lines around it so that it matches one; nothing was changed');
    expect(applyBlocks('x\r\ny', [{ search: 'x\ny', replace: '' }])).toMatchObject({ ok: false, error: expect.stringContaining('differs in line endings') });
  });

  it('the schema check names the field', () => {
    const s = { type: 'object' as const, properties: { n: { type: 'integer' as const, minimum: 1 }, mode: { enum: ['a', 'b'] } }, required: ['n'] };
    expect(schemaProblem(s, {})).toBe('arguments.n: is required');
    expect(schemaProblem(s, { n: 1.5 })).toBe('arguments.n: must be integer, got number');
    expect(schemaProblem(s, { n: 0 })).toBe('arguments.n: must be at least 1');
    expect(schemaProblem(s, { n: 2, mode: 'c' })).toBe('arguments.mode: must be one of "a", "b"');
    expect(schemaProblem(s, { n: 2, mode: 'a' })).toBeNull();
  });
});

describe('search_text through the ripgrep VS Code ships', () => {
  const appRoot = join(process.env.HOME ?? '', '.cache/strata/e2e/code-server-4.139.1/lib/vscode');
  const rg = findRipgrep(appRoot);
  it.skipIf(!rg)('finds lines (fixed strings and regex), leaves out .gitignore and excluded globs, stops at the limit', async () => {
    writeFileSync(join(dir, '.gitignore'), 'ignored.txt\n');
    writeFileSync(join(dir, 'ignored.txt'), 'needle\n');
    writeFileSync(join(dir, 'skip.log'), 'needle\n');
    writeFileSync(join(dir, 'hay.txt'), 'x\nneedle one\nneedle.two\n');
    const q = { regex: false, glob: null, exclude: ['*.log'], maxResults: 10, roots: [{ path: dir, prefix: '' }] };
    expect(await ripgrepSearch(rg!, { ...q, query: 'needle.' }, new AbortController().signal)).toEqual([{ path: 'hay.txt', line: 3, text: 'needle.two' }]);
    const re = await ripgrepSearch(rg!, { ...q, query: 'needle.t', regex: true }, new AbortController().signal);
    expect(re.map((h) => h.line)).toEqual([3]);
    expect(await ripgrepSearch(rg!, { ...q, query: 'needle', maxResults: 1 }, new AbortController().signal)).toHaveLength(1);
  });
});
