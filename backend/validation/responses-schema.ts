// POST /v1/responses and /v1/responses/input_tokens bodies (contract/responses.ts) checked field by
// field: parsed JSON in, a typed request out, or ApiError 400 naming the field. Unknown fields are
// ignored as elsewhere; fields the server cannot honour (background runs, image and file inputs,
// hosted tools) are refused by name rather than silently dropped.
import type { SamplingParams } from '../../native/lib/addon.js';
import type {
  ConversationItem, FunctionTool, ImageInputPart, ReasoningEffort, ResponseToolChoice, TextFormat, TextPart,
} from '../../contract/responses.js';
import type { ToolSpec } from '../chat/chat-types.js';
import type { ToolChoice } from './chat-schema.js';
import { checkSchemaLimits } from './grammar-limits.js';
import { ImageCounter, imageFromUrl } from './images.js';
import { parseToolList } from './tool-list.js';
import type { OutputConstraint } from './output-schema.js';
import { REASONING_EFFORTS } from './schemas.js';
import {
  checkArray, checkDepth, checkEnum, checkString, fail, field, get, optBool, optNumber, optString,
  requireObject, reqString, typeName, type Json,
} from './validate.js';

export interface ResponsesRequest {
  model: string | null;
  /** The new input as conversation items (a text input is one user message). */
  input: ConversationItem[];
  instructions: string | null;
  /** As declared (echoed in the response) and as the chat path takes them. */
  declaredTools: FunctionTool[];
  tools: ToolSpec[];
  toolChoice: ToolChoice;
  declaredToolChoice: ResponseToolChoice;
  parallelToolCalls: boolean;
  maxTokens: number | null;
  sampling: SamplingParams;
  /** text.format as given (echoed), and the constraint it puts on the answer (null: free text). */
  textFormat: TextFormat;
  constraint: OutputConstraint | null;
  reasoningEffort: ReasoningEffort | null;
  store: boolean;
  previousResponseId: string | null;
  stream: boolean;
  metadata: Record<string, string>;
}

/** Response ids this server hands out and accepts: a prefix, then letters, digits, _ and - (safe as a file name). */
export const RESPONSE_ID = /^resp_[A-Za-z0-9_-]{1,120}$/;

const MAX_METADATA = 16;

/** A user message's input_image part: a data URL, checked here (kept as the URL: stored responses are JSON). */
function imagePart(part: Json, pp: string, role: string, images: ImageCounter): ImageInputPart {
  if (role !== 'user') fail(field(pp, 'type'), `input_image parts go in user messages, not ${role} messages`, 'unsupported_value');
  images.add(pp);
  if (get(part, 'file_id') !== undefined) fail(field(pp, 'file_id'), 'files are not stored by this server; send the image as a data URL in image_url', 'unsupported_value');
  const url = checkString(get(part, 'image_url'), field(pp, 'image_url'));
  imageFromUrl(url, field(pp, 'image_url'));
  return { type: 'input_image', image_url: url };
}

function textPart(p: unknown, pp: string, role: string): TextPart {
  const part = requireObject(p, pp);
  const type = checkString(get(part, 'type'), field(pp, 'type'));
  if (type === 'input_image' || type === 'input_file' || type === 'input_audio') {
    const where = type === 'input_image' ? ' (input_image parts go in user messages)' : '';
    fail(field(pp, 'type'), `${type} is not supported here${where}: input_text parts`, 'unsupported_value');
  }
  const want = role === 'assistant' ? 'output_text' : 'input_text';
  if (type !== 'input_text' && type !== 'output_text') fail(field(pp, 'type'), `must be ${want}, got ${JSON.stringify(type)}`);
  return { type, text: checkString(get(part, 'text'), field(pp, 'text')) };
}

function textParts(v: unknown[], path: string, role: string): TextPart[] {
  return v.map((p, i) => textPart(p, field(path, i), role));
}

/** A message's parts: text, and input_image parts in user messages. */
function contentParts(v: unknown[], path: string, role: string, images: ImageCounter): Array<TextPart | ImageInputPart> {
  return v.map((p, i) => {
    const pp = field(path, i);
    const part = requireObject(p, pp);
    return get(part, 'type') === 'input_image' ? imagePart(part, pp, role, images) : textPart(part, pp, role);
  });
}

function messageItem(item: Json, path: string, images: ImageCounter): ConversationItem {
  const role = checkEnum(get(item, 'role'), field(path, 'role'), ['user', 'system', 'developer', 'assistant'] as const);
  const raw = get(item, 'content');
  const cp = field(path, 'content');
  if (raw === undefined) fail(cp, 'is required', 'missing_required_parameter');
  const content = typeof raw === 'string' ? raw
    : Array.isArray(raw) ? contentParts(raw, cp, role, images)
      : fail(cp, `must be a string or an array of content parts, got ${typeName(raw)}`);
  return { type: 'message', role, content };
}

function argumentsText(v: unknown, path: string): string {
  const text = checkString(v, path);
  try { checkDepth(JSON.parse(text), path); } catch (e) { if (!(e instanceof SyntaxError)) throw e; }
  return text;
}

function outputText(v: unknown, path: string): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return textParts(v, path, 'tool').map((p) => p.text).join('');
  fail(path, `must be a string or an array of input_text parts, got ${typeName(v)}`);
}

function inputItem(v: unknown, path: string, images: ImageCounter): ConversationItem | null {
  const item = requireObject(v, path);
  const type = get(item, 'type') ?? 'message';
  switch (type) {
    case 'message': return messageItem(item, path, images);
    case 'function_call': {
      const id = optString(item, 'id', path);
      return {
        type: 'function_call', call_id: reqString(item, 'call_id', path, { nonEmpty: true }),
        name: reqString(item, 'name', path, { nonEmpty: true }), arguments: argumentsText(get(item, 'arguments') ?? '{}', field(path, 'arguments')),
        ...(id !== undefined ? { id } : {}),
      };
    }
    case 'function_call_output': {
      const out = get(item, 'output');
      if (out === undefined) fail(field(path, 'output'), 'is required', 'missing_required_parameter');
      return { type: 'function_call_output', call_id: reqString(item, 'call_id', path, { nonEmpty: true }), output: outputText(out, field(path, 'output')) };
    }
    // The model's earlier thinking, sent back by agents: chat templates drop it from past turns, so it is read and left out.
    case 'reasoning': return null;
    default: {
      const got = typeof type === 'string' ? JSON.stringify(type) : typeName(type);
      fail(field(path, 'type'), `must be one of message, function_call, function_call_output, reasoning, got ${got}`, 'unsupported_value');
    }
  }
}

/** `input`: a text (one user message) or a list of items. */
export function parseInput(v: unknown): ConversationItem[] {
  if (v === undefined) fail('input', 'is required', 'missing_required_parameter');
  if (typeof v === 'string') return [{ type: 'message', role: 'user', content: v }];
  const list = checkArray(v, 'input');
  const images = new ImageCounter();
  return list.flatMap((x, i) => inputItem(x, field('input', i), images) ?? []);
}

function parseTools(v: unknown): FunctionTool[] {
  return parseToolList(v, 'tools', (tool, tp) => {
    const type = get(tool, 'type');
    if (type !== 'function') {
      const got = typeof type === 'string' ? JSON.stringify(type) : typeName(type);
      fail(field(tp, 'type'), `only function tools are supported, got ${got}`, 'unsupported_value');
    }
    const name = reqString(tool, 'name', tp);
    const params = get(tool, 'parameters');
    return {
      name, namePath: field(tp, 'name'), schema: params === undefined ? null : { value: params, path: field(tp, 'parameters') },
      tool: {
        type: 'function', name, description: optString(tool, 'description', tp) ?? null,
        parameters: params === undefined ? null : params as Record<string, unknown>, strict: optBool(tool, 'strict', tp) ?? true,
      },
    };
  });
}

function parseToolChoice(v: unknown, tools: FunctionTool[]): ResponseToolChoice {
  if (v === undefined) return tools.length > 0 ? 'auto' : 'none';
  if (typeof v === 'string') {
    const choice = checkEnum(v, 'tool_choice', ['auto', 'none', 'required'] as const);
    if (choice === 'required' && tools.length === 0) fail('tool_choice', 'required needs tools');
    return choice;
  }
  const obj = requireObject(v, 'tool_choice');
  if (get(obj, 'type') !== 'function') fail('tool_choice.type', 'must be function (only function tools are supported)', 'unsupported_value');
  const name = reqString(obj, 'name', 'tool_choice');
  if (!tools.some((t) => t.name === name)) fail('tool_choice.name', `no tool named ${name} in tools`);
  return { type: 'function', name };
}

function parseTextFormat(v: unknown): { format: TextFormat; constraint: OutputConstraint | null } {
  if (v === undefined) return { format: { type: 'text' }, constraint: null };
  const text = requireObject(v, 'text');
  const fv = get(text, 'format');
  if (fv === undefined) return { format: { type: 'text' }, constraint: null };
  const f = requireObject(fv, 'text.format');
  const type = checkEnum(get(f, 'type'), 'text.format.type', ['text', 'json_object', 'json_schema'] as const);
  if (type === 'text') return { format: { type }, constraint: null };
  if (type === 'json_object') {
    return { format: { type }, constraint: { kind: 'json_schema', schema: { type: 'object' }, name: null, strict: true, param: 'text.format' } };
  }
  const name = reqString(f, 'name', 'text.format', { nonEmpty: true });
  if (name.length > 64 || !/^[A-Za-z0-9_-]+$/.test(name)) fail('text.format.name', 'must be 1-64 characters of a-z, A-Z, 0-9, _ and -');
  const schema = requireObject(get(f, 'schema'), 'text.format.schema');
  checkSchemaLimits(schema, 'text.format.schema');
  const strict = optBool(f, 'strict', 'text.format') ?? false;
  const description = optString(f, 'description', 'text.format');
  return {
    format: { type, name, schema, strict, ...(description !== undefined ? { description } : {}) },
    constraint: { kind: 'json_schema', schema, name, strict, param: 'text.format.schema' },
  };
}

function parseMetadata(v: unknown): Record<string, string> {
  if (v === undefined) return {};
  const obj = requireObject(v, 'metadata');
  const keys = Object.keys(obj);
  if (keys.length > MAX_METADATA) fail('metadata', `at most ${MAX_METADATA} keys, got ${keys.length}`);
  for (const k of keys) checkString(obj[k], field('metadata', k), { maxLength: 512 });
  return obj as Record<string, string>;
}

function parseSampling(obj: Json): SamplingParams {
  const s: SamplingParams = {};
  const temperature = optNumber(obj, 'temperature', '', { min: 0, max: 2 });
  const topP = optNumber(obj, 'top_p', '', { min: 0, minExclusive: true, max: 1 });
  if (temperature !== undefined) s.temperature = temperature;
  if (topP !== undefined) s.topP = topP;
  return s;
}

/** A response id from a client: the server's own form, else 400 naming `path`. */
export function checkResponseId(v: unknown, path: string): string {
  const id = checkString(v, path, { nonEmpty: true });
  if (!RESPONSE_ID.test(id)) fail(path, 'is not a response id of this server (resp_ followed by letters, digits, _ or -)');
  return id;
}

export function parseResponsesRequest(body: unknown): ResponsesRequest {
  const obj = requireObject(body, '');
  if (get(obj, 'background') === true) fail('background', 'background responses are not supported', 'unsupported_value');
  if (get(obj, 'conversation') !== undefined) fail('conversation', 'conversations are not supported; continue with previous_response_id', 'unsupported_value');
  const declaredTools = parseTools(get(obj, 'tools'));
  const declaredToolChoice = parseToolChoice(get(obj, 'tool_choice'), declaredTools);
  const { format, constraint } = parseTextFormat(get(obj, 'text'));
  const forced = declaredToolChoice === 'required' || typeof declaredToolChoice === 'object';
  if (forced && constraint) fail('text.format', 'cannot be combined with a tool_choice that forces a tool call');
  const reasoning = get(obj, 'reasoning');
  const effort = reasoning === undefined ? undefined : get(requireObject(reasoning, 'reasoning'), 'effort');
  const previous = get(obj, 'previous_response_id');
  return {
    model: optString(obj, 'model', '') ?? null,
    input: parseInput(get(obj, 'input')),
    instructions: optString(obj, 'instructions', '') ?? null,
    declaredTools,
    tools: declaredTools.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description !== null ? { description: t.description } : {}), ...(t.parameters !== null ? { parameters: t.parameters } : {}) },
    })),
    declaredToolChoice,
    toolChoice: typeof declaredToolChoice === 'object' ? { type: 'function', function: { name: declaredToolChoice.name } } : declaredToolChoice,
    parallelToolCalls: optBool(obj, 'parallel_tool_calls', '') ?? true,
    maxTokens: optNumber(obj, 'max_output_tokens', '', { integer: true, min: 1 }) ?? null,
    sampling: parseSampling(obj),
    textFormat: format,
    constraint,
    reasoningEffort: effort === undefined ? null : checkEnum(effort, 'reasoning.effort', REASONING_EFFORTS),
    store: optBool(obj, 'store', '') ?? true,
    previousResponseId: previous === undefined ? null : checkResponseId(previous, 'previous_response_id'),
    stream: optBool(obj, 'stream', '') ?? false,
    metadata: parseMetadata(get(obj, 'metadata')),
  };
}
