// The server's HTTP shapes as the extension and the panel use them (camelCase, normalised).
// Wire parsing lives in normalize.ts; nothing outside extension/client/ reads raw JSON. The shapes the
// panel shows too are declared in contract/.
import type { ChatMessage, Timings, ToolCall, Usage } from '../../contract/chat.js';
import type { EngineDeathBody } from '../../contract/health.js';

export interface Health {
  /** failed: every engine gave up after crashing again and again (a retry will not help). */
  status: 'ok' | 'loading' | 'failed' | 'error';
  model: string | null;
  slots: number | null;
  /** Why it is not ok, when the server says. */
  reason: string | null;
  /** While loading: how long the server lets a model load (its --engine-ready-timeout-ms), when it says. */
  loadTimeoutMs: number | null;
  /** While an engine is down or has given up: its last death as the server recorded it (Strata only; contract/health.ts). */
  engineDeath: EngineDeathBody | null;
  /** The answer to a health challenge (common/net/key-proof.ts), when the server holds a key and was asked. */
  keyProof?: string;
}

export interface ModelEntry {
  id: string;
  /** Context length the server runs with, when it says. */
  contextLength: number | null;
  /** Longest answer the server allows, when it says. */
  maxOutputTokens: number | null;
  toolCalling: boolean;
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

/**
 * One chat call of StrataClient, in the extension's words (camelCase options such as maxTokens);
 * the client turns it into the OpenAI JSON body that the server parses as its ChatRequest.
 */
export interface ChatCall {
  messages: ChatMessage[];
  model?: string;
  maxTokens?: number;
  temperature?: number;
  tools?: ToolSpec[];
  /** A function's name forces a call of that tool (tool_choice {type: function, function: {name}}). */
  toolChoice?: 'auto' | 'required' | 'none' | { name: string };
  /** reasoning_effort: none switches a reasoning model's thinking off; low / medium / high bound it (absent: the server decides). */
  reasoningEffort?: 'none' | 'low' | 'medium' | 'high';
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
  /** Candidates in one request (the server's `n`: one prompt, its KV shared); 1 when absent. */
  n?: number;
}

/** A piece of a streamed infill: text for one candidate, or its end (finish reason). */
export type InfillStreamEvent =
  | { type: 'text'; index: number; text: string }
  | { type: 'end'; index: number; finishReason: string };

export interface InfillResult {
  content: string;
  tokensPredicted: number | null;
  tokensCached: number | null;
}

/** What a next-edit answer says (POST /v1/edits/next). */
export interface NextEditResult {
  /** The region rewritten (outcome 'edited'), else the region as sent. */
  region: string;
  /** edited: a proposal; unchanged: the model left the region as it was; unparsed: its answer could not be read. */
  outcome: 'edited' | 'unchanged' | 'unparsed';
  finishReason: 'stop' | 'length';
  completionTokens: number;
  /** Predicted outputs: answer tokens that followed the region (the draft), and draft tokens thrown away. */
  acceptedPredictionTokens: number;
  rejectedPredictionTokens: number;
}
