import { describe, expect, it } from 'vitest';
import type { ChatCall, ChatStreamEvent } from '../../extension/client/types.js';
import type { SessionInfo } from '../../contract/sessions.js';
import type { Metrics } from '../../contract/metrics.js';
import { PanelHub, type PanelClient, type PanelDeps } from '../../extension/panel/hub.js';
import type { ContextItem, ConversationSettings, PanelCommand, ToWebview } from '../../contract/panel.js';

const metrics = (requests: number): Metrics => ({
  state: 'ok', queued: 0, admitting: 0, running: 0, finishing: 0, slots: [],
  requests: Array.from({ length: requests }, (_, i) => ({ id: `r${i}`, time: null, durationMs: null, finish: 'stop', promptTokens: 3, reusedTokens: 0, outputTokens: 2, promptMs: null, decodeMs: null, decodeTokS: null })),
  totals: {}, cache: { parked: 0, bytes: 0, budget: 0, hits: 0, misses: 0, evictions: 0 }, engines: [], staleFrames: 0,
});

/** A client that answers like the server; chat streams are driven by the test through `gate`. */
function fakeClient() {
  const ctx = { value: 4096 };
  let devices = [{ name: 'CPU', description: 'cpu', type: 'cpu', replica: 0 as number | null, memoryFree: 1 as number | null, memoryTotal: 2 as number | null, layers: 4 as number | null, planned: null }];
  const setDevices = (d: typeof devices) => { devices = d; };
  const saved = new Map<string, SessionInfo & { msgs: ChatCall['messages'] }>();
  const calls: string[] = [];
  const saveOpts: Array<{ name: string; tools: string[] }> = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => { release = r; });
  const client: PanelClient = {
    async *chatStream(req: ChatCall, signal: AbortSignal): AsyncGenerator<ChatStreamEvent> {
      calls.push(`chat:${req.messages.map((m) => m.content).join('|')}`);
      yield { type: 'text', text: 'Hel' };
      await Promise.race([gate, new Promise((r) => signal.addEventListener('abort', r))]);
      if (signal.aborted) throw new DOMException('aborted', 'AbortError');
      yield { type: 'text', text: 'lo' };
      yield { type: 'done', finishReason: 'stop', usage: { promptTokens: 5, completionTokens: 2, cachedTokens: 1 }, timings: null };
    },
    async sessions() { calls.push('sessions'); return [...saved.values()].map(({ msgs: _m, ...s }) => s); },
    async saveSession(name, messages, _signal, opts) {
      saveOpts.push({ name, tools: (opts?.tools ?? []).map((t) => t.name) });
      const s = { name, tokens: 42, bytes: 1000, model: 'tiny', savedAt: 1, path: `/s/${name}.session`, messages: messages.length, msgs: messages };
      saved.set(name, s);
      return s;
    },
    async restoreSession(name) {
      const s = saved.get(name);
      if (!s) throw new Error(`no session named '${name}'`);
      return { name, messages: s.msgs, tokens: s.tokens };
    },
    async deleteSession(name) { if (!saved.delete(name)) throw new Error(`no session named '${name}'`); },
    async devicesAndFit() { calls.push('devices'); return { devices, fit: [] }; },
    async traces() { calls.push('traces'); return { requests: [], steps: [] }; },
    async tokenize(text: string) { return text.split(/\s+/).filter(Boolean).map((_, i) => i); },
    async models() { return [{ id: 'tiny', contextLength: ctx.value, maxOutputTokens: null, toolCalling: false }]; },
  };
  return { client, calls, release: () => release(), ctx, setDevices, saveOpts };
}

function setup(ready = true, codebase?: PanelDeps['codebase'], agent?: PanelDeps['agent']) {
  const fc = fakeClient();
  const commands: PanelCommand[] = [];
  const revealed: Array<[string, string | null]> = [];
  const visibility: boolean[] = [];
  const editorCalls: string[] = [];
  const picked: { next: ContextItem | string | null } = { next: null };
  const settings = new Map<string, ConversationSettings>();
  const deps: PanelDeps = {
    client: () => (ready ? fc.client : undefined),
    chatClient: () => (ready ? fc.client : undefined),
    ensureClient: async () => fc.client,
    runCommand: (c) => commands.push(c),
    revealSession: (n, p) => revealed.push([n, p]),
    clearBench: async () => undefined,
    visibilityChanged: (v) => visibility.push(v),
    log: () => undefined,
    editor: {
      copy: async (t) => { editorCalls.push(`copy:${t}`); },
      insert: async (c) => { editorCalls.push(`insert:${c}`); return c === 'fail' ? 'Open a file in an editor first.' : null; },
      apply: async (c, l) => { editorCalls.push(`apply:${l}:${c}`); return null; },
      context: async (what) => { editorCalls.push(`context:${what}`); return picked.next; },
    },
    codebase,
    agent,
    conversationSettings: { saveSettings: (n, s) => void settings.set(n, s), loadSettings: (n) => settings.get(n) ?? null },
  };
  const hub = new PanelHub(deps);
  const posted: ToWebview[] = [];
  const view = hub.attach({ post: (m) => posted.push(m) }, true);
  return { hub, view, posted, fc, commands, revealed, visibility, editorCalls, picked, settings };
}

const ofType = <T extends ToWebview['type']>(posted: ToWebview[], type: T) => posted.filter((m): m is Extract<ToWebview, { type: T }> => m.type === type);

describe('PanelHub', () => {
  it('streams a chat to the view and keeps the conversation for Save Session', async () => {
    const { hub, view, posted, fc } = setup();
    const done = view.receive({ type: 'chatSend', chatId: 'c1', name: 'my chat', messages: [{ role: 'user', content: 'hi' }] });
    await new Promise((r) => setTimeout(r, 0));
    expect(ofType(posted, 'chatDelta').map((m) => m.text)).toEqual(['Hel']);
    fc.release();
    await done;
    expect(ofType(posted, 'chatDelta').map((m) => m.text).join('')).toBe('Hello');
    const end = ofType(posted, 'chatEnd')[0]!;
    expect(end).toMatchObject({ chatId: 'c1', end: { error: null, cancelled: false, usage: { completionTokens: 2 } } });
    expect(hub.lastConversation()).toEqual({ name: 'my chat', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello' }] });
  });

  it('stop cancels the stream and reports it as stopped', async () => {
    const { view, posted } = setup();
    const done = view.receive({ type: 'chatSend', chatId: 'c2', name: 'x', messages: [{ role: 'user', content: 'hi' }] });
    await new Promise((r) => setTimeout(r, 0));
    await view.receive({ type: 'chatStop', chatId: 'c2' });
    await done;
    expect(ofType(posted, 'chatEnd')[0]).toMatchObject({ chatId: 'c2', end: { cancelled: true, error: null } });
  });

  it('a view that comes back gets the server state and the text of chats that ran while it was away', async () => {
    const { hub, view, fc } = setup();
    hub.serverChanged({ state: 'ready', busy: false, mode: 'managed', model: 'tiny', url: 'http://x', message: null });
    const done = view.receive({ type: 'chatSend', chatId: 'c3', name: 'x', messages: [{ role: 'user', content: 'q' }] });
    await new Promise((r) => setTimeout(r, 0));
    view.dispose();
    fc.release();
    await done;
    const again: ToWebview[] = [];
    const v2 = hub.attach({ post: (m) => again.push(m) }, true);
    await v2.receive({ type: 'ready', tab: 'chat' });
    expect(again[0]).toMatchObject({ type: 'server', server: { state: 'ready', model: 'tiny' } });
    expect(ofType(again, 'chatSnapshot')).toEqual([{ type: 'chatSnapshot', chatId: 'c3', text: 'Hello' }]);
    expect(ofType(again, 'chatEnd')[0]!.chatId).toBe('c3');
  });

  it('saves, lists, restores and deletes sessions', async () => {
    const { view, posted, revealed } = setup();
    await view.receive({ type: 'sessionSave', name: 'work', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] });
    expect(ofType(posted, 'notice').at(-1)).toEqual({ type: 'notice', level: 'info', text: 'Saved session "work" (42 tokens).' });
    expect(ofType(posted, 'sessions').at(-1)!.sessions.map((s) => s.name)).toEqual(['work']);

    await view.receive({ type: 'sessionRestore', name: 'work' });
    expect(ofType(posted, 'chatLoad').at(-1)).toEqual({ type: 'chatLoad', name: 'work', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] });
    expect(ofType(posted, 'showTab').at(-1)!.tab).toBe('chat');

    await view.receive({ type: 'sessionReveal', name: 'work' });
    expect(revealed).toEqual([['work', '/s/work.session']]);

    await view.receive({ type: 'sessionDelete', name: 'work' });
    expect(ofType(posted, 'sessions').at(-1)!.sessions).toEqual([]);
    await view.receive({ type: 'sessionDelete', name: 'work' });
    expect(ofType(posted, 'notice').at(-1)).toEqual({ type: 'notice', level: 'error', text: "no session named 'work'" });
  });

  it('a conversation\'s thinking level is saved with it and comes back on restore', async () => {
    const { view, posted, settings } = setup();
    await view.receive({ type: 'sessionSave', name: 'deep', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }], thinking: 'high' });
    expect(settings.get('deep')).toEqual({ mode: 'ask', thinking: 'high' });
    await view.receive({ type: 'sessionRestore', name: 'deep' });
    expect(ofType(posted, 'chatLoad').at(-1)).toEqual({ type: 'chatLoad', name: 'deep', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }], thinking: 'high' });
    await view.receive({ type: 'sessionSave', name: 'bad', messages: [{ role: 'user', content: 'a' }], thinking: 'max' });
    expect(ofType(posted, 'notice').at(-1)).toEqual({ type: 'notice', level: 'error', text: 'sessionSave thinking must be one of auto, off, low, high, not max' });
    expect(settings.has('bad')).toBe(false);
  });

  it('an agent conversation is saved with its system message, its tools and its mode, and restored in Agent mode', async () => {
    const agent: NonNullable<PanelDeps['agent']> = {
      makeLoop: async () => 'not in this test', showDiff: async () => undefined,
      system: () => 'AGENT SYSTEM', tools: () => [{ name: 'read_file', description: 'd', parameters: undefined }],
    };
    const { view, posted, fc, settings } = setup(true, undefined, agent);
    const messages = [
      { role: 'user' as const, content: 'read it' },
      { role: 'assistant' as const, content: '', toolCalls: [{ id: 'k', name: 'read_file', arguments: '{"path":"a"}' }] },
      { role: 'tool' as const, toolCallId: 'k', name: 'read_file', content: 'alpha' },
      { role: 'assistant' as const, content: 'It says alpha.' },
    ];
    await view.receive({ type: 'sessionSave', name: 'job', messages, mode: 'agent' });
    expect(fc.saveOpts.at(-1)).toEqual({ name: 'job', tools: ['read_file'] });
    expect(settings.get('job')).toEqual({ mode: 'agent', thinking: 'auto' });
    await view.receive({ type: 'sessionRestore', name: 'job' });
    expect(ofType(posted, 'chatLoad').at(-1)).toEqual({ type: 'chatLoad', name: 'job', messages, mode: 'agent' });
    // Agent mode where it cannot run ends the answer with the reason.
    await view.receive({ type: 'chatSend', chatId: 'a1', name: 'job', messages: [...messages, { role: 'user', content: 'more' }], mode: 'agent' });
    expect(ofType(posted, 'chatEnd').at(-1)).toMatchObject({ chatId: 'a1', end: { error: 'not in this test' } });
  });

  it('refuses malformed messages with a reason and does nothing else', async () => {
    const { view, posted, fc } = setup();
    await view.receive({ type: 'sessionSave', name: 'x', messages: [] });
    await view.receive({ type: 'chatSend', chatId: 'c', name: 'n', messages: [{ role: 'hacker', content: 'x' }] });
    await view.receive({ type: 'nope' });
    await view.receive('string');
    expect(ofType(posted, 'notice')).toEqual([{ type: 'notice', level: 'error', text: 'there is no conversation to save yet' }]);
    expect(fc.calls).toEqual([]);
  });

  it('fetches tab data on demand and refreshes traces when new requests show up', async () => {
    const { hub, view, posted, fc } = setup();
    await view.receive({ type: 'tab', tab: 'trace' });
    expect(fc.calls).toEqual(['traces']);
    hub.metricsChanged(metrics(1));
    await new Promise((r) => setTimeout(r, 0));
    hub.metricsChanged(metrics(1)); // nothing new: no fetch
    await new Promise((r) => setTimeout(r, 0));
    expect(fc.calls).toEqual(['traces', 'traces']);
    await view.receive({ type: 'tab', tab: 'devices' });
    expect(ofType(posted, 'devices').at(-1)!.devices[0]!.name).toBe('CPU');
    await view.receive({ type: 'tab', tab: 'chat' });
    expect(fc.calls).toEqual(['traces', 'traces', 'devices']);
    await view.receive({ type: 'tab', tab: 'kv' });
    expect(fc.calls).toEqual(['traces', 'traces', 'devices', 'devices']);
  });

  it('says the server is not running instead of failing', async () => {
    const { view, posted } = setup(false);
    await view.receive({ type: 'tab', tab: 'devices' });
    expect(ofType(posted, 'devices')[0]).toEqual({ type: 'devices', devices: [], fit: [], error: 'the Strata server is not running' });
    await view.receive({ type: 'sessionDelete', name: 'x' });
    expect(ofType(posted, 'notice')[0]!.text).toBe('Start the Strata server first.');
  });

  it('passes commands through and tracks visibility', async () => {
    const { view, commands, visibility } = setup();
    await view.receive({ type: 'command', command: 'restart' });
    expect(commands).toEqual(['restart']);
    view.setVisible(false);
    view.setVisible(true);
    view.dispose();
    expect(visibility).toEqual([true, false, true, false]);
  });

  it('sends attached context with the question, says what it sent, and reports a stopped answer\'s size', async () => {
    const { view, posted, fc } = setup();
    const item: ContextItem = { id: 'i', kind: 'selection', path: 'a.py', range: { startLine: 1, endLine: 2 }, language: 'python', text: 'x = 1\ny = 2', tokens: null };
    const done = view.receive({ type: 'chatSend', chatId: 'c1', name: 'n', messages: [{ role: 'user', content: 'explain' }], context: [item] });
    await new Promise((r) => setTimeout(r, 0));
    const sent = ofType(posted, 'chatSent')[0]!;
    expect(sent).toEqual({ type: 'chatSent', chatId: 'c1', content: 'Selected code from a.py (lines 1-2):\n```python\nx = 1\ny = 2\n```\n\nexplain', note: null });
    expect(fc.calls[0]).toBe(`chat:${sent.content}`);
    await view.receive({ type: 'chatStop', chatId: 'c1' });
    await done;
    expect(ofType(posted, 'chatEnd')[0]!.end).toMatchObject({ cancelled: true, partial: { tokens: 1 } });
  });

  it('trims to the model\'s context before sending, and refuses what cannot fit', async () => {
    const { view, posted, fc } = setup();
    fc.ctx.value = 64; // 48 prompt tokens
    const history = Array.from({ length: 6 }, (_, i) => ({ role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content: 'w '.repeat(8) }));
    fc.release();
    await view.receive({ type: 'chatSend', chatId: 'c1', name: 'n', messages: [...history, { role: 'user', content: 'now' }] });
    expect(ofType(posted, 'chatSent')[0]!.note).toMatch(/^Trimmed to fit the model's context \(48 prompt tokens\): left out \d earlier messages\.$/);
    await view.receive({ type: 'chatSend', chatId: 'c2', name: 'n', messages: [{ role: 'user', content: 'w '.repeat(60) }] });
    expect(ofType(posted, 'chatEnd').find((m) => m.chatId === 'c2')!.end.error).toMatch(/^This message needs about 66 tokens, more than the 48/);
    expect(fc.calls.filter((c) => c.startsWith('chat:')).length).toBe(1);
  });

  it('answers estimates with the counted prompt size and the same trimming note', async () => {
    const { view, posted } = setup();
    await view.receive({ type: 'estimate', id: 7, messages: [{ role: 'user', content: 'one two three' }], context: [] });
    expect(ofType(posted, 'estimate')).toEqual([{ type: 'estimate', id: 7, tokens: 3 + 6, budget: 3072, note: null, error: null }]);
    const off = setup(false);
    await off.view.receive({ type: 'estimate', id: 1, messages: [{ role: 'user', content: '12345678' }], context: [] });
    expect(ofType(off.posted, 'estimate')).toEqual([{ type: 'estimate', id: 1, tokens: 2, budget: null, note: null, error: null }]);
  });

  it('routes code actions and context requests to the editor, and shows its problems', async () => {
    const { view, posted, editorCalls, picked } = setup();
    await view.receive({ type: 'copy', text: 'abc' });
    await view.receive({ type: 'insertCode', code: 'fail' });
    await view.receive({ type: 'applyCode', code: 'x = 2', language: 'python' });
    expect(editorCalls).toEqual(['copy:abc', 'insert:fail', 'apply:python:x = 2']);
    expect(ofType(posted, 'notice')).toEqual([{ type: 'notice', level: 'error', text: 'Open a file in an editor first.' }]);
    picked.next = { id: 'f', kind: 'file', path: 'b.ts', range: null, language: 'ts', text: 'let a = 1', tokens: null };
    await view.receive({ type: 'contextRequest', what: 'file' });
    expect(ofType(posted, 'contextAdd')).toEqual([{ type: 'contextAdd', item: { ...picked.next, tokens: 4 } }]);
    picked.next = 'Select some code in b.ts first.';
    await view.receive({ type: 'contextRequest', what: 'selection' });
    expect(ofType(posted, 'notice').at(-1)!.text).toBe('Select some code in b.ts first.');
  });

  it('adds context from the editor to the view looked at last, or keeps it for the next view', async () => {
    const { hub, view, posted } = setup();
    const item: ContextItem = { id: 'i', kind: 'file', path: 'a.ts', range: null, language: 'ts', text: 'a b', tokens: null };
    const other: ToWebview[] = [];
    const v2 = hub.attach({ post: (m) => other.push(m) }, true);
    expect(await hub.addContext(item)).toBe(true);
    expect([ofType(posted, 'contextAdd').length, ofType(other, 'contextAdd').length]).toEqual([0, 1]);
    view.setVisible(false);
    v2.setVisible(false);
    expect(await hub.addContext({ ...item, id: 'j' })).toBe(false);
    await view.receive({ type: 'ready', tab: 'chat' });
    expect(ofType(posted, 'contextAdd').map((m) => m.item.id)).toEqual(['j']);
  });

  it('keeps device descriptions across an engine restart and forgets the figures of a stopped server', async () => {
    const { hub, view, posted, fc } = setup();
    await view.receive({ type: 'tab', tab: 'devices' });
    fc.setDevices([{ name: 'CPU', description: '', type: '', replica: 0, memoryFree: null, memoryTotal: null, layers: 4, planned: null }]);
    await view.receive({ type: 'refresh', tab: 'devices' });
    expect(ofType(posted, 'devices').at(-1)!.devices[0]).toMatchObject({ name: 'CPU', description: 'cpu', type: 'cpu' });
    hub.serverChanged({ state: 'ready', busy: false, mode: 'managed', model: 'tiny', url: 'http://x', message: null });
    hub.metricsChanged(metrics(1));
    hub.serverChanged({ state: 'stopped', busy: false, mode: 'managed', model: null, url: null, message: null });
    const again: ToWebview[] = [];
    await hub.attach({ post: (m) => again.push(m) }, true).receive({ type: 'ready', tab: 'chat' });
    expect(ofType(again, 'metrics')).toEqual([]);
    expect(ofType(again, 'server')[0]!.server.state).toBe('stopped');
  });

  it('forgets the figures when the settings swap the managed server for a remote one without leaving ready', async () => {
    const { hub } = setup();
    const ready = { state: 'ready' as const, busy: false, mode: 'managed' as const, model: 'tiny', url: 'http://x', message: null };
    hub.serverChanged(ready);
    hub.metricsChanged(metrics(1));
    hub.serverChanged({ ...ready, mode: 'remote', model: 'scripted', url: 'http://y' });
    const again: ToWebview[] = [];
    await hub.attach({ post: (m) => again.push(m) }, true).receive({ type: 'ready', tab: 'chat' });
    expect(ofType(again, 'metrics')).toEqual([]);
    hub.serverChanged({ ...ready, mode: 'remote', model: 'scripted', url: 'http://y', busy: true });
    hub.metricsChanged(metrics(2));
    const same: ToWebview[] = [];
    await hub.attach({ post: (m) => same.push(m) }, true).receive({ type: 'ready', tab: 'chat' });
    expect(ofType(same, 'metrics').map((m) => m.metrics.requests.length)).toEqual([2]);
  });
});

describe('the codebase index in the panel', () => {
  const hit = (path: string, text: string) => ({
    chunk: { id: 1, path, startLine: 3, endLine: 5, hash: 'h', text }, fullText: { score: -2, rank: 1 }, vector: null, fused: 1 / 61, rerank: null,
  });
  const codebase = (queries: string[]): NonNullable<PanelDeps['codebase']> => ({
    view: () => ({ enabled: true, phase: 'idle', paused: false, filesDone: 0, filesTotal: 0, chunksDone: 0, chunksTotal: 0, etaSeconds: null, message: null, files: 2, chunks: 3, vectors: 0, bytes: 10, model: null, reranker: null, lastUpdated: 1 }),
    search: async (q) => { queries.push(q); return { hits: q.includes('nothing') ? [] : [hit('src/a.ts', 'export function add() {}')], stages: ['fullText'], ms: 1 }; },
    searchView: async (q) => ({ query: q, hits: [], stages: ['fullText'], ms: 1, error: null }),
    action: (a) => { queries.push(`action:${a}`); },
  });

  it('@codebase in a question adds the chunks as context (counted), shown on the turn, sent with the question', async () => {
    const queries: string[] = [];
    const { view, posted, fc } = setup(true, codebase(queries));
    await view.receive({ type: 'ready', tab: 'chat' });
    expect(ofType(posted, 'index')[0]!.index.files).toBe(2);
    fc.release();
    await view.receive({ type: 'chatSend', chatId: 'c1', name: '', messages: [{ role: 'user', content: '@codebase where is add defined?' }] });
    expect(queries).toEqual(['where is add defined?']);
    const ctx = ofType(posted, 'chatContext')[0]!;
    expect(ctx.chatId).toBe('c1');
    expect(ctx.context).toMatchObject([{ kind: 'codebase', path: 'src/a.ts', range: { startLine: 3, endLine: 5 }, language: 'ts', tokens: 4 }]);
    const sent = ofType(posted, 'chatSent')[0]!.content;
    expect(sent).toContain('From the codebase src/a.ts (lines 3-5):');
    expect(sent).toContain('export function add() {}');
    expect(fc.calls.some((c) => c.startsWith('chat:') && c.includes('export function add'))).toBe(true);
  });

  it('nothing found: a notice, and the question goes as it is; the attach menu entry adds chips; search and actions reach the index', async () => {
    const queries: string[] = [];
    const { view, posted } = setup(true, codebase(queries));
    await view.receive({ type: 'codebaseRequest', query: '@codebase nothing here' });
    expect(ofType(posted, 'notice').at(-1)!.text).toMatch(/found nothing/);
    await view.receive({ type: 'codebaseRequest', query: 'add' });
    expect(ofType(posted, 'contextAdd').map((m) => m.item.path)).toEqual(['src/a.ts']);
    await view.receive({ type: 'indexSearch', query: 'add' });
    expect(ofType(posted, 'indexSearch')[0]!.result.query).toBe('add');
    await view.receive({ type: 'indexAction', action: 'pause' });
    await view.receive({ type: 'indexAction', action: 'explode' });
    expect(queries.filter((q) => q.startsWith('action:'))).toEqual(['action:pause']);
  });

  it('without an index, @codebase says so and the question is sent unchanged', async () => {
    const { view, posted, fc } = setup(true);
    fc.release();
    await view.receive({ type: 'chatSend', chatId: 'c2', name: '', messages: [{ role: 'user', content: '#codebase hi' }] });
    expect(ofType(posted, 'notice').at(-1)!.text).toMatch(/index is off/);
    expect(ofType(posted, 'chatSent')[0]!.content).toBe('#codebase hi');
  });
});
