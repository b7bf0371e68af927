// The server's HTTP shapes as the extension and the panel use them (camelCase, normalised).
// Wire parsing lives in normalize.ts; nothing outside extension/api/ reads raw JSON.

export interface Health {
  /** failed: every engine gave up after crashing again and again (a retry will not help). */
  status: 'ok' | 'loading' | 'failed' | 'error';
  model: string | null;
  slots: number | null;
  /** Why it is not ok, when the server says. */
  reason: string | null;
}

export interface ModelEntry {
  id: string;
  /** Context length the server runs with, when it says. */
  contextLength: number | null;
  /** Longest answer the server allows, when it says. */
  maxOutputTokens: number | null;
  toolCalling: boolean;
}

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

export interface ChatMessage {
  role: ChatRole;
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  name?: string;
}

export interface ToolSpec {
  name: string;
  description: string;
  parameters: object | undefined;
}

/**
 * Answer length cap for the panel chat and @strata, so a model that never stops cannot hold a slot
 * forever; room for a reasoning model's thinking too (the server clamps it to the slot's context).
 */
export const CHAT_MAX_TOKENS = 4096;

export interface ChatRequest {
  messages: ChatMessage[];
  model?: string;
  maxTokens?: number;
  temperature?: number;
  tools?: ToolSpec[];
  toolChoice?: 'auto' | 'required' | 'none';
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number | null;
}

export interface Timings {
  promptMs: number | null;
  predictedMs: number | null;
  predictedPerSecond: number | null;
  promptPerSecond: number | null;
}

/** One step of a streamed chat answer. */
export type ChatStreamEvent =
  | { type: 'text'; text: string }
  | { type: 'toolCall'; call: ToolCall }
  | { type: 'done'; finishReason: string | null; usage: Usage | null; timings: Timings | null };

export interface InfillRequest {
  prefix: string;
  suffix: string;
  extra: Array<{ filename: string; text: string }>;
  maxTokens: number;
  maxPredictMs: number;
  /** Latest wins: the server drops older requests with the same key (the document's URI). */
  supersedeKey?: string;
}

export interface InfillResult {
  content: string;
  tokensPredicted: number | null;
  tokensCached: number | null;
}

export interface SlotMetric {
  slot: number;
  replica: number | null;
  state: string;
  heldTokens: number;
  requestId: string | null;
  tokS: number | null;
}

export interface RequestRecord {
  id: string | null;
  time: number | null;
  durationMs: number | null;
  finish: string | null;
  promptTokens: number | null;
  reusedTokens: number | null;
  outputTokens: number | null;
  promptMs: number | null;
  decodeMs: number | null;
  decodeTokS: number | null;
}

export interface ConversationCacheMetric {
  parked: number;
  bytes: number;
  budget: number;
  hits: number;
  misses: number;
  evictions: number;
}

export interface EngineMetric {
  replica: number;
  epoch: number;
  pid: number | null;
  alive: boolean;
  restarts: number;
  devices: string[];
}

export interface Metrics {
  state: string;
  queued: number;
  admitting: number;
  running: number;
  finishing: number;
  slots: SlotMetric[];
  requests: RequestRecord[];
  totals: Record<string, number>;
  cache: ConversationCacheMetric;
  engines: EngineMetric[];
  staleFrames: number;
}

export interface DeviceMemory {
  name: string;
  description: string;
  type: string;
  replica: number | null;
  memoryFree: number | null;
  memoryTotal: number | null;
  layers: number | null;
}

export interface StepTraceView {
  step: number;
  t: number;
  buildMs: number;
  decodeMs: number;
  sampleMs: number;
  detokMs: number;
  decodeTokens: number;
  promptTokens: number;
  sequences: number;
}

/** One request's timeline; every time is ms after the server accepted it (null = never reached). */
export interface RequestTraceView {
  id: string;
  kind: string | null;
  replica: number | null;
  slot: number | null;
  finish: string | null;
  error: string | null;
  /** When the server accepted it (ms since epoch). */
  accepted: number | null;
  promptTokens: number | null;
  reused: number;
  restored: boolean;
  generated: number | null;
  /** Handed to an engine (left the server's queue). */
  dispatched: number | null;
  /** Got a slot in the engine. */
  admitted: number | null;
  promptDone: number | null;
  firstToken: number | null;
  finished: number | null;
  promptLegs: Array<{ t: number; tokens: number; ms: number }>;
}

export interface Traces {
  requests: RequestTraceView[];
  steps: StepTraceView[];
}

export interface SessionInfo {
  name: string;
  tokens: number | null;
  bytes: number | null;
  model: string | null;
  savedAt: number | null;
  path: string | null;
  messages: number | null;
}

export interface RestoredSession {
  name: string;
  /** The conversation, when the server returns it (it needs it to continue the chat). */
  messages: ChatMessage[] | null;
  tokens: number | null;
}
