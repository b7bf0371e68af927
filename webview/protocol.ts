// Messages between the extension (extension/panel/) and the panel UI (webview/). The one
// place both sides agree on; every message is a tagged union member, nothing is `any`.
import type {
  ChatMessage, DeviceMemory, Metrics, SessionInfo, Timings, Traces, Usage,
} from '../extension/api/types.js';

export type TabId = 'chat' | 'sessions' | 'kv' | 'trace' | 'devices' | 'bench';
export const TAB_IDS: readonly TabId[] = ['chat', 'sessions', 'kv', 'trace', 'devices', 'bench'];

export type ServerStateKind = 'stopped' | 'starting' | 'ready' | 'failed';

export interface ServerView {
  state: ServerStateKind;
  busy: boolean;
  mode: 'managed' | 'remote';
  model: string | null;
  url: string | null;
  message: string | null;
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
}

export interface BenchFigure {
  name: string;
  value: number;
  unit: string;
  /** Which way is better, when the benchmark says. */
  better?: 'higher' | 'lower';
}

export interface BenchRun {
  id: string;
  time: number;
  url: string;
  model: string | null;
  figures: BenchFigure[];
}

export interface BenchView {
  runs: BenchRun[];
  running: boolean;
  progress: string | null;
  error: string | null;
}

export interface ChatEndInfo {
  usage: Usage | null;
  timings: Timings | null;
  error: string | null;
  cancelled: boolean;
}

/** Extension -> webview. */
export type ToWebview =
  | { type: 'server'; server: ServerView }
  | { type: 'metrics'; metrics: Metrics; at: number }
  | { type: 'sessions'; sessions: SessionInfo[]; error: string | null }
  | { type: 'devices'; devices: DeviceMemory[]; error: string | null }
  | { type: 'traces'; traces: Traces; error: string | null }
  | { type: 'completionStats'; stats: CompletionStatsView }
  | { type: 'bench'; bench: BenchView }
  | { type: 'chatDelta'; chatId: string; text: string }
  /** A piece of the model's thinking (reasoning models), shown apart from the answer, never sent back. */
  | { type: 'chatReasoning'; chatId: string; text: string }
  /** Whole text (and thinking, when there is any) so far of an answer (sent when a panel comes back). */
  | { type: 'chatSnapshot'; chatId: string; text: string; reasoning?: string }
  | { type: 'chatEnd'; chatId: string; end: ChatEndInfo }
  | { type: 'chatLoad'; name: string; messages: ChatMessage[] }
  | { type: 'showTab'; tab: TabId }
  | { type: 'notice'; level: 'info' | 'error'; text: string };

export type PanelCommand = 'start' | 'stop' | 'restart' | 'selectModel' | 'showLog' | 'runBench';

/** Webview -> extension. */
export type FromWebview =
  | { type: 'ready'; tab: TabId }
  | { type: 'tab'; tab: TabId }
  | { type: 'chatSend'; chatId: string; name: string; messages: ChatMessage[] }
  | { type: 'chatStop'; chatId: string }
  | { type: 'sessionSave'; name: string; messages: ChatMessage[] }
  | { type: 'sessionRestore'; name: string }
  | { type: 'sessionDelete'; name: string }
  | { type: 'sessionReveal'; name: string }
  | { type: 'refresh'; tab: TabId }
  | { type: 'benchClear' }
  | { type: 'command'; command: PanelCommand };

const FROM_TYPES = new Set(['ready', 'tab', 'chatSend', 'chatStop', 'sessionSave', 'sessionRestore', 'sessionDelete', 'sessionReveal', 'refresh', 'benchClear', 'command']);
const COMMANDS = new Set<PanelCommand>(['start', 'stop', 'restart', 'selectModel', 'showLog', 'runBench']);

function isTab(v: unknown): v is TabId {
  return typeof v === 'string' && (TAB_IDS as readonly string[]).includes(v);
}
function isMessages(v: unknown): v is ChatMessage[] {
  return Array.isArray(v) && v.every((m) => m && typeof m === 'object' && typeof (m as ChatMessage).content === 'string'
    && ['system', 'user', 'assistant', 'tool'].includes((m as ChatMessage).role));
}
// The server sanitises names for its files; here only empty, huge or control-character names are refused.
const SESSION_NAME = /^[^\u0000-\u001f\u007f]{1,120}$/u;

function checkName(name: unknown, raw: unknown): { ok: true; msg: FromWebview } | { ok: false; reason: string } {
  return typeof name === 'string' && name.trim() !== '' && SESSION_NAME.test(name)
    ? { ok: true, msg: raw as FromWebview }
    : { ok: false, reason: 'a session name is 1-120 characters without control characters' };
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
      return isMessages(m.messages) && m.messages.length > 0 ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'chatSend needs messages' };
    case 'chatStop':
      return typeof m.chatId === 'string' ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: 'chatStop needs chatId' };
    case 'sessionSave':
      if (!isMessages(m.messages) || m.messages.length === 0) return { ok: false, reason: 'there is no conversation to save yet' };
      return checkName(m.name, raw);
    case 'sessionRestore': case 'sessionDelete': case 'sessionReveal':
      return checkName(m.name, raw);
    case 'command':
      return COMMANDS.has(m.command as PanelCommand) ? { ok: true, msg: raw as FromWebview } : { ok: false, reason: `unknown command ${String(m.command)}` };
    default:
      return { ok: true, msg: raw as FromWebview };
  }
}

export const SESSION_NAME_PATTERN = SESSION_NAME;

/** The server's rule for session names (they become file names). */
const SERVER_SESSION_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/** Why a name cannot be a session name, or null when it can. */
export function sessionNameProblem(name: string): string | null {
  if (!name) return 'Give the conversation a name first.';
  return SERVER_SESSION_NAME.test(name) ? null : 'A session name is 1-64 letters, digits, dots, dashes or underscores (no spaces, not starting with a dot).';
}
