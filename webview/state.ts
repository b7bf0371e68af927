// The panel's view state and how messages from the extension change it. Pure (no DOM), so the
// message handling is unit-tested; main.ts renders whatever this produces.
import type { SessionInfo } from '../contract/sessions.js';
import type { Traces } from '../contract/traces.js';
import type { DeviceMemory, FitView } from '../contract/devices.js';
import type { Metrics } from '../contract/metrics.js';
import type { ChatMessage, ImageAttachment } from '../contract/chat.js';
import { isThinkingLevel, serverSource, TAB_IDS, type ThinkingLevel, type ThinkingStats, type ChatEndInfo, type CompletionStatsView, type ContextItem, type FromWebview, type IndexSearchView, type IndexView, type ServerView, type TabId, type ToWebview } from '../contract/panel.js';
import type { BenchView } from '../contract/bench.js';
import type { AgentStepView, ChatMode } from '../contract/agent.js';
import { turnsFromMessages, upsertStep } from './agent-turns.js';
import { emptyAgentWork, reduceAgentWork, type AgentWorkState } from './agent-work.js';
import { addCompaction, compactedConversation, withCompacted, withSummaryMarkers, type CompactionTurnPart } from './agent-compaction.js';

export interface ChatTurn extends CompactionTurnPart {
  role: 'system' | 'user' | 'assistant';
  /** What the conversation sends back to the model: the answer, or the question with its context. */
  content: string;
  /** User turns with context: the question as typed (content adds the context blocks). */
  text?: string;
  /** User turns: the editor context attached to the question. */
  context?: ContextItem[];
  /** User turns: what was trimmed to fit the model's context when it was sent. */
  note?: string | null;
  /** The model's thinking (reasoning models): shown collapsed above the answer, never sent back. */
  reasoning?: string;
  /** Its thinking's tokens and time (the Thinking block's label). */
  thinking?: ThinkingStats;
  /** Set on an assistant turn produced by a request of this panel. */
  chatId?: string;
  pending?: boolean;
  error?: string | null;
  stats?: string | null;
  /** Agent answers: the tool steps, in order. */
  steps?: AgentStepView[];
  /** Agent answers: the messages they added to the conversation (tool calls and results). */
  agentMessages?: ChatMessage[];
}

/** What survives the webview being hidden and destroyed (getState/setState). */
export interface PersistedState {
  tab: TabId;
  /** Ask or Agent, for this conversation (saved and restored with its session). */
  mode: ChatMode;
  /** This conversation's thinking control (the request's reasoning_effort; auto: not sent). */
  thinking: ThinkingLevel;
  chatName: string;
  turns: ChatTurn[];
  draft: string;
  /** Context attached to the draft (chips above the message box). */
  draftContext: ContextItem[];
  /** Images pasted or dropped into the message box (chips with their size and tokens). */
  draftImages?: ImageAttachment[];
  selectedTrace: string | null;
  /** The figure the Bench tab's history chart shows. */
  benchFigure: string | null;
}

/** The size of the prompt the draft would send, as the extension counted it. */
export interface Estimate { id: number; tokens: number | null; budget: number | null; note: string | null; error: string | null }

export interface ViewState extends PersistedState {
  server: ServerView | null;
  metrics: Metrics | null;
  metricsAt: number | null;
  sessions: SessionInfo[];
  sessionsError: string | null;
  devices: DeviceMemory[];
  /** What each replica's fit to memory decided (empty without a fit). */
  fit: FitView[];
  devicesError: string | null;
  traces: Traces | null;
  tracesError: string | null;
  completion: CompletionStatsView | null;
  bench: BenchView | null;
  notice: { level: 'info' | 'error'; text: string } | null;
  estimate: Estimate | null;
  /** The codebase index (Index tab) and the last search there. */
  index: IndexView | null;
  indexSearch: IndexSearchView | null;
  indexQuery: string;
  /** Agent mode's rules chips, pinned plan and Restore to here. */
  agentWork: AgentWorkState;
}

const MAX_TURNS = 200;

const isThinkingStats = (v: unknown): v is ThinkingStats =>
  !!v && typeof v === 'object' && Number.isFinite((v as ThinkingStats).tokens) && Number.isFinite((v as ThinkingStats).ms);

export function initialState(saved: unknown): ViewState {
  const p = (saved && typeof saved === 'object' ? saved : {}) as Partial<PersistedState>;
  const turns = Array.isArray(p.turns)
    ? p.turns.filter((t): t is ChatTurn => !!t && typeof t.content === 'string' && ['system', 'user', 'assistant'].includes(t.role))
      .map((t) => (t.reasoning === undefined || typeof t.reasoning === 'string' ? t : { ...t, reasoning: undefined }))
      .map((t) => (t.thinking === undefined || isThinkingStats(t.thinking) ? t : { ...t, thinking: undefined }))
      .slice(-MAX_TURNS)
    : [];
  return {
    tab: TAB_IDS.includes(p.tab as TabId) ? (p.tab as TabId) : 'chat',
    mode: p.mode === 'agent' ? 'agent' : 'ask',
    thinking: isThinkingLevel(p.thinking) ? p.thinking : 'auto',
    chatName: typeof p.chatName === 'string' ? p.chatName : '',
    turns,
    draft: typeof p.draft === 'string' ? p.draft : '',
    draftContext: Array.isArray(p.draftContext) ? p.draftContext.filter((c) => !!c && typeof c.text === 'string' && typeof c.path === 'string') : [],
    selectedTrace: typeof p.selectedTrace === 'string' ? p.selectedTrace : null,
    benchFigure: typeof p.benchFigure === 'string' ? p.benchFigure : null,
    server: null, metrics: null, metricsAt: null, sessions: [], sessionsError: null, devices: [], fit: [], devicesError: null,
    traces: null, tracesError: null, completion: null, bench: null, notice: null, estimate: null,
    index: null, indexSearch: null, indexQuery: '', agentWork: emptyAgentWork(),
  };
}

export function persisted(s: ViewState): PersistedState {
  return { tab: s.tab, mode: s.mode, thinking: s.thinking, chatName: s.chatName, turns: s.turns, draft: s.draft, draftContext: s.draftContext, selectedTrace: s.selectedTrace, benchFigure: s.benchFigure };
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
  if (end.cancelled) {
    // The server sends no usage for a stopped stream: say what arrived before the stop.
    const p = end.partial;
    if (!end.usage && p && p.tokens > 0) {
      parts.push(`~${p.tokens} tok`);
      if (p.ms > 0 && p.tokens > 1) parts.push(`${((p.tokens - 1) / (p.ms / 1000)).toFixed(1)} tok/s`);
    }
    parts.push('stopped');
  }
  return parts.length ? parts.join(' · ') : null;
}

/** The user turn just before the answer `chatId`. */
function questionIndex(turns: readonly ChatTurn[], chatId: string): number {
  const i = turns.findIndex((t) => t.chatId === chatId);
  return i > 0 && turns[i - 1]!.role === 'user' ? i - 1 : -1;
}

/** Whether the server's state means the panel's live figures are gone (not ready any more). */
const serverGone = (s: ViewState, next: ServerView): boolean =>
  serverSource(s.server) !== serverSource(next) || (next.state !== 'ready' && s.metrics !== null);

export function reduce(s: ViewState, msg: ToWebview): ViewState {
  switch (msg.type) {
    case 'server':
      // Stopped, restarting, failed or another server: the last figures describe a server that is gone, so drop them.
      return serverGone(s, msg.server)
        ? { ...s, server: msg.server, metrics: null, metricsAt: null, devices: [], fit: [], devicesError: null, traces: null, tracesError: null }
        : { ...s, server: msg.server };
    case 'metrics': return { ...s, metrics: msg.metrics, metricsAt: msg.at };
    case 'sessions': return { ...s, sessions: msg.sessions, sessionsError: msg.error };
    case 'devices': return { ...s, devices: msg.devices, fit: msg.fit, devicesError: msg.error };
    case 'traces': {
      const keep = msg.traces.requests.some((r) => r.id === s.selectedTrace);
      return { ...s, traces: msg.traces, tracesError: msg.error, selectedTrace: keep ? s.selectedTrace : msg.traces.requests.at(-1)?.id ?? null };
    }
    case 'completionStats': return { ...s, completion: msg.stats };
    case 'bench': return { ...s, bench: msg.bench };
    case 'chatDelta': return updateTurn(s, msg.chatId, (t) => (t.pending ? { ...t, content: t.content + msg.text } : t));
    case 'chatReasoning':
      return updateTurn(s, msg.chatId, (t) => (t.pending ? { ...t, reasoning: (t.reasoning ?? '') + msg.text, ...(msg.thinking ? { thinking: msg.thinking } : {}) } : t));
    case 'chatSnapshot':
      return updateTurn(s, msg.chatId, (t) => (t.pending ? { ...t, content: msg.text, ...(msg.reasoning ? { reasoning: msg.reasoning } : {}), ...(msg.thinking ? { thinking: msg.thinking } : {}) } : t));
    case 'chatEnd': {
      const agent = msg.end.agent;
      return updateTurn(s, msg.chatId, (t) => (t.pending ? {
        ...t, pending: false, error: msg.end.error, stats: endStats(msg.end),
        // The server's count of the thinking's tokens wins over the pieces counted while it streamed.
        ...(t.thinking && msg.end.usage?.reasoningTokens !== undefined ? { thinking: { ...t.thinking, tokens: msg.end.usage.reasoningTokens } } : {}),
        ...(agent ? { agentMessages: agent.messages, ...(agent.conversation ? { agentBase: agent.conversation } : {}), ...(agent.note ? { note: agent.note } : {}) } : {}),
      } : t));
    }
    case 'agentStep':
      return updateTurn(s, msg.chatId, (t) => (t.pending ? { ...t, steps: upsertStep(t.steps, msg.step) } : t));
    case 'agentContext':
      return updateTurn(s, msg.chatId, (t) => ({ ...t, agentContext: msg.context }));
    case 'agentCompaction':
      return updateTurn(s, msg.chatId, (t) => ({ ...t, compactions: addCompaction(t.compactions, msg.compaction) }));
    case 'agentCompacted':
      return { ...s, turns: withCompacted(s.turns, msg.messages, msg.compaction, msg.context) };
    case 'chatLoad':
      return { ...s, chatName: msg.name, mode: msg.mode ?? 'ask', thinking: msg.thinking ?? 'auto', turns: withSummaryMarkers(turnsFromMessages<ChatTurn>(msg.messages)) };
    case 'chatSent': {
      const i = questionIndex(s.turns, msg.chatId);
      if (i < 0) return s;
      const turns = s.turns.slice();
      const q = turns[i]!;
      turns[i] = { ...q, text: q.text ?? q.content, content: msg.content, note: msg.note };
      return { ...s, turns };
    }
    case 'contextAdd': {
      const same = (c: ContextItem): boolean => c.path === msg.item.path && c.text === msg.item.text && JSON.stringify(c.range) === JSON.stringify(msg.item.range);
      return { ...s, tab: 'chat', draftContext: s.draftContext.some(same) ? s.draftContext : [...s.draftContext, msg.item] };
    }
    case 'estimate':
      return s.estimate === null || msg.id >= s.estimate.id ? { ...s, estimate: { id: msg.id, tokens: msg.tokens, budget: msg.budget, note: msg.note, error: msg.error } } : s;
    case 'imageCounted': {
      const images = s.draftImages ?? [];
      if (!images.some((i) => i.id === msg.id)) return s;
      // An image the server refuses (no projector, an unreadable file) leaves the draft, saying why.
      if (msg.error !== null) return { ...s, draftImages: images.filter((i) => i.id !== msg.id), notice: { level: 'error', text: `The image was not attached: ${msg.error}` } };
      return { ...s, draftImages: images.map((i) => (i.id === msg.id ? { ...i, tokens: msg.tokens } : i)) };
    }
    case 'showTab': return { ...s, tab: msg.tab };
    case 'index': return { ...s, index: msg.index };
    case 'indexSearch': return { ...s, indexSearch: msg.result };
    case 'chatContext': {
      const i = questionIndex(s.turns, msg.chatId);
      if (i < 0) return s;
      const turns = s.turns.slice();
      turns[i] = { ...turns[i]!, context: msg.context };
      return { ...s, turns };
    }
    case 'notice': return { ...s, notice: { level: msg.level, text: msg.text } };
    case 'agentRules': case 'agentTodo': case 'agentRestorePlan': case 'agentRestored': return reduceAgentWork(s, msg);
  }
}

/** How a turn's thinking block shows, or null when it has none. */
export interface ThinkingView { text: string; open: boolean; label: string }

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/**
 * The collapsed "Thinking" block above an answer: it streams closed, its label counting the
 * tokens and the time ("Thinking… 12 tokens · 1.4 s", then "Thought for 3.2 s · 240 tokens");
 * `userOpen` (the user toggled it) opens it.
 */
export function thinkingView(t: ChatTurn, userOpen?: boolean): ThinkingView | null {
  if (!t.reasoning) return null;
  const thinkingNow = !!t.pending && t.content === '';
  const n = t.thinking ? `${t.thinking.tokens} token${t.thinking.tokens === 1 ? '' : 's'}` : null;
  const label = thinkingNow
    ? ['Thinking…', n, t.thinking ? seconds(t.thinking.ms) : null].filter(Boolean).join(' · ')
    : t.thinking ? `Thought for ${seconds(t.thinking.ms)} · ${n}` : 'Thinking';
  return { text: t.reasoning, open: userOpen ?? false, label };
}

/** The conversation to send or save: finished, error-free turns, answers without their thinking. */
export function conversation(turns: readonly ChatTurn[]): ChatMessage[] {
  return compactedConversation(turns.filter((t) => !t.pending && !t.error && (t.content !== '' || !!t.agentMessages?.length || !!t.images?.length)));
}

export function isStreaming(s: ViewState): boolean {
  return s.turns.some((t) => t.pending);
}

/** Requests the server is working on (as its metrics last said), at least this view's own answer. */
export function activeRequests(s: ViewState): number {
  const m = s.metrics;
  const server = m && s.server?.state === 'ready' ? m.queued + m.admitting + m.running + m.finishing : 0;
  return Math.max(server, isStreaming(s) ? 1 : 0, s.server?.busy ? 1 : 0);
}

/** Asks the model: a user turn and a pending answer after `before`, plus the message to post. */
function ask(s: ViewState, before: readonly ChatTurn[], text: string, context: ContextItem[], chatId: string, images: ImageAttachment[] = []): { state: ViewState; out: FromWebview } {
  const withImages = images.length ? { images } : {};
  const messages = [...conversation(before), { role: 'user' as const, content: text, ...withImages }];
  const question: ChatTurn = { role: 'user', content: text, ...(context.length ? { text, context } : {}), ...withImages };
  const turns = [...before, question, { role: 'assistant' as const, content: '', chatId, pending: true }].slice(-MAX_TURNS);
  const out: FromWebview = {
    type: 'chatSend', chatId, name: s.chatName || 'chat', messages, ...(context.length ? { context } : {}), ...(s.mode === 'agent' ? { mode: 'agent' as const } : {}),
    ...(s.thinking !== 'auto' ? { thinking: s.thinking } : {}),
  };
  return { state: { ...s, turns, notice: null }, out };
}

/** The user sends the draft (with its attached context). */
export function sendChat(s: ViewState, chatId: string): { state: ViewState; out: FromWebview | null } {
  const text = s.draft.trim();
  const images = s.draftImages ?? [];
  // An image alone is a question too (what is in it?).
  if ((!text && !images.length) || isStreaming(s)) return { state: s, out: null };
  const r = ask(s, s.turns, text, s.draftContext, chatId, images);
  return { state: { ...r.state, draft: '', draftContext: [], draftImages: [], estimate: null }, out: r.out };
}

/** The last question and its answer, when there is an answer to redo or a question to edit. */
function lastExchange(s: ViewState): { q: number; question: ChatTurn } | null {
  if (isStreaming(s)) return null;
  let q = s.turns.length - 1;
  while (q >= 0 && s.turns[q]!.role !== 'user') q--;
  if (q < 0 || s.turns.slice(q + 1).some((t) => t.role !== 'assistant')) return null;
  return { q, question: s.turns[q]! };
}

export function canRegenerate(s: ViewState): boolean {
  const x = lastExchange(s);
  return !!x && x.q < s.turns.length - 1;
}

/** Asks the last question again: its answer is replaced by a new one. */
export function regenerate(s: ViewState, chatId: string): { state: ViewState; out: FromWebview | null } {
  const x = lastExchange(s);
  if (!x || !canRegenerate(s)) return { state: s, out: null };
  return ask(s, s.turns.slice(0, x.q), x.question.text ?? x.question.content, x.question.context ?? [], chatId, x.question.images ?? []);
}

/** Takes the last question (and its context) back into the message box; it and its answer leave the chat. */
export function editLastQuestion(s: ViewState): ViewState {
  const x = lastExchange(s);
  if (!x) return s;
  return { ...s, turns: s.turns.slice(0, x.q), draft: x.question.text ?? x.question.content, draftContext: x.question.context ?? [], draftImages: x.question.images ?? [], estimate: null, notice: null };
}

/** Image types the server reads (PNG, JPEG, GIF, BMP) and the largest file it takes (its MAX_IMAGE_BYTES). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/bmp'];
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** Attaches an image to the draft (tokens counted by the extension: imageCount), or says why it cannot go. */
export function addImage(s: ViewState, image: ImageAttachment, type: string): { state: ViewState; out: FromWebview | null } {
  if (!IMAGE_TYPES.includes(type)) return { state: { ...s, notice: { level: 'error', text: `${image.name}: ${type || 'this file'} is not an image the model reads (PNG, JPEG, GIF or BMP)` } }, out: null };
  if (image.bytes > MAX_IMAGE_BYTES) return { state: { ...s, notice: { level: 'error', text: `${image.name} is ${(image.bytes / 1048576).toFixed(1)} MiB; images up to 10 MiB are sent` } }, out: null };
  return { state: { ...s, notice: null, draftImages: [...(s.draftImages ?? []), image] }, out: { type: 'imageCount', id: image.id, dataUrl: image.dataUrl } };
}

export function removeImage(s: ViewState, id: string): ViewState {
  return { ...s, draftImages: (s.draftImages ?? []).filter((i) => i.id !== id) };
}

export function removeContext(s: ViewState, id: string): ViewState {
  return { ...s, draftContext: s.draftContext.filter((c) => c.id !== id) };
}

/** What the draft would send (for the extension to count), or null when there is no draft. */
export function estimateRequest(s: ViewState, id: number): FromWebview | null {
  const text = s.draft.trim();
  const images = s.draftImages ?? [];
  if (!text && !s.draftContext.length && !images.length) return null;
  return { type: 'estimate', id, messages: [...conversation(s.turns), { role: 'user', content: text, ...(images.length ? { images } : {}) }], context: s.draftContext };
}

/** Ask / Agent for this conversation (not while an answer runs: it would change what the answer is). */
export function setMode(s: ViewState, mode: ChatMode): ViewState {
  return isStreaming(s) || s.mode === mode ? s : { ...s, mode };
}

/** The conversation's thinking control (sent with its next questions). */
export function setThinking(s: ViewState, thinking: ThinkingLevel): ViewState {
  return isStreaming(s) || s.thinking === thinking ? s : { ...s, thinking };
}

export function newChat(s: ViewState): ViewState {
  return isStreaming(s) ? s : { ...s, turns: [], chatName: '', draftContext: [], estimate: null, notice: null };
}
