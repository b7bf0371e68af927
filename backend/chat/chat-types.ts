// The OpenAI chat shapes as the server takes them in (after validation, api/chat-schema.ts),
// and the tool-call formats templates are written for. Types only: the template, its input
// builder, the tool-call parser and the request schemas all use them.
export interface ToolCall { id: string; type: 'function'; function: { name: string; arguments: string } }
export type ContentPart = { type: 'text'; text: string } | { type: string; [k: string]: unknown };
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}
export interface ToolSpec { type: 'function'; function: { name: string; description?: string; parameters?: unknown } }
export type ToolCallFormat = 'hermes' | 'llama3' | 'mistral' | 'none';
