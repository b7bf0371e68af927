// The extension side of the panel, shared by the editor panel and the sidebar view: keeps the
// latest server data, pushes it to every open view, answers their messages, and runs the
// panel's chat streams. No vscode here (views are just sinks), so it is unit-tested.
import type { StrataClient } from '../api/client.js';
import type { ChatMessage, Metrics, SessionInfo } from '../api/types.js';
import { CHAT_MAX_TOKENS } from '../api/types.js';
import type {
  BenchView, ChatEndInfo, CompletionStatsView, FromWebview, PanelCommand, ServerView, TabId, ToWebview,
} from '../../webview/protocol.js';
import { validateFromWebview } from '../../webview/protocol.js';

export type PanelClient = Pick<StrataClient, 'chatStream' | 'sessions' | 'saveSession' | 'restoreSession' | 'deleteSession' | 'devices' | 'traces'>;

export interface PanelDeps {
  /** The client when the server is ready. */
  client(): PanelClient | undefined;
  /** Starts the server if needed (chat from the panel may do that). */
  ensureClient(): Promise<PanelClient>;
  runCommand(command: PanelCommand): void;
  /** Shows where a session file lives. */
  revealSession(name: string, path: string | null): void;
  clearBench(): Promise<void>;
  /** Some view became visible / all hidden (metrics refresh only while someone looks). */
  visibilityChanged(anyVisible: boolean): void;
  log(message: string): void;
}

export interface PanelSink {
  post(msg: ToWebview): void;
}

interface View { sink: PanelSink; visible: boolean; tab: TabId | null }

/** reasoning: the model's thinking, shown in the panel but never part of the conversation. */
interface RunningChat { text: string; reasoning: string; ac: AbortController }
interface FinishedChat { text: string; reasoning: string; end: ChatEndInfo }

const snapshot = (chatId: string, c: { text: string; reasoning: string }): ToWebview =>
  ({ type: 'chatSnapshot', chatId, text: c.text, ...(c.reasoning ? { reasoning: c.reasoning } : {}) });

const KEEP_FINISHED = 20;

export class PanelHub {
  private readonly views = new Set<View>();
  private server: ServerView | undefined;
  private metrics: { metrics: Metrics; at: number } | undefined;
  private sessions: SessionInfo[] = [];
  private completion: CompletionStatsView | undefined;
  private bench: BenchView | undefined;
  private readonly running = new Map<string, RunningChat>();
  private readonly finished = new Map<string, FinishedChat>();
  private conversation: { name: string; messages: ChatMessage[] } | undefined;
  /** Requests seen in the last metrics: a change means new traces to show. */
  private requestMark = '';

  constructor(private readonly deps: PanelDeps) {}

  /** Connects a view; returns its handle (the controller feeds it messages and visibility). */
  attach(sink: PanelSink, visible: boolean): { receive(raw: unknown): Promise<void>; setVisible(v: boolean): void; dispose(): void } {
    const view: View = { sink, visible, tab: null };
    this.views.add(view);
    this.visibilityChanged();
    return {
      receive: (raw) => this.receive(view, raw),
      setVisible: (v) => {
        if (view.visible === v) return;
        view.visible = v;
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
    return this.conversation;
  }

  serverChanged(s: ServerView): void {
    const wasReady = this.server?.state === 'ready';
    this.server = s;
    this.broadcast({ type: 'server', server: s });
    if (s.state === 'ready' && !wasReady) {
      for (const v of this.views) if (v.tab) void this.refreshTab(v.tab, v);
    }
  }

  metricsChanged(m: Metrics): void {
    this.metrics = { metrics: m, at: Date.now() };
    this.broadcast({ type: 'metrics', metrics: m, at: this.metrics.at });
    const mark = `${m.requests.length}:${m.requests.at(-1)?.id ?? ''}:${m.running}:${m.engines.map((e) => `${e.epoch}/${e.restarts}`).join(',')}`;
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

  showTab(tab: TabId): void {
    this.broadcast({ type: 'showTab', tab });
  }

  /** Puts a restored conversation into the panels' chat. */
  loadChat(name: string, messages: ChatMessage[]): void {
    this.conversation = { name, messages };
    this.broadcast({ type: 'chatLoad', name, messages });
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
    for (const c of this.running.values()) c.ac.abort();
    this.views.clear();
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
        return this.chat(msg.chatId, msg.name, msg.messages);
      case 'chatStop':
        this.running.get(msg.chatId)?.ac.abort();
        return;
      case 'sessionSave':
        return this.sessionAction(view, async (c) => {
          const saved = await c.saveSession(msg.name, msg.messages);
          this.conversation = { name: msg.name, messages: msg.messages };
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

  /** A view (re)opened: everything it needs to draw, including chats that ran while it was gone. */
  private replay(view: View): void {
    if (this.server) view.sink.post({ type: 'server', server: this.server });
    if (this.metrics) view.sink.post({ type: 'metrics', metrics: this.metrics.metrics, at: this.metrics.at });
    if (this.completion) view.sink.post({ type: 'completionStats', stats: this.completion });
    if (this.bench) view.sink.post({ type: 'bench', bench: this.bench });
    for (const [chatId, c] of this.running) view.sink.post(snapshot(chatId, c));
    for (const [chatId, c] of this.finished) {
      view.sink.post(snapshot(chatId, c));
      view.sink.post({ type: 'chatEnd', chatId, end: c.end });
    }
  }

  private async refreshTab(tab: TabId, view: View): Promise<void> {
    const client = this.deps.client();
    if (tab === 'sessions') return this.refreshSessions();
    if (tab !== 'devices' && tab !== 'trace' && tab !== 'kv') return;
    // The KV tab shows per-device memory too.
    const devices = tab !== 'trace';
    const fail = (error: string): void => view.sink.post(devices ? { type: 'devices', devices: [], error } : { type: 'traces', traces: { requests: [], steps: [] }, error });
    if (!client) return fail('the Strata server is not running');
    try {
      if (devices) view.sink.post({ type: 'devices', devices: await client.devices(), error: null });
      else view.sink.post({ type: 'traces', traces: await client.traces(), error: null });
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

  private async chat(chatId: string, name: string, messages: ChatMessage[]): Promise<void> {
    if (this.running.has(chatId)) return;
    const ac = new AbortController();
    const run: RunningChat = { text: '', reasoning: '', ac };
    this.running.set(chatId, run);
    this.conversation = { name, messages };
    let end: ChatEndInfo = { usage: null, timings: null, error: null, cancelled: false };
    try {
      const client = await this.deps.ensureClient();
      for await (const ev of client.chatStream({ messages, maxTokens: CHAT_MAX_TOKENS }, ac.signal)) {
        if (ev.type === 'text') {
          run.text += ev.text;
          this.broadcast({ type: 'chatDelta', chatId, text: ev.text });
        } else if (ev.type === 'reasoning') {
          run.reasoning += ev.text;
          this.broadcast({ type: 'chatReasoning', chatId, text: ev.text });
        } else if (ev.type === 'done') {
          end = { ...end, usage: ev.usage, timings: ev.timings };
        }
      }
    } catch (err) {
      if (ac.signal.aborted) end = { ...end, cancelled: true };
      else end = { ...end, error: (err as Error).message };
    } finally {
      this.running.delete(chatId);
    }
    if (ac.signal.aborted) end = { ...end, cancelled: true };
    // The answer only: models expect earlier turns without their thinking.
    if (run.text && this.conversation?.messages === messages) {
      this.conversation = { name, messages: [...messages, { role: 'assistant', content: run.text }] };
    }
    this.finished.set(chatId, { text: run.text, reasoning: run.reasoning, end });
    while (this.finished.size > KEEP_FINISHED) this.finished.delete(this.finished.keys().next().value!);
    this.broadcast({ type: 'chatEnd', chatId, end });
  }
}
