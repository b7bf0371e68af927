// The panel's view state and how messages from the extension change it. Pure (no DOM), so the
// message handling is unit-tested; main.ts renders whatever this produces.
import type { ChatMessage, DeviceMemory, Metrics, SessionInfo, Traces } from '../extension/api/types.js';
import { TAB_IDS, type BenchView, type ChatEndInfo, type CompletionStatsView, type FromWebview, type ServerView, type TabId, type ToWebview } from './protocol.js';

export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  /** The answer: what the conversation sends back to the model. */
  content: string;
  /** The model's thinking (reasoning models): shown collapsed above the answer, never sent back. */
  reasoning?: string;
  /** Set on an assistant turn produced by a request of this panel. */
  chatId?: string;
  pending?: boolean;
  error?: string | null;
  stats?: string | null;
}

/** What survives the webview being hidden and destroyed (getState/setState). */
export interface PersistedState {
  tab: TabId;
  chatName: string;
  turns: ChatTurn[];
  draft: string;
  selectedTrace: string | null;
}

export interface ViewState extends PersistedState {
  server: ServerView | null;
  metrics: Metrics | null;
  metricsAt: number | null;
  sessions: SessionInfo[];
  sessionsError: string | null;
  devices: DeviceMemory[];
  devicesError: string | null;
  traces: Traces | null;
  tracesError: string | null;
  completion: CompletionStatsView | null;
  bench: BenchView | null;
  notice: { level: 'info' | 'error'; text: string } | null;
}

const MAX_TURNS = 200;

export function initialState(saved: unknown): ViewState {
  const p = (saved && typeof saved === 'object' ? saved : {}) as Partial<PersistedState>;
  const turns = Array.isArray(p.turns)
    ? p.turns.filter((t): t is ChatTurn => !!t && typeof t.content === 'string' && ['system', 'user', 'assistant'].includes(t.role))
      .map((t) => (t.reasoning === undefined || typeof t.reasoning === 'string' ? t : { ...t, reasoning: undefined }))
      .slice(-MAX_TURNS)
    : [];
  return {
    tab: TAB_IDS.includes(p.tab as TabId) ? (p.tab as TabId) : 'chat',
    chatName: typeof p.chatName === 'string' ? p.chatName : '',
    turns,
    draft: typeof p.draft === 'string' ? p.draft : '',
    selectedTrace: typeof p.selectedTrace === 'string' ? p.selectedTrace : null,
    server: null, metrics: null, metricsAt: null, sessions: [], sessionsError: null, devices: [], devicesError: null,
    traces: null, tracesError: null, completion: null, bench: null, notice: null,
  };
}

export function persisted(s: ViewState): PersistedState {
  return { tab: s.tab, chatName: s.chatName, turns: s.turns, draft: s.draft, selectedTrace: s.selectedTrace };
}

function updateTurn(s: ViewState, chatId: string, f: (t: ChatTurn) => ChatTurn): ViewState {
  const i = s.turns.findIndex((t) => t.chatId === chatId);
  if (i < 0) return s; // another view's chat, or one this view no longer shows
  const turns = s.turns.slice();
  turns[i] = f(turns[i]!);
  return { ...s, turns };
}

export function endStats(end: ChatEndInfo): string | null {
  const parts: string[] = [];
  if (end.usage) {
    parts.push(`${end.usage.completionTokens} tok`);
    if (end.usage.cachedTokens) parts.push(`${end.usage.cachedTokens} prompt tok reused`);
  }
  if (end.timings?.predictedPerSecond) parts.push(`${end.timings.predictedPerSecond.toFixed(1)} tok/s`);
  if (end.timings?.promptMs !== null && end.timings?.promptMs !== undefined) parts.push(`prompt ${Math.round(end.timings.promptMs)} ms`);
  if (end.cancelled) parts.push('stopped');
  return parts.length ? parts.join(' · ') : null;
}

export function reduce(s: ViewState, msg: ToWebview): ViewState {
  switch (msg.type) {
    case 'server': return { ...s, server: msg.server };
    case 'metrics': return { ...s, metrics: msg.metrics, metricsAt: msg.at };
    case 'sessions': return { ...s, sessions: msg.sessions, sessionsError: msg.error };
    case 'devices': return { ...s, devices: msg.devices, devicesError: msg.error };
    case 'traces': {
      const keep = msg.traces.requests.some((r) => r.id === s.selectedTrace);
      return { ...s, traces: msg.traces, tracesError: msg.error, selectedTrace: keep ? s.selectedTrace : msg.traces.requests.at(-1)?.id ?? null };
    }
    case 'completionStats': return { ...s, completion: msg.stats };
    case 'bench': return { ...s, bench: msg.bench };
    case 'chatDelta': return updateTurn(s, msg.chatId, (t) => (t.pending ? { ...t, content: t.content + msg.text } : t));
    case 'chatReasoning': return updateTurn(s, msg.chatId, (t) => (t.pending ? { ...t, reasoning: (t.reasoning ?? '') + msg.text } : t));
    case 'chatSnapshot':
      return updateTurn(s, msg.chatId, (t) => (t.pending ? { ...t, content: msg.text, ...(msg.reasoning ? { reasoning: msg.reasoning } : {}) } : t));
    case 'chatEnd':
      return updateTurn(s, msg.chatId, (t) => (t.pending ? { ...t, pending: false, error: msg.end.error, stats: endStats(msg.end) } : t));
    case 'chatLoad':
      return {
        ...s,
        chatName: msg.name,
        turns: msg.messages.filter((m) => m.role !== 'tool').map((m) => ({ role: m.role as ChatTurn['role'], content: m.content })),
      };
    case 'showTab': return { ...s, tab: msg.tab };
    case 'notice': return { ...s, notice: { level: msg.level, text: msg.text } };
  }
}

/** How a turn's thinking block shows, or null when it has none. */
export interface ThinkingView { text: string; open: boolean; label: string }

/**
 * The collapsed "Thinking" block above an answer. Open while the model is still only thinking
 * (so the user sees progress), closed once the answer starts; `userOpen` (the user toggled it)
 * wins over both.
 */
export function thinkingView(t: ChatTurn, userOpen?: boolean): ThinkingView | null {
  if (!t.reasoning) return null;
  const thinkingNow = !!t.pending && t.content === '';
  return { text: t.reasoning, open: userOpen ?? thinkingNow, label: thinkingNow ? 'Thinking…' : 'Thinking' };
}

/** The conversation to send or save: finished, error-free turns, answers without their thinking. */
export function conversation(turns: readonly ChatTurn[]): ChatMessage[] {
  return turns.filter((t) => !t.pending && !t.error && t.content !== '').map((t) => ({ role: t.role, content: t.content }));
}

export function isStreaming(s: ViewState): boolean {
  return s.turns.some((t) => t.pending);
}

/** The user sends the draft: a user turn and a pending answer, plus the message to post. */
export function sendChat(s: ViewState, chatId: string): { state: ViewState; out: FromWebview | null } {
  const text = s.draft.trim();
  if (!text || isStreaming(s)) return { state: s, out: null };
  const messages = [...conversation(s.turns), { role: 'user' as const, content: text }];
  const added: ChatTurn[] = [{ role: 'user', content: text }, { role: 'assistant', content: '', chatId, pending: true }];
  const turns = [...s.turns, ...added].slice(-MAX_TURNS);
  return { state: { ...s, turns, draft: '', notice: null }, out: { type: 'chatSend', chatId, name: s.chatName || 'chat', messages } };
}

export function newChat(s: ViewState): ViewState {
  return isStreaming(s) ? s : { ...s, turns: [], chatName: '', notice: null };
}
