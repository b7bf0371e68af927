// The chat shapes the extension and the panel share (camelCase, as the extension's HTTP client
// turns OpenAI's wire format into them): messages, tool calls, usage and timings.

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

/** An image attached to a user message (pasted or dropped into the panel's message box). */
export interface ImageAttachment {
  id: string;
  /** The file's name, or what the clipboard called it. */
  name: string;
  /** data:image/<type>;base64,... (what OpenAI's image_url carries). */
  dataUrl: string;
  /** The file's size in bytes. */
  bytes: number;
  /** The positions the image takes in the model's prompt; null while counting or when the server cannot say. */
  tokens: number | null;
}

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /** User messages: images sent with the text (as image_url parts after it). */
  images?: ImageAttachment[];
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
