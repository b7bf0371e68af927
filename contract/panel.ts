// Messages between the extension (extension/panel/) and the panel UI (webview/). The one
// place both sides agree on; every message is a tagged union member, nothing is `any`.
import type { SessionInfo } from './sessions.js';
import type { Traces } from './traces.js';
import type { DeviceMemory, FitView } from './devices.js';
import type { Metrics } from './metrics.js';
import type { ChatMessage, Timings, Usage } from './chat.js';
import { sessionNameProblem } from './session-name.js';
import type { BenchView } from './bench.js';
import { isChatMode, type AgentCompactionView, type AgentContextView, type AgentDecision, type AgentStepView, type ChatMode } from './agent.js';
import type { RuleFileView, TodoItem } from './agent-plan.js';
import type { RestorePlanView, RestoreResultView } from './agent-checkpoints.js';

export type TabId = 'chat' | 'sessions' | 'kv' | 'trace' | 'devices' | 'bench' | 'index';
export const TAB_IDS: readonly TabId[] = ['chat', 'sessions', 'kv', 'trace', 'devices', 'bench', 'index'];

export type ServerStateKind = 'stopped' | 'starting' | 'ready' | 'failed';

export interface ServerView {
  state: ServerStateKind;
  busy: boolean;
  mode: 'managed' | 'remote';
  model: string | null;
  url: string | null;
  message: string | null;
}

/** Which server a status's figures come from ('' for none). Figures (metrics, devices, traces) are
 *  dropped when this changes: a switch from a managed server to a remote one can go ready to ready,
 *  so the state alone would keep the old server's figures. */
export function serverSource(s: ServerView | null | undefined): string {
  return s?.state === 'ready' ? `${s.mode} ${s.url}` : '';
}

export interface CompletionStatsView {
  requests: number;
  cacheHits: number;
  shown: number;
  accepted: number;
  cancelled: number;
  errors: number;
  latencyAvgMs: number | null;
  latencyP50Ms: number | null;
  latencyP90Ms: number | null;
  /** The last completion's server round trip, ms. */
  lastLatencyMs: number | null;
}

export interface ChatEndInfo {
  usage: Usage | null;
  timings: Timings | null;
  error: string | null;
  cancelled: boolean;
  /** A stopped answer: what arrived before the stop (the server sends no usage then). */
  partial?: { tokens: number; ms: number } | null;
  /** An Agent-mode answer: the messages it added to the conversation (tool calls and results, the answer). */
  agent?: {
    messages: ChatMessage[]; steps: number; note: string | null;
    /** Set when the answer compacted the conversation: the whole conversation to go on from (it replaces the earlier turns' messages). */
    conversation?: ChatMessage[];
  };
}

/** A piece of editor context attached to a chat message (a selection, a whole file, or a chunk the codebase index found). */
export interface ContextItem {
  id: string;
  kind: 'selection' | 'file' | 'codebase';
  /** Workspace-relative path (the file name for files outside the workspace). */
  path: string;
  /** 1-based line range; null for a whole file. */
  range: { startLine: number; endLine: number } | null;
  language: string | null;
  text: string;
  /** Tokens of `text` by the server's tokenizer; null when the server was not there to count. */
  tokens: number | null;
  /** Set when `text` is the start of a longer source: how many lines that had. */
  cutFrom?: number;
}

/** The codebase index as the Index tab shows it. */
export interface IndexView {
  enabled: boolean;
  phase: 'idle' | 'scanning' | 'chunking' | 'embedding';
  paused: boolean;
  filesDone: number;
  filesTotal: number;
  chunksDone: number;
  chunksTotal: number;
  etaSeconds: number | null;
  /** Why the last pass stopped short, or what is missing (no embedding model). */
  message: string | null;
  files: number;
  chunks: number;
  vectors: number;
  /** The store's size on disk. */
  bytes: number;
  /** The embedding model's identity the vectors were made with; null: none (full text only). */
  model: string | null;
  reranker: string | null;
  /** When the last pass ended (ms since the epoch). */
  lastUpdated: number | null;
}

/** One search hit with every stage's score (why it was chosen). */
export interface IndexHitView {
  path: string;
  startLine: number;
  endLine: number;
  text: string;
  fullText: { score: number; rank: number } | null;
  vector: { score: number; rank: number } | null;
  fused: number;
  rerank: number | null;
}

export interface IndexSearchView {
  query: string;
  hits: IndexHitView[];
  stages: Array<'fullText' | 'vector' | 'rerank'>;
  ms: number;
  error: string | null;
}

export type IndexAction = 'rebuild' | 'pause' | 'resume' | 'cancel';

/** Extension -> webview. */
export type ToWebview =
  | { type: 'server'; server: ServerView }
  | { type: 'metrics'; metrics: Metrics; at: number }
  | { type: 'sessions'; sessions: SessionInfo[]; error: string | null }
  | { type: 'devices'; devices: DeviceMemory[]; fit: FitView[]; error: string | null }
  | { type: 'traces'; traces: Traces; error: string | null }
  | { type: 'completionStats'; stats: CompletionStatsView }
  | { type: 'bench'; bench: BenchView }
  | { type: 'chatDelta'; chatId: string; text: string }
  /** A piece of the model's thinking (reasoning models), shown apart from the answer, never sent back. */
  | { type: 'chatReasoning'; chatId: string; text: string; thinking?: ThinkingStats }
  /** Whole text (and thinking, when there is any) so far of an answer (sent when a panel comes back). */
  | { type: 'chatSnapshot'; chatId: string; text: string; reasoning?: string; thinking?: ThinkingStats }
  | { type: 'chatEnd'; chatId: string; end: ChatEndInfo }
  | { type: 'chatLoad'; name: string; messages: ChatMessage[]; mode?: ChatMode; thinking?: ThinkingLevel }
  /** A tool step of an Agent-mode answer, new or changed (the same id replaces the earlier one). */
  | { type: 'agentStep'; chatId: string; step: AgentStepView }
  /** The rule files (AGENTS.md, strata.agent.rulesFiles) in an agent answer's system message. */
  | { type: 'agentRules'; chatId: string; rules: RuleFileView[] }
  /** The plan the model keeps with its todo tool, whole, each time it changes. */
  | { type: 'agentTodo'; chatId: string; items: TodoItem[] }
  /** Answer to agentRestorePreview: what Restore to here would do. */
  | { type: 'agentRestorePlan'; plan: RestorePlanView }
  /** Restore to here happened: the conversation is cut at the step. */
  | { type: 'agentRestored'; result: RestoreResultView }
  /** How much of the model's context the agent conversation uses (the meter). */
  | { type: 'agentContext'; chatId: string; context: AgentContextView }
  /** The agent answer compacted the conversation here (a marker). */
  | { type: 'agentCompaction'; chatId: string; compaction: AgentCompactionView }
  /** The Compact action's result: the conversation to go on from, and its marker. */
  | { type: 'agentCompacted'; messages: ChatMessage[]; compaction: AgentCompactionView; context: AgentContextView | null }
  /** The user message as sent (the question with its context), and what was trimmed to fit. */
  | { type: 'chatSent'; chatId: string; content: string; note: string | null }
  | { type: 'contextAdd'; item: ContextItem }
  /** Answer to an `estimate` request: the prompt's size before sending, and what would be trimmed. */
  | { type: 'estimate'; id: number; tokens: number | null; budget: number | null; note: string | null; error: string | null }
  /** An image of the draft counted by the chat model's projector (error: the server cannot take it). */
  | { type: 'imageCounted'; id: string; tokens: number | null; error: string | null }
  | { type: 'showTab'; tab: TabId }
  | { type: 'index'; index: IndexView }
  | { type: 'indexSearch'; result: IndexSearchView }
  /** The context a sent question went with (codebase chunks an @codebase question added). */
  | { type: 'chatContext'; chatId: string; context: ContextItem[] }
  | { type: 'notice'; level: 'info' | 'error'; text: string };

/**
 * A conversation's thinking control: auto (the server decides), off, low, high; sent as the chat
 * request's reasoning_effort (none, low, high), whose budgets the server sets.
 */
export type ThinkingLevel = 'auto' | 'off' | 'low' | 'high';
export const THINKING_LEVELS: readonly ThinkingLevel[] = ['auto', 'off', 'low', 'high'];
export const isThinkingLevel = (v: unknown): v is ThinkingLevel => (THINKING_LEVELS as readonly unknown[]).includes(v);
/** The thinking control as the request's reasoning_effort (auto: not sent, the server decides). */
export const THINKING_EFFORT = { auto: undefined, off: 'none', low: 'low', high: 'high' } as const satisfies Record<ThinkingLevel, string | undefined>;

/** What a saved conversation is set to besides its messages, restored with it. */
export interface ConversationSettings { mode: ChatMode; thinking: ThinkingLevel }

/** An answer's thinking so far: its tokens (streamed pieces until the server's count) and ms from its first piece to its last. */
export interface ThinkingStats { tokens: number; ms: number }

export type PanelCommand = 'start' | 'stop' | 'restart' | 'selectModel' | 'showLog' | 'runBench';

/** Webview -> extension. */
export type FromWebview =
  | { type: 'ready'; tab: TabId }
  | { type: 'tab'; tab: TabId }
  /** `messages` ends with the question; `context` is attached to it. */
  | { type: 'chatSend'; chatId: string; name: string; messages: ChatMessage[]; context?: ContextItem[]; mode?: ChatMode; thinking?: ThinkingLevel }
  /** The user's answer to what a step of an agent answer asks (Accept / Reject, Run / Skip, Allow / Deny). */
  | { type: 'agentDecision'; chatId: string; stepId: string; decision: AgentDecision }
  /** Open a proposed change as a diff editor. */
  | { type: 'agentShowDiff'; chatId: string; stepId: string }
  /** What Restore to here at a checkpoint step would do (nothing changes yet). */
  | { type: 'agentRestorePreview'; chatId: string; stepId: string }
  /** Restore to here, confirmed. */
  | { type: 'agentRestore'; chatId: string; stepId: string }
  /** Compact the agent conversation now (a summary of it replaces the earlier steps). */
  | { type: 'agentCompact'; name: string; messages: ChatMessage[] }
  | { type: 'chatStop'; chatId: string }
  | { type: 'estimate'; id: number; messages: ChatMessage[]; context: ContextItem[] }
  /** Count an image pasted or dropped into the message box. */
  | { type: 'imageCount'; id: string; dataUrl: string }
  /** Attach editor context: the active selection, the active file, or a file the user picks. */
  | { type: 'contextRequest'; what: 'selection' | 'file' | 'pick' }
  /** Attach the codebase index's best chunks for this query (the draft). */
  | { type: 'codebaseRequest'; query: string }
  | { type: 'indexSearch'; query: string }
  | { type: 'indexAction'; action: IndexAction }
  | { type: 'copy'; text: string }
  | { type: 'insertCode'; code: string }
  | { type: 'applyCode'; code: string; language: string | null }
  | { type: 'sessionSave'; name: string; messages: ChatMessage[]; mode?: ChatMode; thinking?: ThinkingLevel }
  | { type: 'sessionRestore'; name: string }
  | { type: 'sessionDelete'; name: string }
  | { type: 'sessionReveal'; name: string }
  | { type: 'refresh'; tab: TabId }
  | { type: 'benchClear' }
  | { type: 'command'; command: PanelCommand };

const FROM_TYPES = new Set([
  'ready', 'tab', 'chatSend', 'chatStop', 'estimate', 'contextRequest', 'copy', 'insertCode', 'applyCode',
  'sessionSave', 'sessionRestore', 'sessionDelete', 'sessionReveal', 'refresh', 'benchClear', 'command',
  'codebaseRequest', 'indexSearch', 'indexAction', 'agentDecision', 'agentShowDiff', 'agentRestorePreview', 'agentRestore', 'agentCompact',
  'imageCount',
]);
/** Largest text a panel message may carry (a pasted file, a long answer). */
const MAX_TEXT = 2_000_000;
const COMMANDS = new Set<PanelCommand>(['start', 'stop', 'restart', 'selectModel', 'showLog', 'runBench']);

function isTab(v: unknown): v is TabId {
  return typeof v === 'string' && (TAB_IDS as readonly string[]).includes(v);
}
function isText(v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAX_TEXT;
}
function isContext(v: unknown): v is ContextItem[] {
  return Array.isArray(v) && v.length <= 32 && v.every((c) => {
    const o = c as ContextItem;
    const range = o?.range;
    return !!o && typeof o.id === 'string' && (o.kind === 'selection' || o.kind === 'file' || o.kind === 'codebase') && typeof o.path === 'string' && isText(o.text)
      && (o.language === null || typeof o.language === 'string') && (o.tokens === null || typeof o.tokens === 'number')
      && (range === null || (!!range && Number.isInteger(range.startLine) && Number.isInteger(range.endLine) && range.startLine >= 1 && range.endLine >= range.startLine));
  });
}
function isToolCalls(v: unknown): boolean {
  return v === undefined || (Array.isArray(v) && v.length <= 64 && v.every((c) => !!c && typeof c === 'object'
    && typeof (c as { id?: unknown }).id === 'string' && typeof (c as { name?: unknown }).name === 'string' && isText((c as { arguments?: unknown }).arguments)));
}
/** An image's data URL as the panel makes it: base64 of a PNG, JPEG, GIF or BMP of at most 10 MiB (the server's limit). */
function isImageUrl(v: unknown): v is string {
  return typeof v === 'string' && v.length <= 14_000_100 && /^data:image\/(png|jpeg|gif|bmp);base64,[A-Za-z0-9+/=]*$/.test(v);
}
function isImages(v: unknown): boolean {
  return v === undefined || (Array.isArray(v) && v.length <= 16 && v.every((i) => !!i && typeof i === 'object'
    && typeof i.id === 'string' && typeof i.name === 'string' && i.name.length <= 1000 && isImageUrl(i.dataUrl)
    && typeof i.bytes === 'number' && (i.tokens === null || typeof i.tokens === 'number')));
}
function isMessages(v: unknown): v is ChatMessage[] {
  return Array.isArray(v) && v.every((m) => m && typeof m === 'object' && typeof (m as ChatMessage).content === 'string'
    && ['system', 'user', 'assistant', 'tool'].includes((m as ChatMessage).role)
    && isImages((m as ChatMessage).images)
    && isToolCalls((m as ChatMessage).toolCalls)
    && ((m as ChatMessage).toolCallId === undefined || typeof (m as ChatMessage).toolCallId === 'string')
    && ((m as ChatMessage).name === undefined || typeof (m as ChatMessage).name === 'string'));
}
function checkName(name: unknown, raw: unknown): { ok: true; msg: FromWebview } | { ok: false; reason: string } {
  const problem = typeof name === 'string' ? sessionNameProblem(name) : 'must be a string';
  return problem === null ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: `session name: ${problem}` };
}

/** Checks a message from the webview (untrusted input); returns a reason when it is malformed. */
export function validateFromWebview(raw: unknown): { ok: true; msg: FromWebview } | { ok: false; reason: string } {
  if (!raw || typeof raw !== 'object') return { ok: false, reason: 'message is not an object' };
  const m = raw as Record<string, unknown>;
  if (typeof m.type !== 'string' || !FROM_TYPES.has(m.type)) return { ok: false, reason: `unknown message type ${String(m.type)}` };
  switch (m.type) {
    case 'ready': case 'tab': case 'refresh':
      return isTab(m.tab) ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: `unknown tab ${String(m.tab)}` };
    case 'chatSend':
      if (typeof m.chatId !== 'string' || typeof m.name !== 'string') return { ok: false, reason: 'chatSend needs chatId and name' };
      if (m.context !== undefined && !isContext(m.context)) return { ok: false, reason: 'chatSend context is malformed' };
      if (m.mode !== undefined && !isChatMode(m.mode)) return { ok: false, reason: `chatSend mode must be ask or agent, not ${String(m.mode)}` };
      if (m.thinking !== undefined && !isThinkingLevel(m.thinking)) return { ok: false, reason: `chatSend thinking must be one of ${THINKING_LEVELS.join(', ')}, not ${String(m.thinking)}` };
      return isMessages(m.messages) && m.messages.length > 0 && m.messages.at(-1)!.role === 'user' ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'chatSend needs messages ending with the question' };
    case 'estimate':
      return typeof m.id === 'number' && isMessages(m.messages) && m.messages.at(-1)?.role === 'user' && isContext(m.context)
        ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'estimate needs id, messages ending with the question, and context' };
    case 'imageCount':
      return typeof m.id === 'string' && isImageUrl(m.dataUrl) ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'imageCount needs an id and a base64 PNG, JPEG, GIF or BMP data URL of at most 10 MiB' };
    case 'contextRequest':
      return m.what === 'selection' || m.what === 'file' || m.what === 'pick' ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: `unknown context request ${String(m.what)}` };
    case 'copy':
      return isText(m.text) ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'copy needs text' };
    case 'insertCode':
      return isText(m.code) ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'insertCode needs code' };
    case 'applyCode':
      return isText(m.code) && (m.language === null || typeof m.language === 'string') ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'applyCode needs code and language' };
    case 'chatStop':
      return typeof m.chatId === 'string' ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'chatStop needs chatId' };
    case 'agentDecision':
      return typeof m.chatId === 'string' && typeof m.stepId === 'string' && ['allow', 'deny', 'acceptAll'].includes(m.decision as string)
        ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'agentDecision needs chatId, stepId and a decision (allow, deny, acceptAll)' };
    case 'agentShowDiff': case 'agentRestorePreview': case 'agentRestore':
      return typeof m.chatId === 'string' && typeof m.stepId === 'string' ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: `${m.type} needs chatId and stepId` };
    case 'agentCompact':
      if (typeof m.name !== 'string' || m.name.length > 200) return { ok: false, reason: 'agentCompact needs the conversation name (a string)' };
      return isMessages(m.messages) && m.messages.length > 0 ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'agentCompact needs the conversation (messages)' };
    case 'sessionSave':
      if (!isMessages(m.messages) || m.messages.length === 0) return { ok: false, reason: 'there is no conversation to save yet' };
      if (m.mode !== undefined && !isChatMode(m.mode)) return { ok: false, reason: `sessionSave mode must be ask or agent, not ${String(m.mode)}` };
      if (m.thinking !== undefined && !isThinkingLevel(m.thinking)) return { ok: false, reason: `sessionSave thinking must be one of ${THINKING_LEVELS.join(', ')}, not ${String(m.thinking)}` };
      return checkName(m.name, raw);
    case 'sessionRestore': case 'sessionDelete': case 'sessionReveal':
      return checkName(m.name, raw);
    case 'codebaseRequest': case 'indexSearch':
      return typeof m.query === 'string' && m.query.length <= 10_000 ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: `${m.type} needs a query` };
    case 'indexAction':
      return ['rebuild', 'pause', 'resume', 'cancel'].includes(m.action as string) ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: `unknown index action ${String(m.action)}` };
    case 'command':
      return COMMANDS.has(m.command as PanelCommand) ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: `unknown command ${String(m.command)}` };
    default:
      return { ok: true, msg: raw as FromWebview };
  }
}
