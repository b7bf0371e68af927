// POST /v1/responses and /v1/responses/input_tokens bodies (contract/responses.ts) checked field by
// field: parsed JSON in, a typed request out, or ApiError 400 naming the field. Unknown fields are
// ignored as elsewhere; fields the server cannot honour (background runs, image and file inputs,
// hosted tools) are refused by name rather than silently dropped.
import type { SamplingParams } from '../../native/lib/addon.js';
import type {
  ConversationItem, DeclaredTool, FunctionTool, ImageInputPart, NamespaceTool, ReasoningEffort, ResponseToolChoice, TextFormat, TextPart,
} from '../../contract/responses.js';
import type { ToolSpec } from '../chat/chat-types.js';
import type { ToolChoice } from './chat-schema.js';
import { checkSchemaLimits } from './grammar-limits.js';
import { ImageCounter, imageFromUrl } from './images.js';
import { checkToolList } from './tool-list.js';
import { parseSampling } from './sampling-schema.js';
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
  /** As declared (echoed in the response) and as the chat path takes them (a namespace's members qualified). */
  declaredTools: DeclaredTool[];
  tools: ToolSpec[];
  /** Qualified name -> namespace and own name: how the model's calls go back to the client. */
  toolMembers: Record<string, { namespace: string; name: string }>;
  /** Types of the tools left out of the prompt: hosted tools this server cannot run. */
  omittedTools: string[];
  /** Extra output the client asked for (reasoning.encrypted_content, ...): accepted; see docs/server.md. */
  include: string[];
  /** A client's hint that requests share a prefix (Codex sends its session id); accepted. */
  promptCacheKey: string | null;
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
      const namespace = optString(item, 'namespace', path);
      return {
        ...(namespace !== undefined ? { namespace } : {}),
        type: 'function_call', call_id: reqString(item, 'call_id', path, { nonEmpty: true }),
        name: reqString(item, 'name', path, { nonEmpty: true }), arguments: argumentsText(get(item, 'arguments') ?? '{}', field(path, 'arguments')),
        ...(id !== undefined ? { id } : {}),
      };
    }
    case 'function_call_output': {
      const out = get(item, 'output');
      if (out === undefined) fail(field(path, 'output'), 'is required', 'missing_required_parameter');
      const output = outputText(out, field(path, 'output'));
      // An output no call asked for names its tool instead of a call (Codex adds its goal's objective so).
      if (get(item, 'call_id') === undefined && get(item, 'name') !== undefined) {
        const namespace = optString(item, 'namespace', path);
        return { type: 'function_call_output', name: reqString(item, 'name', path, { nonEmpty: true }), ...(namespace !== undefined ? { namespace } : {}), output };
      }
      return { type: 'function_call_output', call_id: reqString(item, 'call_id', path, { nonEmpty: true }), output };
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

/** A Responses request's tools: as declared (echoed back), and as the model is offered them. */
interface ResponseTools {
  declared: DeclaredTool[];
  /** Function tools, a namespace's members under their qualified names (namespace__name). */
  offered: FunctionTool[];
  /** Qualified name -> the namespace and the member's own name, for the calls the model writes. */
  members: Record<string, { namespace: string; name: string }>;
  /** Types of tools the server cannot run (hosted: web_search, file_search, ...): left out of the prompt. */
  omitted: string[];
}

/** A namespace member as the model sees it: the qualified name Codex itself uses for MCP tools. */
export function qualifiedName(namespace: string, name: string): string {
  return `${namespace}__${name}`;
}

function functionTool(tool: Json, tp: string, name: string): FunctionTool {
  const params = get(tool, 'parameters');
  return {
    type: 'function', name, description: optString(tool, 'description', tp) ?? null,
    parameters: params === undefined ? null : params as Record<string, unknown>, strict: optBool(tool, 'strict', tp) ?? true,
  };
}

function parseTools(v: unknown): ResponseTools {
  const out: ResponseTools = { declared: [], offered: [], members: {}, omitted: [] };
  if (v === undefined) return out;
  // Each function, top-level or a namespace's member, with where it was declared and under which namespace.
  const entries: Array<{ value: unknown; path: string; namespace: string | null; declaredAt: number }> = [];
  checkArray(v, 'tools').forEach((t, i) => {
    const tp = field('tools', i);
    const tool = requireObject(t, tp);
    const type = get(tool, 'type');
    if (typeof type !== 'string') fail(field(tp, 'type'), `must be a string, got ${typeName(type)}`);
    if (type === 'function') {
      entries.push({ value: tool, path: tp, namespace: null, declaredAt: out.declared.length });
      out.declared.push(null as never);
    } else if (type === 'namespace') {
      const namespace = reqString(tool, 'name', tp, { nonEmpty: true });
      const np = field(tp, 'tools');
      const at = out.declared.length;
      out.declared.push({ type: 'namespace', name: namespace, description: optString(tool, 'description', tp) ?? null, tools: [] });
      checkArray(get(tool, 'tools'), np).forEach((m, j) => {
        const mp = field(np, j);
        const member = requireObject(m, mp);
        if (get(member, 'type') !== 'function') fail(field(mp, 'type'), 'must be function (a namespace groups function tools)', 'unsupported_value');
        entries.push({ value: member, path: mp, namespace, declaredAt: at });
      });
    } else {
      out.omitted.push(type);
    }
  });
  const read = checkToolList(entries, 'tools', (tool, tp) => {
    const entry = entries.find((e) => e.path === tp)!;
    const own = reqString(tool, 'name', tp);
    const name = entry.namespace === null ? own : qualifiedName(entry.namespace, own);
    const params = get(tool, 'parameters');
    return {
      name, namePath: field(tp, 'name'), schema: params === undefined ? null : { value: params, path: field(tp, 'parameters') },
      tool: { entry, own, offered: functionTool(tool, tp, name) },
    };
  });
  for (const { entry, own, offered } of read) {
    out.offered.push(offered);
    const declared = out.declared[entry.declaredAt];
    if (entry.namespace === null) out.declared[entry.declaredAt] = offered;
    else {
      (declared as NamespaceTool).tools.push({ ...offered, name: own });
      out.members[offered.name] = { namespace: entry.namespace, name: own };
    }
  }
  return out;
}

function parseToolChoice(v: unknown, tools: FunctionTool[]): ResponseToolChoice {
  if (v === undefined) return tools.length > 0 ? 'auto' : 'none';
  if (typeof v === 'string') {
    const choice = checkEnum(v, 'tool_choice', ['auto', 'none', 'required'] as const);
    if (choice === 'required' && tools.length === 0) fail('tool_choice', 'required needs tools');
    return choice;
  }
  const obj = requireObject(v, 'tool_choice');
  const type = get(obj, 'type');
  if (type !== 'function') {
    const got = typeof type === 'string' ? `: this server cannot run ${JSON.stringify(type)} tools` : '';
    fail('tool_choice.type', `must be function${got}`, 'unsupported_value');
  }
  const own = reqString(obj, 'name', 'tool_choice');
  const namespace = optString(obj, 'namespace', 'tool_choice');
  const name = namespace === undefined ? own : qualifiedName(namespace, own);
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

/** What `include` may ask for: OpenAI's values, each accepted (the server returns what it has of them). */
const INCLUDABLE = [
  'reasoning.encrypted_content', 'message.output_text.logprobs', 'message.input_image.image_url', 'file_search_call.results',
  'web_search_call.results', 'web_search_call.action.sources', 'code_interpreter_call.outputs', 'computer_call_output.output.image_url',
] as const;

function parseInclude(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  return checkArray(v, 'include').map((x, i) => checkEnum(x, field('include', i), INCLUDABLE));
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
  const tools = parseTools(get(obj, 'tools'));
  const declaredToolChoice = parseToolChoice(get(obj, 'tool_choice'), tools.offered);
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
    declaredTools: tools.declared,
    toolMembers: tools.members,
    omittedTools: tools.omitted,
    include: parseInclude(get(obj, 'include')),
    promptCacheKey: get(obj, 'prompt_cache_key') === undefined ? null : checkString(get(obj, 'prompt_cache_key'), 'prompt_cache_key', { maxLength: 1024 }),
    tools: tools.offered.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description !== null ? { description: t.description } : {}), ...(t.parameters !== null ? { parameters: t.parameters } : {}) },
    })),
    declaredToolChoice,
    toolChoice: typeof declaredToolChoice === 'object' ? { type: 'function', function: { name: declaredToolChoice.name } } : declaredToolChoice,
    parallelToolCalls: optBool(obj, 'parallel_tool_calls', '') ?? true,
    maxTokens: optNumber(obj, 'max_output_tokens', '', { integer: true, min: 1 }) ?? null,
    sampling: parseSampling(obj, ['temperature', 'top_p']),
    textFormat: format,
    constraint,
    reasoningEffort: effort === undefined ? null : checkEnum(effort, 'reasoning.effort', REASONING_EFFORTS),
    store: optBool(obj, 'store', '') ?? true,
    previousResponseId: previous === undefined ? null : checkResponseId(previous, 'previous_response_id'),
    stream: optBool(obj, 'stream', '') ?? false,
    metadata: parseMetadata(get(obj, 'metadata')),
  };
}
