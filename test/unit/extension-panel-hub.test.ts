import { describe, expect, it } from 'vitest';
import type { ChatRequest, ChatStreamEvent, Metrics, SessionInfo } from '../../extension/api/types.js';
import { PanelHub, type PanelClient, type PanelDeps } from '../../extension/panel/hub.js';
import type { PanelCommand, ToWebview } from '../../webview/protocol.js';

const metrics = (requests: number): Metrics => ({
  state: 'ok', queued: 0, admitting: 0, running: 0, finishing: 0, slots: [],
  requests: Array.from({ length: requests }, (_, i) => ({ id: `r${i}`, time: null, durationMs: null, finish: 'stop', promptTokens: 3, reusedTokens: 0, outputTokens: 2, promptMs: null, decodeMs: null, decodeTokS: null })),
  totals: {}, cache: { parked: 0, bytes: 0, budget: 0, hits: 0, misses: 0, evictions: 0 }, engines: [], staleFrames: 0,
});

/** A client that answers like the server; chat streams are driven by the test through `gate`. */
function fakeClient() {
  const saved = new Map<string, SessionInfo & { msgs: ChatRequest['messages'] }>();
  const calls: string[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => { release = r; });
  const client: PanelClient = {
    async *chatStream(req: ChatRequest, signal: AbortSignal): AsyncGenerator<ChatStreamEvent> {
      calls.push(`chat:${req.messages.map((m) => m.content).join('|')}`);
      yield { type: 'text', text: 'Hel' };
      await Promise.race([gate, new Promise((r) => signal.addEventListener('abort', r))]);
      if (signal.aborted) throw new DOMException('aborted', 'AbortError');
      yield { type: 'text', text: 'lo' };
      yield { type: 'done', finishReason: 'stop', usage: { promptTokens: 5, completionTokens: 2, cachedTokens: 1 }, timings: null };
    },
    async sessions() { calls.push('sessions'); return [...saved.values()].map(({ msgs: _m, ...s }) => s); },
    async saveSession(name, messages) {
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
    async devices() { calls.push('devices'); return [{ name: 'CPU', description: 'cpu', type: 'cpu', replica: 0, memoryFree: 1, memoryTotal: 2, layers: 4 }]; },
    async traces() { calls.push('traces'); return { requests: [], steps: [] }; },
  };
  return { client, calls, release: () => release() };
}

function setup(ready = true) {
  const fc = fakeClient();
  const commands: PanelCommand[] = [];
  const revealed: Array<[string, string | null]> = [];
  const visibility: boolean[] = [];
  const deps: PanelDeps = {
    client: () => (ready ? fc.client : undefined),
    ensureClient: async () => fc.client,
    runCommand: (c) => commands.push(c),
    revealSession: (n, p) => revealed.push([n, p]),
    clearBench: async () => undefined,
    visibilityChanged: (v) => visibility.push(v),
    log: () => undefined,
  };
  const hub = new PanelHub(deps);
  const posted: ToWebview[] = [];
  const view = hub.attach({ post: (m) => posted.push(m) }, true);
  return { hub, view, posted, fc, commands, revealed, visibility };
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
    expect(ofType(posted, 'devices')[0]).toEqual({ type: 'devices', devices: [], error: 'the Strata server is not running' });
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
});
