// The agent loop against the scripted OpenAI-compatible server (test/helpers/scripted-model-server.ts
// plays the model: its turns are fixed here, so the loop's logic is what is tested) on a temp
// folder: call -> result -> answer, tool errors, malformed calls, Stop mid-step, the step limit,
// rejected edits, refused paths, the block-mismatch error.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StrataClient } from '../../extension/client/client.js';
import { AgentLoop, type AgentEvent, type AgentSettings } from '../../extension/agent/loop.js';
import { NodeWorkspace } from '../../extension/agent/node-workspace.js';
import { WorkspacePaths } from '../../extension/agent/paths.js';
import { ToolRegistry } from '../../extension/agent/registry.js';
import { READ_TOOLS } from '../../extension/agent/read-tools.js';
import { CHANGE_TOOLS } from '../../extension/agent/change-tools.js';
import type { AgentApprovals } from '../../extension/agent/types.js';
import type { AgentStepView } from '../../contract/agent.js';
import { ScriptedModelServer, type ChatTurnScript } from '../helpers/scripted-model-server.js';

let dir: string;
let outside: string;
let server: ScriptedModelServer | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-agent-'));
  outside = mkdtempSync(join(tmpdir(), 'strata-outside-'));
  writeFileSync(join(dir, 'hello.ts'), 'export function greet(name: string) {\n  return "Hello " + name;\n}\n');
  writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

interface Asked { tools: string[]; reviews: string[][]; commands: string[] }

function approvals(decide: { tool?: boolean; change?: boolean; command?: boolean } = {}, asked: Asked = { tools: [], reviews: [], commands: [] }): AgentApprovals & { asked: Asked } {
  return {
    asked,
    allowTool: async (s) => { asked.tools.push(s.tool); return decide.tool ?? true; },
    review: async (changes) => { asked.reviews.push(changes.map((c) => c.change.path)); return changes.map(() => decide.change ?? true); },
    allowCommand: async (_s, command) => { asked.commands.push(command); return decide.command ?? true; },
  };
}

async function setup(turns: Array<ChatTurnScript | ((body: Record<string, unknown>) => ChatTurnScript)>, opts: { settings?: Partial<AgentSettings>; approvals?: AgentApprovals & { asked: Asked }; tap?: (e: AgentEvent) => void } = {}) {
  server = new ScriptedModelServer({ chat: (body, i) => { const t = turns[Math.min(i, turns.length - 1)]; return typeof t === 'function' ? t(body) : t; } });
  const url = await server.start();
  const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
  const events: AgentEvent[] = [];
  const ap = opts.approvals ?? approvals();
  const workspace = new NodeWorkspace(paths, { exclude: () => [] });
  const loop = new AgentLoop({
    client: new StrataClient({ baseUrl: url }),
    tools: new ToolRegistry([...READ_TOOLS, ...CHANGE_TOOLS]),
    workspace,
    paths, approvals: ap,
    settings: { maxSteps: 25, autoApproveReadOnly: true, allowedCommands: [], maxResultTokens: 2000, ...opts.settings },
    onEvent: (e) => { events.push(e); opts.tap?.(e); },
  });
  const steps = (): Map<string, AgentStepView> => {
    const m = new Map<string, AgentStepView>();
    for (const e of events) if (e.type === 'step') m.set(e.step.id, e.step);
    return m;
  };
  return { loop, events, steps, asked: ap.asked, srv: server, workspace };
}

const question = [{ role: 'user' as const, content: 'go' }];
const call = (name: string, args: unknown): ChatTurnScript => ({ toolCalls: [{ name, arguments: JSON.stringify(args) }] });

describe('agent loop', () => {
  it('call -> result -> answer: the file text goes back to the model as the tool result', async () => {
    const { loop, srv, steps } = await setup([{ text: 'Reading.', ...call('read_file', { path: 'hello.ts' }) }, { text: 'It greets.' }]);
    const run = await loop.run(question, new AbortController().signal);
    expect(run.end).toBe('answer');
    expect(run.steps).toBe(2);
    expect(run.messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(run.messages[1]!.content).toContain('return "Hello " + name;');
    expect(run.messages[2]!.content).toBe('It greets.');
    // The second request carries the call and its result, and the tools each time.
    const second = srv.of('/v1/chat/completions')[1]!.body;
    const msgs = second.messages as Array<Record<string, unknown>>;
    expect(msgs.at(-2)!.tool_calls).toBeDefined();
    expect(msgs.at(-1)).toMatchObject({ role: 'tool', tool_call_id: run.messages[0]!.toolCalls![0]!.id });
    expect((second.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toContain('edit_file');
    expect(second.tool_choice).toBe('auto');
    const step = [...steps().values()][0]!;
    expect(step).toMatchObject({ tool: 'read_file', status: 'done', at: 'Reading.'.length });
  });

  it('a tool error goes back to the model and the loop goes on', async () => {
    const { loop } = await setup([call('read_file', { path: 'missing.ts' }), { text: 'No such file.' }]);
    const run = await loop.run(question, new AbortController().signal);
    expect(run.end).toBe('answer');
    expect(run.messages[1]!.content).toMatch(/^error: missing\.ts: no such text file/);
  });

  it('a malformed call (arguments not JSON, a missing field, an unknown tool) is an error result, nothing runs', async () => {
    const { loop, asked } = await setup([
      { toolCalls: [{ name: 'edit_file', arguments: '{"path": "hello.ts", "edits": [' }, { name: 'edit_file', arguments: '{"path":"hello.ts"}' }, { name: 'delete_all', arguments: '{}' }] },
      { text: 'Sorry.' },
    ]);
    const run = await loop.run(question, new AbortController().signal);
    const results = run.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[0]).toMatch(/not valid JSON/);
    expect(results[1]).toBe('error: edit_file: arguments.edits: is required');
    expect(results[2]).toMatch(/no tool named "delete_all"/);
    expect(asked.reviews).toEqual([]);
    expect(readFileSync(join(dir, 'hello.ts'), 'utf8')).toContain('Hello');
  });

  it('Stop mid-step aborts the model request at once and ends the run as cancelled', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const ac = new AbortController();
    // Stop once the first piece of text has arrived (the model is mid-answer).
    const { loop, srv } = await setup([{ text: 'Let me think about that', hold: () => held }], { tap: (e) => { if (e.type === 'text' && e.text) ac.abort(); } });
    const run = await loop.run(question, ac.signal);
    expect(run.end).toBe('cancelled');
    expect(run.messages).toEqual([]);
    const req = srv.of('/v1/chat/completions')[0]!;
    await req.closed; // the server sees the connection end while the answer is still held
    expect(req.aborted).toBe(true);
    release();
  });

  it('Stop while a command runs ends the command and gives every call a result', async () => {
    const ac = new AbortController();
    const marker = join(dir, 'after-sleep');
    const { loop, steps, workspace } = await setup([call('run_command', { command: `sleep 5 && touch ${marker}` })]);
    // Stop right after the command's process has started.
    const real = workspace.runCommand.bind(workspace);
    workspace.runCommand = (c, cwd, signal) => { const p = real(c, cwd, signal); ac.abort(); return p; };
    const t0 = Date.now();
    const run = await loop.run(question, ac.signal);
    expect(run.end).toBe('cancelled');
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(run.messages.map((m) => m.role)).toEqual(['assistant', 'tool']);
    expect(run.messages[1]!.content).toMatch(/cancelled/);
    expect([...steps().values()][0]!.status).toBe('cancelled');
    expect(existsSync(marker)).toBe(false);
  });

  it('the step limit ends a model that keeps calling tools', async () => {
    const { loop, srv } = await setup([call('list_files', {})], { settings: { maxSteps: 3 } });
    const run = await loop.run(question, new AbortController().signal);
    expect(run.end).toBe('stepLimit');
    expect(run.error).toMatch(/step limit \(3 steps/);
    expect(srv.of('/v1/chat/completions')).toHaveLength(3);
    // Every call has its result: the conversation can go on.
    expect(run.messages.filter((m) => m.role === 'tool')).toHaveLength(3);
  });

  it('an accepted edit is applied; a rejected one leaves the file as it was and the model is told', async () => {
    const edit = call('edit_file', { path: 'hello.ts', edits: [{ search: '"Hello "', replace: '"Hi "' }] });
    const accepted = await setup([edit, { text: 'Done.' }]);
    const r1 = await accepted.loop.run(question, new AbortController().signal);
    expect(readFileSync(join(dir, 'hello.ts'), 'utf8')).toContain('"Hi "');
    expect(r1.messages[1]!.content).toMatch(/^applied/);
    expect([...accepted.steps().values()][0]!.proposal).toMatchObject({ path: 'hello.ts', decision: 'accepted' });
    expect([...accepted.steps().values()][0]!.proposal!.diff).toContain('-  return "Hello " + name;\n+  return "Hi " + name;');
    await server!.close();

    writeFileSync(join(dir, 'hello.ts'), 'export function greet(name: string) {\n  return "Hello " + name;\n}\n');
    const rejected = await setup([edit, { text: 'OK, left it.' }], { approvals: approvals({ change: false }) });
    const r2 = await rejected.loop.run(question, new AbortController().signal);
    expect(readFileSync(join(dir, 'hello.ts'), 'utf8')).toContain('"Hello "');
    expect(r2.messages[1]!.content).toMatch(/user rejected the change to hello\.ts/);
    expect(rejected.asked.reviews).toEqual([['hello.ts']]);
  });

  it('two edits of one file in a step are one proposal (a diff per file); Accept applies both', async () => {
    const { loop, asked } = await setup([
      { toolCalls: [
        { name: 'edit_file', arguments: JSON.stringify({ path: 'hello.ts', edits: [{ search: 'greet', replace: 'welcome' }] }) },
        { name: 'edit_file', arguments: JSON.stringify({ path: 'hello.ts', edits: [{ search: '"Hello "', replace: '"Hi "' }] }) },
        { name: 'create_file', arguments: JSON.stringify({ path: 'src/new.ts', content: 'export const x = 1;\n' }) },
      ] },
      { text: 'Done.' },
    ]);
    await loop.run(question, new AbortController().signal);
    expect(asked.reviews).toEqual([['hello.ts', 'src/new.ts']]);
    expect(readFileSync(join(dir, 'hello.ts'), 'utf8')).toBe('export function welcome(name: string) {\n  return "Hi " + name;\n}\n');
    expect(readFileSync(join(dir, 'src/new.ts'), 'utf8')).toBe('export const x = 1;\n');
  });

  it('a path outside the workspace is refused, also through a symlink, and nothing is read or written', async () => {
    symlinkSync(outside, join(dir, 'link'));
    const { loop, asked } = await setup([
      { toolCalls: [
        { name: 'read_file', arguments: JSON.stringify({ path: join(outside, 'secret.txt') }) },
        { name: 'read_file', arguments: JSON.stringify({ path: '../' + outside.split('/').pop() + '/secret.txt' }) },
        { name: 'read_file', arguments: JSON.stringify({ path: 'link/secret.txt' }) },
        { name: 'create_file', arguments: JSON.stringify({ path: 'link/planted.txt', content: 'x' }) },
      ] },
      { text: 'Refused.' },
    ]);
    const run = await loop.run(question, new AbortController().signal);
    const results = run.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results).toHaveLength(4);
    for (const r of results) expect(r).toMatch(/^error: refused: .* is outside the workspace/);
    expect(results.join('\n')).not.toContain('top secret');
    expect(asked.reviews).toEqual([]);
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
  });

  it('an edit block that does not match exactly is an error naming the block; nothing is applied', async () => {
    const { loop, asked } = await setup([
      call('edit_file', { path: 'hello.ts', edits: [{ search: 'greet', replace: 'welcome' }, { search: 'return  "Hello"', replace: 'x' }] }),
      { text: 'I will read it again.' },
    ]);
    const run = await loop.run(question, new AbortController().signal);
    expect(run.messages[1]!.content).toBe('error: hello.ts: block 2 of 2 (search "return  \\"Hello\\"") does not match the file exactly (copy the lines exactly as read_file shows them, whitespace included, without line numbers); nothing was changed');
    expect(asked.reviews).toEqual([]);
    expect(readFileSync(join(dir, 'hello.ts'), 'utf8')).toContain('greet');
  });

  it('run_command asks unless allow-listed, a skipped command does not run, output and exit code come back', async () => {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'exit3.js'), "console.log('listed', process.argv[2]); process.exit(3);\n");
    const ap = approvals({ command: false });
    const { loop } = await setup([
      { toolCalls: [
        { name: 'run_command', arguments: JSON.stringify({ command: "node exit3.js 'a  b'", cwd: 'sub' }) },
        { name: 'run_command', arguments: JSON.stringify({ command: `touch ${join(dir, 'skipped')}` }) },
      ] },
      { text: 'Done.' },
    ], { approvals: ap, settings: { allowedCommands: ['node exit3.js *'] } });
    const run = await loop.run(question, new AbortController().signal);
    const results = run.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    // Allow-listed: it ran at once, without a shell (the quoted words are one argument).
    expect(results[0]).toBe('exit code: 3 (allow-listed: it ran without a shell)\nlisted a  b\n');
    expect(results[1]).toMatch(/skipped this command/);
    expect(ap.asked.commands).toEqual([`touch ${join(dir, 'skipped')}`]);
    expect(existsSync(join(dir, 'skipped'))).toBe(false);
  });

  it('an allow-listed command whose argument is a secret asks; one naming a plain file runs at once', async () => {
    writeFileSync(join(dir, '.env'), 'TOKEN=top-secret\n');
    const ap = approvals({ command: false });
    const { loop } = await setup([
      { toolCalls: [
        { name: 'run_command', arguments: JSON.stringify({ command: 'cat .env' }) },
        { name: 'run_command', arguments: JSON.stringify({ command: 'cat hello.ts' }) },
      ] },
      { text: 'Done.' },
    ], { approvals: ap, settings: { allowedCommands: ['cat *'] } });
    const run = await loop.run(question, new AbortController().signal);
    const results = run.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(ap.asked.commands).toEqual(['cat .env']);
    expect(results[0]).toMatch(/skipped this command/);
    expect(results.join('\n')).not.toContain('top-secret');
    expect(results[1]).toMatch(/^exit code: 0 \(allow-listed: it ran without a shell\)\nexport function greet/);
  });

  it('read-only tools ask when autoApproveReadOnly is off; a refusal is the result', async () => {
    const ap = approvals({ tool: false });
    const { loop } = await setup([call('read_file', { path: 'hello.ts' }), { text: 'ok' }], { approvals: ap, settings: { autoApproveReadOnly: false } });
    const run = await loop.run(question, new AbortController().signal);
    expect(ap.asked.tools).toEqual(['read_file']);
    expect(run.messages[1]!.content).toBe('the user did not allow this call');
  });

  it('a long result is cut to the token budget with a note to the model', async () => {
    writeFileSync(join(dir, 'long.txt'), Array.from({ length: 3000 }, (_, i) => `line ${i} of a long file`).join('\n'));
    const { loop } = await setup([call('read_file', { path: 'long.txt' }), { text: 'ok' }], { settings: { maxResultTokens: 500 } });
    const run = await loop.run(question, new AbortController().signal);
    const r = run.messages[1]!.content;
    expect(r.length).toBeLessThanOrEqual(500 * 3);
    expect(r).toMatch(/\[truncated: the result has \d+ tokens \(estimated at 3 characters a token, 3001 lines\)/);
    expect(r).toContain('line 0 of a long file');
  });
});
