// The chat shapes the extension and the panel share (camelCase, as the extension's HTTP client
// turns OpenAI's wire format into them): messages, tool calls, usage and timings.

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

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number | null;
  /** Tokens the model wrote inside its thinking, when the server says (completion_tokens_details.reasoning_tokens). */
  reasoningTokens?: number;
}

export interface Timings {
  promptMs: number | null;
  predictedMs: number | null;
  predictedPerSecond: number | null;
  promptPerSecond: number | null;
}
