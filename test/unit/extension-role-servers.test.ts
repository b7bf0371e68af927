// The role connections against a scripted OpenAI-compatible server (test/helpers/scripted-model-server.ts):
// when a role's own server is asked (never while the main server is stopped, unless a feature
// needs it), what a probe's status means, and settings changes moving a role back to the main
// server or reconnecting it with a new key. The two real servers: test/integration/extension-role-servers.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../common/net/free-port.js';
import { StrataClient } from '../../extension/client/client.js';
import type { ModelUse } from '../../extension/config/server-settings.js';
import { routeAnswer } from '../../extension/server/capabilities.js';
import type { ServerConnection, ServerStatus } from '../../extension/server/connection.js';
import { RoleServers } from '../../extension/server/role-servers.js';
import { ScriptedModelServer } from '../helpers/scripted-model-server.js';
import { PanelHub, type PanelDeps } from '../../extension/panel/hub.js';
import type { ToWebview } from '../../contract/panel.js';

class Main implements ServerConnection {
  status: ServerStatus = { state: 'stopped', busy: false, mode: 'managed', model: null, url: null, message: null };
  client: StrataClient | undefined;
  private readonly ls = new Set<(s: ServerStatus) => void>();
  set(state: ServerStatus['state']): void {
    this.client = state === 'ready' ? new StrataClient({ baseUrl: 'http://127.0.0.1:1' }) : undefined;
    this.status = { ...this.status, state };
    for (const l of this.ls) l(this.status);
  }
  ensureReady(): Promise<StrataClient> { return Promise.reject(new Error('main not started')); }
  onDidChange(l: (s: ServerStatus) => void): { dispose(): void } { this.ls.add(l); return { dispose: () => this.ls.delete(l) }; }
}

let srv: ScriptedModelServer;
beforeAll(async () => {
  srv = new ScriptedModelServer({ infill: () => ({ candidates: ['x'], holdOthers: false }), chat: () => ({ text: 'hi' }) });
  await srv.start();
});
afterAll(async () => { await srv.close(); });

function setup(urls: Partial<Record<ModelUse, string>>, keys: Partial<Record<ModelUse, string>> = {}): { main: Main; roles: RoleServers; log: string[] } {
  const main = new Main();
  const log: string[] = [];
  const roles = new RoleServers({
    main, settings: { url: (r) => urls[r] ?? '', apiKey: async (r) => keys[r], model: () => undefined },
    log: { info: (m) => log.push(m), warn: (m) => log.push(`warn ${m}`) },
  });
  return { main, roles, log };
}

describe('a role\'s own server', () => {
  it('what an empty POST\'s status says about a route', () => {
    expect([400, 422, 200, 500].map(routeAnswer)).toEqual(['yes', 'yes', 'yes', 'yes']);
    expect([404, 405, 501].map(routeAnswer)).toEqual(['no', 'no', 'no']);
    expect([401, 403].map(routeAnswer)).toEqual(['key', 'key']);
  });

  it('is not asked while the main server is stopped; it connects when the main server is ready', async () => {
    srv.requests.length = 0;
    const { main, roles } = setup({ completion: srv.url });
    const completion = roles.connection('completion');
    expect(completion.client).toBeUndefined();
    expect(completion.status).toMatchObject({ state: 'stopped', mode: 'remote', url: srv.url });
    expect(srv.requests).toEqual([]);
    const ready = new Promise<void>((r) => completion.onDidChange((s) => { if (s.state === 'ready') r(); }));
    main.set('ready');
    await ready;
    expect(completion.client!.baseUrl).toBe(srv.url);
    expect(roles.serverOf('completion')!.capabilities!.route).toBe('/v1/infill');
    // The probe is an empty POST: no candidate was asked for.
    expect(srv.of('/v1/infill').map((r) => r.body)).toEqual([{}]);
    expect(roles.lines()).toEqual([`inline completions: ${srv.url} (ready, scripted)`]);
    const r = await completion.client!.infill({ prefix: 'a', suffix: '', extra: [], maxTokens: 4, maxPredictMs: 1000 }, new AbortController().signal);
    expect(r.content).toBe('x');
    roles.dispose();
  });

  it('a role without a server of its own follows the main server, events included', () => {
    const { main, roles } = setup({});
    const seen: string[] = [];
    roles.connection('chat').onDidChange((s) => seen.push(s.state));
    main.set('starting');
    main.set('ready');
    expect(roles.connection('chat').client).toBe(main.client);
    expect(seen).toEqual(['starting', 'ready']);
    roles.dispose();
  });

  it('a setting emptied moves the role back to the main server; a new key reconnects', async () => {
    const urls: Partial<Record<ModelUse, string>> = { chat: srv.url };
    const keys: Partial<Record<ModelUse, string>> = { chat: 'one' };
    const { main, roles } = setup(urls, keys);
    main.set('ready');
    expect((await roles.connection('chat').ensureReady()).apiKey).toBe('one');
    keys.chat = 'two';
    roles.reload(['chat']);
    expect((await roles.connection('chat').ensureReady()).apiKey).toBe('two');
    urls.chat = '';
    roles.reload(['chat']);
    expect(roles.serverOf('chat')).toBeUndefined();
    expect(roles.connection('chat').client).toBe(main.client);
    roles.dispose();
  });

  it('an unreachable server fails with the reason, and the next use tries again', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const { main, roles, log } = setup({ chat: closed });
    main.set('ready');
    await expect(roles.connection('chat').ensureReady()).rejects.toThrow(`chat, the agent and inline edits: cannot reach the Strata server at ${closed} (ECONNREFUSED)`);
    expect(roles.connection('chat').status.state).toBe('failed');
    expect(roles.lines()).toEqual([`chat, the agent and inline edits: ${closed} (cannot reach the Strata server at ${closed} (ECONNREFUSED))`]);
    await expect(roles.connection('chat').ensureReady()).rejects.toThrow(/ECONNREFUSED/);
    expect(log.filter((l) => l.startsWith('warn'))).toHaveLength(2);
    roles.dispose();
  });
});

describe('Agent mode on the chat role\'s server', () => {
  it('a chat template without tools (llama-server\'s /props) turns Agent mode off, with one log line; chat still runs', async () => {
    const noTools = new ScriptedModelServer({ chat: () => ({ text: 'plain answer' }), props: { chat_template_caps: { supports_tools: false, supports_tool_calls: false } } });
    await noTools.start();
    try {
      const { main, roles, log } = setup({ chat: noTools.url });
      main.set('ready');
      const client = await roles.connection('chat').ensureReady();
      expect(roles.serverOf('chat')!.capabilities!.toolCalls).toBe(false);
      const off = `Agent mode off: the chat template of ${noTools.url} takes no tools (its /props chat_template_caps)`;
      expect(roles.agentBlocked()).toBe(off);
      expect(log.filter((l) => l.startsWith('warn'))).toEqual([`warn ${off}`]);

      // The panel: an Agent-mode send ends with that reason and never builds a loop; an Ask-mode send is answered.
      const loops: string[] = [];
      const agent = {
        makeLoop: async () => { loops.push('loop'); return 'no loop'; }, showDiff: async () => undefined,
        system: () => 'S', tools: () => [],
        restorePlan: async () => { throw new Error('unused'); }, restore: async () => { throw new Error('unused'); },
      } as unknown as NonNullable<PanelDeps['agent']>;
      const hub = new PanelHub({
        client: () => main.client, chatClient: () => client, ensureClient: async () => client, agentBlocked: () => roles.agentBlocked(),
        runCommand: () => undefined, revealSession: () => undefined, clearBench: async () => undefined, visibilityChanged: () => undefined, log: () => undefined, agent,
        editor: { copy: async () => undefined, insert: async () => null, apply: async () => null, context: async () => null },
      });
      const posted: ToWebview[] = [];
      const view = hub.attach({ post: (m) => posted.push(m) }, true);
      await view.receive({ type: 'chatSend', chatId: 'a', name: 'n', messages: [{ role: 'user', content: 'edit the file' }], mode: 'agent' });
      expect(loops).toEqual([]);
      expect(posted.find((m) => m.type === 'chatEnd' && m.chatId === 'a')).toMatchObject({ end: { error: off } });
      await view.receive({ type: 'chatSend', chatId: 'b', name: 'n', messages: [{ role: 'user', content: 'hello' }], mode: 'ask' });
      const text = posted.map((m) => (m.type === 'chatDelta' && m.chatId === 'b' ? m.text : '')).join('');
      expect(text).toBe('plain answer');
      expect(posted.find((m) => m.type === 'chatEnd' && m.chatId === 'b')).toMatchObject({ end: { error: null } });
      hub.dispose();
      roles.dispose();
    } finally {
      await noTools.close();
    }
  });
});
