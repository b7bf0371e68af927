// Checkpoints and Restore to here: the real agent loop (the scripted server plays the model) on a
// temp folder through NodeWorkspace, its accepted changes and commands recorded in a store kept in
// another folder (the extension's storage); restoring puts back exactly the files changed after
// the checkpoint (content, created, deleted), reports a file changed since as a conflict and
// leaves it, and the panel's conversation is cut at the step.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StrataClient } from '../../extension/client/client.js';
import { AgentLoop, type AgentEvent } from '../../extension/agent/loop.js';
import { NodeWorkspace } from '../../extension/agent/node-workspace.js';
import { WorkspacePaths } from '../../extension/agent/paths.js';
import { ToolRegistry } from '../../extension/agent/registry.js';
import { READ_TOOLS } from '../../extension/agent/read-tools.js';
import { CHANGE_TOOLS } from '../../extension/agent/change-tools.js';
import { CheckpointStore } from '../../extension/agent/checkpoints.js';
import type { AgentStepView } from '../../contract/agent.js';
import { cutAtStep } from '../../webview/agent-work.js';
import { conversation, type ChatTurn } from '../../webview/state.js';
import { validateFromWebview, type ToWebview } from '../../contract/panel.js';
import { PanelHub, type PanelClient, type PanelDeps } from '../../extension/panel/hub.js';
import { ScriptedModelServer, type ChatTurnScript } from '../helpers/scripted-model-server.js';

let dir: string;
let storage: string;
let server: ScriptedModelServer | undefined;

const A0 = 'alpha\n';
const B0 = 'beta\n';
const KEEP = 'untouched\n';

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-cp-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'strata-cp-store-'));
  writeFileSync(join(dir, 'a.txt'), A0);
  writeFileSync(join(dir, 'b.txt'), B0);
  writeFileSync(join(dir, 'keep.txt'), KEEP);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
  rmSync(storage, { recursive: true, force: true });
});

const edit = (path: string, search: string, replace: string) => ({ name: 'edit_file', arguments: JSON.stringify({ path, edits: [{ search, replace }] }) });

/**
 * Step 1 edits a.txt; step 2 runs a command; step 3 edits b.txt and creates new.txt; step 4 edits
 * a.txt again; then the answer. Every change is accepted, every command allowed.
 */
const SCRIPT: ChatTurnScript[] = [
  { text: 'First a. ', toolCalls: [edit('a.txt', 'alpha', 'alpha-1')] },
  { text: 'Check. ', toolCalls: [{ name: 'run_command', arguments: JSON.stringify({ command: 'echo checked' }) }] },
  { text: 'Then b and a new file. ', toolCalls: [edit('b.txt', 'beta', 'beta-3'), { name: 'create_file', arguments: JSON.stringify({ path: 'new.txt', content: 'created\n' }) }] },
  { text: 'a again. ', toolCalls: [edit('a.txt', 'alpha-1', 'alpha-4')] },
  { text: 'Done.' },
];

async function runAgent(store: CheckpointStore, chatId = 'c1') {
  server = new ScriptedModelServer({ chat: (_b, i) => SCRIPT[Math.min(i, SCRIPT.length - 1)]! });
  const url = await server.start();
  const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
  const workspace = new NodeWorkspace(paths, { exclude: () => [] });
  const steps = new Map<string, AgentStepView>();
  const loop = new AgentLoop({
    client: new StrataClient({ baseUrl: url }), tools: new ToolRegistry([...READ_TOOLS, ...CHANGE_TOOLS]), workspace, paths,
    approvals: { allowTool: async () => true, review: async (c) => c.map(() => true), allowCommand: async () => true },
    settings: { maxSteps: 10, autoApproveReadOnly: true, allowedCommands: [], maxResultTokens: 1000 },
    onEvent: (e: AgentEvent) => { if (e.type === 'step') steps.set(e.step.id, e.step); },
    checkpoints: store.recorder(chatId),
  });
  const run = await loop.run([{ role: 'user', content: 'go' }], new AbortController().signal);
  return { run, steps, workspace };
}

const read = (name: string): string | null => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : null);

describe('agent checkpoints', () => {
  it('every applied change and every command that ran is a checkpoint step', async () => {
    const store = new CheckpointStore(storage);
    const { run, steps } = await runAgent(store);
    expect(run.end).toBe('answer');
    expect([...steps.values()].filter((s) => s.checkpoint).map((s) => s.id)).toEqual(['s1-0', 's2-0', 's3-0', 's3-1', 's4-0']);
    expect(await store.checkpoints('c1')).toEqual(['s1-0', 's2-0', 's3-0', 's3-1', 's4-0']);
    expect(read('a.txt')).toBe('alpha-4\n');
  });

  it('Restore to here puts back exactly the files changed after the step (content, a created file deleted); the plan lists them with diffs and the commands', async () => {
    const store = new CheckpointStore(storage);
    const { workspace } = await runAgent(store);
    const plan = await store.plan('c1', 's1-0', workspace);
    expect(plan.error).toBeNull();
    expect(plan.files.map((f) => [f.path, f.action, f.conflict])).toEqual([['a.txt', 'write', false], ['b.txt', 'write', false], ['new.txt', 'delete', false]]);
    expect(plan.files[0]!.diff).toContain('-alpha-4');
    expect(plan.files[0]!.diff).toContain('+alpha-1');
    expect(plan.commands).toEqual(['echo checked']);
    // The plan changed nothing.
    expect([read('a.txt'), read('b.txt'), read('new.txt')]).toEqual(['alpha-4\n', 'beta-3\n', 'created\n']);

    const r = await store.restore('c1', 's1-0', workspace);
    expect(r).toMatchObject({ restored: ['a.txt', 'b.txt', 'new.txt'], conflicts: [], error: null });
    expect(read('a.txt')).toBe('alpha-1\n'); // as it was right after step 1
    expect(read('b.txt')).toBe(B0);
    expect(read('new.txt')).toBeNull();
    expect(read('keep.txt')).toBe(KEEP);
    // The snapshots are in the store's folder, nothing of them in the workspace.
    expect(readdirSync(dir).sort()).toEqual(['a.txt', 'b.txt', 'keep.txt']);
    expect(readdirSync(storage)).toContain('journal.json');
    // The checkpoints after it are forgotten; the one restored to stays.
    expect(await store.checkpoints('c1')).toEqual(['s1-0']);
    expect((await store.plan('c1', 's3-0', workspace)).error).toMatch(/not a checkpoint/);
  });

  it('restoring to a command step keeps what came before it and reverts only the later changes', async () => {
    const store = new CheckpointStore(storage);
    const { workspace } = await runAgent(store);
    const plan = await store.plan('c1', 's2-0', workspace);
    expect(plan.commands).toEqual([]); // the command at the checkpoint itself is before "after it"
    await store.restore('c1', 's2-0', workspace);
    expect([read('a.txt'), read('b.txt'), read('new.txt')]).toEqual(['alpha-1\n', B0, null]);
  });

  it('a file changed since the agent changed it is a conflict: shown in the plan, left as it is by the restore', async () => {
    const store = new CheckpointStore(storage);
    const { workspace } = await runAgent(store);
    writeFileSync(join(dir, 'b.txt'), 'beta-3 and my own line\n');
    writeFileSync(join(dir, 'new.txt'), 'created\nedited by me\n');
    const plan = await store.plan('c1', 's1-0', workspace);
    expect(plan.files.map((f) => [f.path, f.conflict])).toEqual([['a.txt', false], ['b.txt', true], ['new.txt', true]]);
    const r = await store.restore('c1', 's1-0', workspace);
    expect(r.restored).toEqual(['a.txt']);
    expect(r.conflicts).toEqual([{ path: 'b.txt', reason: 'changed since the agent changed it' }, { path: 'new.txt', reason: 'changed since the agent changed it' }]);
    expect([read('a.txt'), read('b.txt'), read('new.txt')]).toEqual(['alpha-1\n', 'beta-3 and my own line\n', 'created\nedited by me\n']);
  });

  it('a file deleted after the checkpoint is recreated with its content then', async () => {
    const store = new CheckpointStore(storage);
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    const workspace = new NodeWorkspace(paths, { exclude: () => [] });
    const rec = store.recorder('c2');
    await rec.commandRan('s1-0', 'echo start', dir);
    rmSync(join(dir, 'b.txt'));
    await rec.changed('s2-0', { path: 'b.txt', abs: join(dir, 'b.txt'), before: B0, after: null });
    const plan = await store.plan('c2', 's1-0', workspace);
    expect(plan.files.map((f) => [f.path, f.action, f.conflict])).toEqual([['b.txt', 'recreate', false]]);
    expect(plan.files[0]!.diff).toContain('+beta');
    const r = await store.restore('c2', 's1-0', workspace);
    expect(r.restored).toEqual(['b.txt']);
    expect(read('b.txt')).toBe(B0);
  });

  it('a folder on the way that became a link since refuses the restore, naming the file; nothing is written through it', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'strata-cp-out-'));
    try {
      const store = new CheckpointStore(storage);
      const workspace = new NodeWorkspace(new WorkspacePaths([{ name: 'ws', path: dir }]), { exclude: () => [] });
      mkdirSync(join(dir, 'docs'));
      const rec = store.recorder('c3');
      await rec.commandRan('s1-0', 'echo start', dir);
      // The user accepted deleting docs/x.sh and an edit of docs/y.sh.
      await rec.changed('s2-0', { path: 'docs/x.sh', abs: join(dir, 'docs', 'x.sh'), before: 'echo x\n', after: null });
      await rec.changed('s2-1', { path: 'docs/y.sh', abs: join(dir, 'docs', 'y.sh'), before: 'echo y\n', after: 'echo y2\n' });
      // Then docs became a link out of the workspace, to a folder holding what the agent left in y.sh.
      rmSync(join(dir, 'docs'), { recursive: true });
      writeFileSync(join(outside, 'y.sh'), 'echo y2\n');
      symlinkSync(outside, join(dir, 'docs'));
      const plan = await store.plan('c3', 's1-0', workspace);
      expect(plan.files).toEqual([]);
      expect(plan.error).toMatch(/^nothing was restored: docs\/x\.sh: .*x\.sh is outside the workspace .*; docs\/y\.sh: .*y\.sh is outside the workspace/);
      const r = await store.restore('c3', 's1-0', workspace);
      expect(r).toMatchObject({ restored: [], conflicts: [], error: plan.error });
      expect(readdirSync(outside)).toEqual(['y.sh']);
      expect(readFileSync(join(outside, 'y.sh'), 'utf8')).toBe('echo y2\n');
      // Nothing happened, so the checkpoints stay.
      expect(await store.checkpoints('c3')).toEqual(['s1-0', 's2-0', 's2-1']);

      // A link to another folder of the workspace is refused too: the file would land elsewhere than the agent's.
      rmSync(join(dir, 'docs'));
      mkdirSync(join(dir, 'other'));
      writeFileSync(join(dir, 'other', 'y.sh'), 'echo y2\n');
      symlinkSync(join(dir, 'other'), join(dir, 'docs'));
      const again = await store.restore('c3', 's1-0', workspace);
      expect(again.error).toBe(`nothing was restored: docs/x.sh now leads to ${join(dir, 'other', 'x.sh')} through a link; docs/y.sh now leads to ${join(dir, 'other', 'y.sh')} through a link`);
      expect(readdirSync(join(dir, 'other'))).toEqual(['y.sh']);
      expect(readFileSync(join(dir, 'other', 'y.sh'), 'utf8')).toBe('echo y2\n');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('the checkpoints survive a new store on the same folder (a reloaded window)', async () => {
    const { workspace } = await runAgent(new CheckpointStore(storage));
    const again = new CheckpointStore(storage);
    const r = await again.restore('c1', 's3-1', workspace);
    expect(r.restored).toEqual(['a.txt']);
    expect([read('a.txt'), read('b.txt'), read('new.txt')]).toEqual(['alpha-1\n', 'beta-3\n', 'created\n']);
  });

  it('the panel cuts the conversation at the restored step: its calls up to it with their results, no later turn', async () => {
    const store = new CheckpointStore(storage);
    const { run, steps } = await runAgent(store);
    const answer: ChatTurn = { role: 'assistant', content: 'First a. Check. Then b and a new file. a again. Done.', chatId: 'c1', steps: [...steps.values()], agentMessages: run.messages };
    const turns: ChatTurn[] = [{ role: 'user', content: 'go' }, answer, { role: 'user', content: 'more' }, { role: 'assistant', content: 'ok', chatId: 'c9' }];
    const cut = cutAtStep(turns, { chatId: 'c1', stepId: 's3-0', restored: ['a.txt', 'new.txt'], conflicts: [], error: null })!;
    expect(cut).toHaveLength(2);
    const t = cut[1]!;
    expect(t.steps!.map((s) => s.id)).toEqual(['s1-0', 's2-0', 's3-0']);
    expect(t.content).toBe('First a. Check. Then b and a new file. ');
    expect(t.note).toMatch(/put back a\.txt, new\.txt/);
    const sent = conversation(cut);
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool']);
    expect(sent[5]!.toolCalls!.map((c) => c.name)).toEqual(['edit_file']); // create_file (s3-1) is cut off
    expect(sent.at(-1)!.toolCallId).toBe(sent[5]!.toolCalls![0]!.id);
    // Another view's conversation without that answer stays as it is.
    expect(cutAtStep([{ role: 'user', content: 'x' }] as ChatTurn[], { chatId: 'c1', stepId: 's3-0', restored: [], conflicts: [], error: null })).toBeNull();
  });

  it('a Restore message from the panel without its step is refused, naming the field', () => {
    expect(validateFromWebview({ type: 'agentRestore', chatId: 'c1' })).toEqual({ ok: false, reason: 'agentRestore needs chatId and stepId' });
    expect(validateFromWebview({ type: 'agentRestorePreview', stepId: 's1-0' })).toEqual({ ok: false, reason: 'agentRestorePreview needs chatId and stepId' });
    expect(validateFromWebview({ type: 'agentRestore', chatId: 'c1', stepId: 's1-0' }).ok).toBe(true);
  });

  it('the panel hub shows the plan to the view that asked, the result to every view, and refuses while an agent answer runs', async () => {
    const calls: string[] = [];
    let startLoop: (v: string) => void = () => undefined;
    let loopAsked: () => void = () => undefined;
    const asked = new Promise<void>((r) => { loopAsked = r; });
    const agent: NonNullable<PanelDeps['agent']> = {
      makeLoop: () => new Promise((r) => { startLoop = r; loopAsked(); }), showDiff: async () => undefined,
      system: () => 'S', tools: () => [],
      restorePlan: async (chatId, stepId) => { calls.push(`plan:${stepId}`); return { chatId, stepId, files: [], commands: ['make'], error: null }; },
      restore: async (chatId, stepId) => { calls.push(`restore:${stepId}`); return { chatId, stepId, restored: ['a.txt'], conflicts: [], error: null }; },
    };
    const client = {
      tokenize: async (text: string) => text.split(/\s+/).filter(Boolean).map((_, i) => i),
      models: async () => [{ id: 'tiny', contextLength: 4096, maxOutputTokens: null, toolCalling: true }],
    } as unknown as PanelClient;
    const hub = new PanelHub({
      client: () => client, chatClient: () => client, ensureClient: async () => client, runCommand: () => undefined, revealSession: () => undefined, clearBench: async () => undefined,
      visibilityChanged: () => undefined, log: () => undefined, agent,
      editor: { copy: async () => undefined, insert: async () => null, apply: async () => null, context: async () => null },
    });
    const one: ToWebview[] = [];
    const two: ToWebview[] = [];
    const v1 = hub.attach({ post: (m) => one.push(m) }, true);
    hub.attach({ post: (m) => two.push(m) }, true);
    await v1.receive({ type: 'agentRestorePreview', chatId: 'c1', stepId: 's1-0' });
    expect(one.filter((m) => m.type === 'agentRestorePlan')).toHaveLength(1);
    expect(two.filter((m) => m.type === 'agentRestorePlan')).toHaveLength(0);
    await v1.receive({ type: 'agentRestore', chatId: 'c1', stepId: 's1-0' });
    expect(two.find((m) => m.type === 'agentRestored')).toEqual({ type: 'agentRestored', result: { chatId: 'c1', stepId: 's1-0', restored: ['a.txt'], conflicts: [], error: null } });
    // An agent answer running (here: still making its loop): nothing is restored.
    const running = v1.receive({ type: 'chatSend', chatId: 'c2', name: 'n', messages: [{ role: 'user', content: 'go' }], mode: 'agent' });
    await asked;
    await v1.receive({ type: 'agentRestore', chatId: 'c1', stepId: 's1-0' });
    expect(one.at(-1)).toEqual({ type: 'notice', level: 'error', text: 'Stop the agent before restoring a checkpoint' });
    expect(calls).toEqual(['plan:s1-0', 'restore:s1-0']);
    startLoop('done');
    await running;
  });
});
