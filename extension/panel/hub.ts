// The extension side of the panel, shared by the editor panel and the sidebar view: keeps the
// latest server data, pushes it to every open view, answers their messages, and runs the
// panel's chat streams. No vscode here (views are just sinks), so it is unit-tested.
import type { StrataClient } from '../client/client.js';
import type { SessionInfo } from '../../contract/sessions.js';
import type { DeviceMemory } from '../../contract/devices.js';
import type { Metrics } from '../../contract/metrics.js';
import type { ChatMessage } from '../../contract/chat.js';
import { ContextPlanner, estimateTokens } from '../context/planner.js';
import type { CompletionStatsView, ContextItem, FromWebview, IndexAction, IndexSearchView, IndexView, PanelCommand, ServerView, TabId, ToWebview } from '../../contract/panel.js';
import { codebaseContext, mentionsCodebase, type CodebaseSearch } from '../context/codebase-context.js';
import type { BenchView } from '../../contract/bench.js';
import { serverSource, validateFromWebview } from '../../contract/panel.js';
import { PanelChats } from './panel-chats.js';
import { AgentChats, type AgentProvider } from '../agent/agent-chats.js';
import type { ConversationStore } from '../sessions/conversation-memory.js';

export type PanelClient = Pick<StrataClient, 'chatStream' | 'tokenize' | 'models' | 'sessions' | 'saveSession' | 'restoreSession' | 'deleteSession' | 'devicesAndFit' | 'traces'> & Partial<Pick<StrataClient, 'chatSlotContext' | 'imageTokens'>>;

/** The editor side of the panel's chat: clipboard, code into editors, context from editors. */
export interface PanelEditor {
  copy(text: string): Promise<void>;
  /** Inserts at the cursor of the text editor last used; resolves with a problem to show, or null. */
  insert(code: string): Promise<string | null>;
  /** Proposes the code for the editor last used (its selection, else the whole file) as a diff to accept. */
  apply(code: string, language: string | null): Promise<string | null>;
  /** Context from the editor (tokens not yet counted); a string is a problem to show; null: the user cancelled. */
  context(what: 'selection' | 'file' | 'pick'): Promise<ContextItem | string | null>;
}

/** The codebase index as the panel uses it (Index tab, @codebase); absent when it is off. */
export interface PanelCodebase {
  view(): IndexView;
  search: CodebaseSearch;
  searchView(query: string): Promise<IndexSearchView>;
  action(a: IndexAction): void;
}

export interface PanelDeps {
  /** The client when the server is ready. */
  client(): PanelClient | undefined;
  /** The chat role's client when ready (the main one unless chat has its own server): prompts are counted there. */
  chatClient(): PanelClient | undefined;
  /** The chat role's client; starts the server if needed (chat from the panel may do that). */
  ensureClient(): Promise<PanelClient>;
  /** Why Agent mode cannot run on the chat role's server (its chat template takes no tools), else null; read after ensureClient. */
  agentBlocked?(): string | null;
  runCommand(command: PanelCommand): void;
  /** Shows where a session file lives. */
  revealSession(name: string, path: string | null): void;
  clearBench(): Promise<void>;
  /** Some view became visible / all hidden (metrics refresh only while someone looks). */
  visibilityChanged(anyVisible: boolean): void;
  log(message: string): void;
  editor: PanelEditor;
  codebase?: PanelCodebase | undefined;
  /** Agent mode (absent: the panel offers Ask only). */
  agent?: AgentProvider | undefined;
  /** A saved conversation's settings (Ask / Agent, thinking), kept beside its messages. */
  conversationSettings?: Pick<ConversationStore, 'saveSettings' | 'loadSettings'>;
}


export interface PanelSink {
  post(msg: ToWebview): void;
}

interface View { sink: PanelSink; visible: boolean; tab: TabId | null; shownAt: number }

/** Description and type of devices seen while their engine was up: a restarting engine reports only names. */
function withKnown(devices: DeviceMemory[], known: Map<string, { description: string; type: string }>): DeviceMemory[] {
  for (const d of devices) if (d.description || d.type) known.set(d.name, { description: d.description, type: d.type });
  return devices.map((d) => (d.description || d.type ? d : { ...d, ...(known.get(d.name) ?? {}) }));
}

export class PanelHub {
  private readonly views = new Set<View>();
  private server: ServerView | undefined;
  private metrics: { metrics: Metrics; at: number } | undefined;
  private sessions: SessionInfo[] = [];
  private completion: CompletionStatsView | undefined;
  private bench: BenchView | undefined;
  private readonly planner = new ContextPlanner();
  private readonly chats: PanelChats;
  private readonly agents: AgentChats<PanelClient> | undefined;
  /** Requests seen in the last metrics: a change means new traces to show. */
  private requestMark = '';
  private readonly knownDevices = new Map<string, { description: string; type: string }>();
  /** Context added while no view was open: delivered to the next view that is ready. */
  private pendingContext: ContextItem[] = [];
  private clock = 0;

  constructor(private readonly deps: PanelDeps) {
    this.chats = new PanelChats(() => deps.ensureClient(), this.planner, (m) => this.broadcast(m));
    const agent = deps.agent;
    this.agents = agent && new AgentChats<PanelClient>({
      ensureClient: async () => {
        const client = await deps.ensureClient();
        const why = deps.agentBlocked?.();
        if (why) throw new Error(why);
        return client;
      },
      prepare: async (client, messages, context) => {
        const plan = await this.planner.plan(client, messages, context);
        return { messages: plan.messages, content: plan.messages.at(-1)!.content, note: plan.note, error: plan.error };
      },
      makeLoop: (client, onEvent, approvals, chatId) => agent.makeLoop(client, onEvent, approvals, chatId),
      showDiff: (change) => agent.showDiff(change),
      closeDiff: async (change) => agent.closeDiff?.(change),
    }, (m) => {
      this.broadcast(m);
      // A step that waits for the user where nobody looks: say so outside the panel.
      if (m.type === 'agentStep' && m.step.ask && ![...this.views].some((v) => v.visible)) {
        agent.attention?.(m.step.ask === 'change' ? `the agent proposes a change to ${m.step.proposal?.path ?? 'a file'}` : m.step.ask === 'command' ? `the agent wants to run: ${m.step.command?.text ?? ''}` : `the agent asks to use ${m.step.tool}`);
      }
    }, (name, messages) => this.chats.setLast(name, messages));
  }

  /** Connects a view; returns its handle (the controller feeds it messages and visibility). */
  attach(sink: PanelSink, visible: boolean): { receive(raw: unknown): Promise<void>; setVisible(v: boolean): void; dispose(): void } {
    const view: View = { sink, visible, tab: null, shownAt: visible ? ++this.clock : 0 };
    this.views.add(view);
    this.visibilityChanged();
    return {
      receive: (raw) => this.receive(view, raw),
      setVisible: (v) => {
        if (view.visible === v) return;
        view.visible = v;
        if (v) view.shownAt = ++this.clock;
        this.visibilityChanged();
      },
      dispose: () => {
        this.views.delete(view);
        this.visibilityChanged();
      },
    };
  }

  get viewCount(): number {
    return this.views.size;
  }

  /** The conversation last used in a panel chat (for "Save Session" from the palette). */
  lastConversation(): { name: string; messages: ChatMessage[] } | undefined {
    return this.chats.last();
  }

  /** "Strata: Compact Agent Conversation": the panel's last agent conversation, as its Compact button does. */
  async compactLast(): Promise<string | null> {
    const last = this.chats.last();
    if (!this.agents) return 'Agent mode is not available in this window';
    if (!last?.messages.length) return 'there is no agent conversation to compact yet';
    return this.agents.compact(last.name, last.messages);
  }

  serverChanged(s: ServerView): void {
    const wasReady = this.server?.state === 'ready';
    const moved = serverSource(this.server) !== serverSource(s);
    this.server = s;
    if (moved) {
      // The figures of a server that is gone (or was swapped for another) must not be replayed as if it were there.
      this.metrics = undefined;
      this.requestMark = '';
      if (wasReady) this.planner.reset();
    }
    this.broadcast({ type: 'server', server: s });
    if (s.state === 'ready' && moved) {
      for (const v of this.views) if (v.tab) void this.refreshTab(v.tab, v);
    }
  }

  /**
   * Attaches editor context to the chat of the view the user looked at last (counted with the
   * server's tokenizer when it runs). No view open: kept for the next one. Returns whether a view got it.
   */
  async addContext(item: ContextItem): Promise<boolean> {
    const counted = await this.counted(item);
    const target = [...this.views].filter((v) => v.visible).sort((a, b) => b.shownAt - a.shownAt)[0];
    if (!target) {
      this.pendingContext.push(counted);
      return false;
    }
    target.sink.post({ type: 'contextAdd', item: counted });
    return true;
  }

  metricsChanged(m: Metrics): void {
    this.metrics = { metrics: m, at: Date.now() };
    this.broadcast({ type: 'metrics', metrics: m, at: this.metrics.at });
    // Engine liveness too: a restarted engine reports its devices only once it is up again.
    const mark = `${m.requests.length}:${m.requests.at(-1)?.id ?? ''}:${m.running}:${m.engines.map((e) => `${e.epoch}/${e.restarts}/${e.alive}`).join(',')}`;
    if (mark !== this.requestMark) {
      this.requestMark = mark;
      for (const v of this.views) {
        if (v.visible && (v.tab === 'trace' || v.tab === 'devices' || v.tab === 'kv')) void this.refreshTab(v.tab, v);
      }
    }
  }

  completionStatsChanged(stats: CompletionStatsView): void {
    this.completion = stats;
    this.broadcast({ type: 'completionStats', stats });
  }

  benchChanged(bench: BenchView): void {
    this.bench = bench;
    this.broadcast({ type: 'bench', bench });
  }

  indexChanged(index: IndexView): void {
    this.broadcast({ type: 'index', index });
  }

  showTab(tab: TabId): void {
    this.broadcast({ type: 'showTab', tab });
  }

  /**
   * Puts a restored conversation into the panels' chat, in the mode it was saved in (else Agent
   * when it holds tool calls) and with its thinking level; an agent conversation's system message
   * is the loop's, not shown.
   */
  loadChat(name: string, messages: ChatMessage[]): void {
    const agent = this.deps.agent;
    const saved = this.deps.conversationSettings?.loadSettings(name) ?? null;
    const m = saved?.mode ?? (messages.some((x) => x.role === 'tool' || x.toolCalls?.length) ? 'agent' : 'ask');
    const thinking = saved?.thinking ?? 'auto';
    const shown = m === 'agent' && agent && messages[0]?.role === 'system' && messages[0].content === agent.system() ? messages.slice(1) : messages;
    this.chats.setLast(name, shown);
    this.broadcast({ type: 'chatLoad', name, messages: shown, ...(m === 'agent' ? { mode: m } : {}), ...(thinking !== 'auto' ? { thinking } : {}) });
    this.broadcast({ type: 'showTab', tab: 'chat' });
  }

  notice(level: 'info' | 'error', text: string): void {
    this.broadcast({ type: 'notice', level, text });
  }

  async refreshSessions(): Promise<void> {
    const client = this.deps.client();
    if (!client) {
      this.broadcast({ type: 'sessions', sessions: [], error: 'the Strata server is not running' });
      return;
    }
    try {
      this.sessions = await client.sessions();
      this.broadcast({ type: 'sessions', sessions: this.sessions, error: null });
    } catch (err) {
      this.broadcast({ type: 'sessions', sessions: this.sessions, error: (err as Error).message });
    }
  }

  /** Stops running chats (deactivate). */
  dispose(): void {
    this.chats.stopAll();
    this.agents?.stopAll();
    this.views.clear();
  }

  private async counted(item: ContextItem): Promise<ContextItem> {
    const client = this.deps.chatClient();
    if (!client || item.tokens !== null) return item;
    try {
      return { ...item, tokens: await this.planner.count(client, item.text) };
    } catch {
      return item;
    }
  }

  /** An image pasted or dropped into the message box: its tokens by the chat model's projector, or why it cannot go. */
  private async imageCount(view: View, id: string, dataUrl: string): Promise<void> {
    const client = this.deps.client();
    if (!client?.imageTokens) { view.sink.post({ type: 'imageCounted', id, tokens: null, error: null }); return; }
    try {
      view.sink.post({ type: 'imageCounted', id, tokens: await client.imageTokens(dataUrl), error: null });
    } catch (err) {
      view.sink.post({ type: 'imageCounted', id, tokens: null, error: (err as Error).message });
    }
  }

  /** The prompt the draft would send, counted and fitted like a real send. */
  private async estimate(view: View, id: number, messages: ChatMessage[], context: ContextItem[]): Promise<void> {
    const client = this.deps.chatClient();
    if (!client) {
      const chars = messages.reduce((n, m) => n + estimateTokens(m.content), 0) + context.reduce((n, c) => n + estimateTokens(c.text), 0);
      view.sink.post({ type: 'estimate', id, tokens: chars, budget: null, note: null, error: null });
      return;
    }
    try {
      const plan = await this.planner.plan(client, messages, context);
      view.sink.post({ type: 'estimate', id, tokens: plan.tokens, budget: plan.budget, note: plan.note, error: plan.error });
    } catch (err) {
      view.sink.post({ type: 'estimate', id, tokens: null, budget: null, note: null, error: `could not count tokens: ${(err as Error).message}` });
    }
  }

  /** Restore to here: the plan goes to the view that asked; the result to every view (each cuts its conversation). */
  private async restore(view: View, what: 'agentRestorePreview' | 'agentRestore', chatId: string, stepId: string): Promise<void> {
    const agent = this.deps.agent;
    if (!agent?.restorePlan || !agent.restore) return this.editorAction(view, async () => 'Agent mode is not available');
    if (this.agents?.anyRunning()) return this.editorAction(view, async () => 'Stop the agent before restoring a checkpoint');
    try {
      if (what === 'agentRestorePreview') view.sink.post({ type: 'agentRestorePlan', plan: await agent.restorePlan(chatId, stepId) });
      else this.broadcast({ type: 'agentRestored', result: await agent.restore(chatId, stepId) });
    } catch (err) {
      view.sink.post({ type: 'notice', level: 'error', text: `Restore to here failed: ${(err as Error).message}` });
    }
  }

  private async editorAction(view: View, act: () => Promise<string | null>): Promise<void> {
    try {
      const problem = await act();
      if (problem) view.sink.post({ type: 'notice', level: 'error', text: problem });
    } catch (err) {
      view.sink.post({ type: 'notice', level: 'error', text: (err as Error).message });
    }
  }

  private visibilityChanged(): void {
    this.deps.visibilityChanged([...this.views].some((v) => v.visible));
  }

  private broadcast(msg: ToWebview): void {
    for (const v of this.views) v.sink.post(msg);
  }

  private async receive(view: View, raw: unknown): Promise<void> {
    const checked = validateFromWebview(raw);
    if (!checked.ok) {
      this.deps.log(`panel message ignored: ${checked.reason}`);
      if (raw && typeof raw === 'object' && String((raw as { type?: unknown }).type).startsWith('session')) {
        view.sink.post({ type: 'notice', level: 'error', text: checked.reason });
      }
      return;
    }
    await this.handle(view, checked.msg);
  }

  private async handle(view: View, msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'ready':
        view.tab = msg.tab;
        this.replay(view);
        for (const item of this.pendingContext.splice(0)) view.sink.post({ type: 'contextAdd', item });
        return this.refreshTab(msg.tab, view);
      case 'tab':
        view.tab = msg.tab;
        return this.refreshTab(msg.tab, view);
      case 'refresh':
        return this.refreshTab(msg.tab, view);
      case 'command':
        this.deps.runCommand(msg.command);
        return;
      case 'benchClear':
        await this.deps.clearBench();
        return;
      case 'chatSend':
        if (msg.mode === 'agent') {
          if (!this.agents) {
            this.broadcast({ type: 'chatEnd', chatId: msg.chatId, end: { usage: null, timings: null, error: 'Agent mode is not available in this window', cancelled: false } });
            return;
          }
          return this.agents.run(msg.chatId, msg.name, msg.messages, msg.context ?? [], msg.thinking);
        }
        return this.chats.run(msg.chatId, msg.name, msg.messages, await this.withCodebase(view, msg.chatId, msg.messages.at(-1)!.content, msg.context ?? []), msg.thinking);
      case 'codebaseRequest':
        return this.editorAction(view, async () => {
          const got = await codebaseContext(this.deps.codebase?.search, msg.query);
          if (typeof got === 'string') return got;
          for (const item of got) view.sink.post({ type: 'contextAdd', item: await this.counted(item) });
          return null;
        });
      case 'indexSearch':
        if (this.deps.codebase) view.sink.post({ type: 'indexSearch', result: await this.deps.codebase.searchView(msg.query) });
        return;
      case 'indexAction':
        this.deps.codebase?.action(msg.action);
        return;
      case 'chatStop':
        this.chats.stop(msg.chatId);
        this.agents?.stop(msg.chatId);
        return;
      case 'agentDecision':
        if (!this.agents?.decide(msg.chatId, msg.stepId, msg.decision)) this.deps.log(`agent decision for ${msg.stepId}: nothing waits for it`);
        return;
      case 'agentShowDiff':
        return this.editorAction(view, async () => (this.agents ? this.agents.showDiff(msg.chatId, msg.stepId) : 'Agent mode is not available'));
      case 'agentRestorePreview': case 'agentRestore':
        return this.restore(view, msg.type, msg.chatId, msg.stepId);
      case 'agentCompact':
        return this.editorAction(view, async () => (this.agents ? this.agents.compact(msg.name, msg.messages) : 'Agent mode is not available'));
      case 'estimate':
        return this.estimate(view, msg.id, msg.messages, msg.context);
      case 'imageCount':
        return this.imageCount(view, msg.id, msg.dataUrl);
      case 'contextRequest':
        return this.editorAction(view, async () => {
          const got = await this.deps.editor.context(msg.what);
          if (typeof got === 'string') return got;
          if (got) view.sink.post({ type: 'contextAdd', item: await this.counted(got) });
          return null;
        });
      case 'copy':
        return this.editorAction(view, async () => { await this.deps.editor.copy(msg.text); return null; });
      case 'insertCode':
        return this.editorAction(view, () => this.deps.editor.insert(msg.code));
      case 'applyCode':
        return this.editorAction(view, () => this.deps.editor.apply(msg.code, msg.language));
      case 'sessionSave':
        return this.sessionAction(view, async (c) => {
          const agent = msg.mode === 'agent' ? this.deps.agent : undefined;
          // An agent conversation is saved as the loop sent it (its system message, the tools), so its KV matches.
          const messages = agent && msg.messages[0]?.role !== 'system' ? [{ role: 'system' as const, content: agent.system() }, ...msg.messages] : msg.messages;
          const saved = await c.saveSession(msg.name, messages, undefined, agent ? { tools: agent.tools() } : undefined);
          this.deps.conversationSettings?.saveSettings(saved.name || msg.name, { mode: msg.mode ?? 'ask', thinking: msg.thinking ?? 'auto' });
          this.chats.setLast(msg.name, messages);
          return `Saved session "${saved.name}"${saved.tokens !== null ? ` (${saved.tokens} tokens)` : ''}.`;
        });
      case 'sessionRestore':
        return this.sessionAction(view, async (c) => {
          const r = await c.restoreSession(msg.name);
          if (r.messages?.length) {
            this.loadChat(r.name, r.messages);
            return `Restored session "${r.name}" (${r.messages.length} messages).`;
          }
          return `Restored session "${r.name}" into the server's cache (the server did not send its messages).`;
        });
      case 'sessionDelete':
        return this.sessionAction(view, async (c) => {
          await c.deleteSession(msg.name);
          return `Deleted session "${msg.name}".`;
        });
      case 'sessionReveal': {
        const s = this.sessions.find((x) => x.name === msg.name);
        this.deps.revealSession(msg.name, s?.path ?? null);
        return;
      }
    }
  }

  /**
   * A question that says @codebase goes with the index's best chunks (after what the user
   * attached); the views are told so its turn shows them. Nothing found: a notice, the question as it is.
   */
  private async withCodebase(view: View, chatId: string, question: string, context: ContextItem[]): Promise<ContextItem[]> {
    if (!mentionsCodebase(question) || context.some((c) => c.kind === 'codebase')) return context;
    try {
      const got = await codebaseContext(this.deps.codebase?.search, question);
      if (typeof got === 'string') {
        view.sink.post({ type: 'notice', level: 'info', text: got });
        return context;
      }
      const all = [...context, ...(await Promise.all(got.map((c) => this.counted(c))))];
      this.broadcast({ type: 'chatContext', chatId, context: all });
      return all;
    } catch (err) {
      view.sink.post({ type: 'notice', level: 'error', text: `codebase search failed: ${(err as Error).message}` });
      return context;
    }
  }

  /** A view (re)opened: everything it needs to draw, including chats that ran while it was gone. */
  private replay(view: View): void {
    if (this.server) view.sink.post({ type: 'server', server: this.server });
    if (this.metrics) view.sink.post({ type: 'metrics', metrics: this.metrics.metrics, at: this.metrics.at });
    if (this.completion) view.sink.post({ type: 'completionStats', stats: this.completion });
    if (this.bench) view.sink.post({ type: 'bench', bench: this.bench });
    if (this.deps.codebase) view.sink.post({ type: 'index', index: this.deps.codebase.view() });
    for (const m of this.chats.replay()) view.sink.post(m);
    for (const m of this.agents?.replay() ?? []) view.sink.post(m);
  }

  private async refreshTab(tab: TabId, view: View): Promise<void> {
    const client = this.deps.client();
    if (tab === 'sessions') return this.refreshSessions();
    if (tab !== 'devices' && tab !== 'trace' && tab !== 'kv') return;
    // The KV tab shows per-device memory too.
    const devices = tab !== 'trace';
    const fail = (error: string): void => view.sink.post(devices ? { type: 'devices', devices: [], fit: [], error } : { type: 'traces', traces: { requests: [], steps: [] }, error });
    if (!client) return fail('the Strata server is not running');
    try {
      if (devices) {
        const got = await client.devicesAndFit();
        view.sink.post({ type: 'devices', devices: withKnown(got.devices, this.knownDevices), fit: got.fit, error: null });
      }
      else {
        view.sink.post({ type: 'traces', traces: await client.traces(), error: null });
      }
    } catch (err) {
      fail((err as Error).message);
    }
  }

  private async sessionAction(view: View, act: (c: PanelClient) => Promise<string>): Promise<void> {
    const client = this.deps.client();
    if (!client) {
      view.sink.post({ type: 'notice', level: 'error', text: 'Start the Strata server first.' });
      return;
    }
    try {
      this.notice('info', await act(client));
    } catch (err) {
      view.sink.post({ type: 'notice', level: 'error', text: (err as Error).message });
    }
    await this.refreshSessions();
  }
}
