// OpenAI's Responses API (/v1/responses) as Strata speaks it: the items a conversation is made of
// (what clients send as `input`, what the server answers as `output`, and what a stored response
// keeps to be continued with previous_response_id), the response object, its usage, the stream's
// events, and the response object's runtime check (responseSchema). The server builds these in
// backend/http/responses-shapes.ts; backend/validation/responses-schema.ts reads the request.
import * as z from 'zod/mini';
import { checkBody } from './check.js';

// --- items ---------------------------------------------------------------------------------

/** Text of a message: input_text from the client, output_text from the model. */
export interface TextPart { type: 'input_text' | 'output_text'; text: string }

/** An image in a user message: a data URL (the server fetches nothing a request points at). */
export interface ImageInputPart { type: 'input_image'; image_url: string }

/** A message of the conversation (developer is OpenAI's newer name for system). */
export interface MessageInput {
  type: 'message';
  role: 'user' | 'system' | 'developer' | 'assistant';
  content: string | Array<TextPart | ImageInputPart>;
  /** Given by the server when the response that read it is stored (input_items lists it by this id). */
  id?: string;
}

/**
 * A tool's output: the answer to the function_call with its call_id, or an output the client adds
 * that no call asked for, named by its tool instead (Codex sends its goal's objective so).
 */
export interface FunctionCallOutputItem { type: 'function_call_output'; call_id?: string; name?: string; namespace?: string; output: string; id?: string }

export interface OutputText { type: 'output_text'; text: string; annotations: unknown[]; logprobs: unknown[] }

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface MessageItem { type: 'message'; id: string; status: ItemStatus; role: 'assistant'; content: OutputText[] }

/** The model's thinking (a `<think>` block), as reasoning_text. */
export interface ReasoningItem {
  type: 'reasoning'; id: string; status: ItemStatus; summary: unknown[];
  content: Array<{ type: 'reasoning_text'; text: string }>;
}

export interface FunctionCallItem {
  type: 'function_call'; id: string; status: ItemStatus; call_id: string; name: string;
  /** The namespace tool the function belongs to (its name is then the member's own). */
  namespace?: string;
  /** JSON text of the arguments. */
  arguments: string;
}

export type OutputItem = MessageItem | ReasoningItem | FunctionCallItem;

/** A function call as a client sends it back (the call_id pairs it with its function_call_output). */
export interface FunctionCallInput { type: 'function_call'; call_id: string; name: string; arguments: string; id?: string; namespace?: string }

/** What a conversation is made of: every input item and every output item, in order. */
export type ConversationItem = MessageInput | FunctionCallInput | FunctionCallOutputItem | OutputItem;

// --- the response --------------------------------------------------------------------------

export interface ResponseUsage {
  input_tokens: number;
  /** cached_tokens: prompt tokens whose KV was reused (a continued conversation's earlier turns). */
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  /** reasoning_tokens: tokens the model wrote inside its thinking. */
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** A function tool as the Responses API declares it (flat: no `function` wrapper). */
export interface FunctionTool { type: 'function'; name: string; description: string | null; parameters: Record<string, unknown> | null; strict: boolean }

/** Functions grouped under a name (Codex puts each MCP server's tools in one). */
export interface NamespaceTool { type: 'namespace'; name: string; description: string | null; tools: FunctionTool[] }

export type DeclaredTool = FunctionTool | NamespaceTool;

export type ResponseToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict: boolean; description?: string };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponseObject {
  id: string;
  object: 'response';
  /** Seconds since the epoch. */
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: ReasoningEffort | null; summary: null };
  store: boolean;
  temperature: number | null;
  top_p: number | null;
  text: { format: TextFormat };
  tool_choice: ResponseToolChoice;
  tools: DeclaredTool[];
  usage: ResponseUsage | null;
  metadata: Record<string, string>;
}

/** DELETE /v1/responses/{id}. */
export interface ResponseDeleted { id: string; object: 'response'; deleted: true }

/** An item of GET /v1/responses/{id}/input_items: what the response read, each with its id. */
export type InputItem =
  | { type: 'message'; id: string; status: ItemStatus; role: MessageInput['role']; content: Array<{ type: string } & Record<string, unknown>> }
  | (FunctionCallInput & { id: string; status: ItemStatus })
  | (FunctionCallOutputItem & { id: string; status: ItemStatus })
  | OutputItem;

/** GET /v1/responses/{id}/input_items: one page, in the order asked for. */
export interface InputItemList { object: 'list'; data: InputItem[]; first_id: string | null; last_id: string | null; has_more: boolean }

/** POST /v1/responses/input_tokens. */
export interface InputTokensBody { object: 'response.input_tokens'; input_tokens: number }

/** Stream events, in order: created, in_progress, per item (added, parts, deltas, done), then completed / incomplete / failed. */
export type ResponseStreamEvent = { type: string; sequence_number: number } & Record<string, unknown>;

// --- its runtime check ---------------------------------------------------------------------

const num = z.number();
const status = z.enum(['in_progress', 'completed', 'incomplete']);
const outputItem: z.ZodMiniType<OutputItem> = z.union([
  z.object({
    type: z.literal('message'), id: z.string(), status, role: z.literal('assistant'),
    content: z.array(z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()), logprobs: z.array(z.unknown()) })),
  }),
  z.object({
    type: z.literal('reasoning'), id: z.string(), status, summary: z.array(z.unknown()),
    content: z.array(z.object({ type: z.literal('reasoning_text'), text: z.string() })),
  }),
  z.object({ type: z.literal('function_call'), id: z.string(), status, call_id: z.string(), name: z.string(), arguments: z.string() }),
]);
const usage: z.ZodMiniType<ResponseUsage> = z.object({
  input_tokens: num, input_tokens_details: z.object({ cached_tokens: num }),
  output_tokens: num, output_tokens_details: z.object({ reasoning_tokens: num }), total_tokens: num,
});
const textFormat: z.ZodMiniType<TextFormat> = z.union([
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), name: z.string(), schema: z.record(z.string(), z.unknown()), strict: z.boolean(), description: z.optional(z.string()) }),
]);

export const responseSchema: z.ZodMiniType<ResponseObject> = z.object({
  id: z.string(),
  object: z.literal('response'),
  created_at: num,
  status: z.enum(['in_progress', 'completed', 'incomplete', 'failed']),
  error: z.nullable(z.object({ code: z.string(), message: z.string() })),
  incomplete_details: z.nullable(z.object({ reason: z.literal('max_output_tokens') })),
  instructions: z.nullable(z.string()),
  max_output_tokens: z.nullable(num),
  model: z.string(),
  output: z.array(outputItem),
  parallel_tool_calls: z.boolean(),
  previous_response_id: z.nullable(z.string()),
  reasoning: z.object({ effort: z.nullable(z.enum(['none', 'minimal', 'low', 'medium', 'high'])), summary: z.null() }),
  store: z.boolean(),
  temperature: z.nullable(num),
  top_p: z.nullable(num),
  text: z.object({ format: textFormat }),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), name: z.string() })]),
  tools: z.array(z.object({
    type: z.literal('function'), name: z.string(), description: z.nullable(z.string()),
    parameters: z.nullable(z.record(z.string(), z.unknown())), strict: z.boolean(),
  })),
  usage: z.nullable(usage),
  metadata: z.record(z.string(), z.string()),
});

export function parseResponse(raw: unknown, what = 'POST /v1/responses'): ResponseObject {
  return checkBody(responseSchema, raw, what);
}
