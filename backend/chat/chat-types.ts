// The OpenAI chat shapes as the server takes them in (after validation, api/chat-schema.ts),
// and the tool-call formats templates are written for. Types only: the template, its input
// builder, the tool-call parser and the request schemas all use them.
export interface ToolCall { id: string; type: 'function'; function: { name: string; arguments: string } }
/** An image a client sent (validated: its bytes are a PNG, JPEG, GIF or BMP file, within the limits). */
export interface ImagePart { type: 'image'; data: Uint8Array }
export type ContentPart = { type: 'text'; text: string } | ImagePart | { type: string; [k: string]: unknown };
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}
export interface ToolSpec { type: 'function'; function: { name: string; description?: string; parameters?: unknown } }
export type ToolCallFormat = 'hermes' | 'llama3' | 'mistral' | 'none';
/**
 * How a template writes tool calls: the grammar makes the model write them so and the parser returns
 * their arguments so, which lets the next request re-render exactly the text the model wrote.
 */
export interface CallStyle {
  format: ToolCallFormat;
  /**
   * Mistral's variants: 'array' [TOOL_CALLS][{"name", "arguments", "id"}, …] (Nemo), 'named'
   * [TOOL_CALLS]name[ARGS]{…} (Devstral), 'named-id' [TOOL_CALLS]name[CALL_ID]id[ARGS]{…} (Small 3.2).
   */
  mistral: 'array' | 'named' | 'named-id';
  /** The separators of the JSON the template prints: 'python' (", " and ": ", what tojson writes) or 'compact'. */
  json: 'python' | 'compact';
}
