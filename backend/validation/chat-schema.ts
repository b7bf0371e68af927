// Validation of chat messages, tools and tool_choice (OpenAI shapes) into backend/chat types.
import type { ChatMessage, ContentPart, ToolCall, ToolSpec } from '../chat/chat-types.js';
import {
  checkArray, checkDepth, checkEnum, checkString, fail, field, get, isRecord, requireObject, typeName, type Json,
} from './validate.js';
import { ImageCounter, imageFromUrl } from './images.js';
import { parseToolList } from './tool-list.js';

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

const ROLES = ['system', 'user', 'assistant', 'tool'] as const;

/** Text parts, and image_url parts (data URLs) in user messages. */
function parseContentParts(v: unknown[], path: string, role: string, images: ImageCounter): ContentPart[] {
  return v.map((p, i) => {
    const pp = field(path, i);
    const part = requireObject(p, pp);
    const type = checkString(get(part, 'type'), field(pp, 'type'));
    if (type === 'image_url') {
      if (role !== 'user') fail(field(pp, 'type'), `image_url parts go in user messages, not ${role} messages`, 'unsupported_value');
      images.add(pp);
      const raw = get(part, 'image_url');
      const up = field(pp, 'image_url');
      // {url, detail?} as OpenAI sends it; a bare string as some clients do.
      const url = typeof raw === 'string' ? raw : checkString(get(requireObject(raw, up), 'url'), field(up, 'url'));
      return imageFromUrl(url, typeof raw === 'string' ? up : field(up, 'url'));
    }
    if (type !== 'text') fail(field(pp, 'type'), `${type} content is not supported (text and image_url)`, 'unsupported_value');
    return { type: 'text', text: checkString(get(part, 'text'), field(pp, 'text')) };
  });
}

/** The JSON a string holds (templates get arguments parsed), or null when it is not JSON. */
function parsedOrNull(text: string): unknown {
  try { return JSON.parse(text); } catch { return null; }
}

function parseToolCalls(v: unknown, path: string): ToolCall[] {
  return checkArray(v, path).map((c, i) => {
    const cp = field(path, i);
    const call = requireObject(c, cp);
    const id = checkString(get(call, 'id'), field(cp, 'id'), { nonEmpty: true });
    const type = get(call, 'type');
    if (type !== undefined && type !== 'function') fail(field(cp, 'type'), 'must be function');
    const fp = field(cp, 'function');
    const fn = requireObject(get(call, 'function'), fp);
    const name = checkString(get(fn, 'name'), field(fp, 'name'), { nonEmpty: true });
    const rawArgs = get(fn, 'arguments') ?? '{}';
    const ap = field(fp, 'arguments');
    // OpenAI sends a JSON string; some clients send the object itself. Templates print either as JSON.
    if (isRecord(rawArgs)) checkDepth(rawArgs, ap);
    const args = isRecord(rawArgs) ? JSON.stringify(rawArgs) : checkString(rawArgs, ap);
    if (!isRecord(rawArgs)) checkDepth(parsedOrNull(args), ap);
    return { id, type: 'function', function: { name, arguments: args } };
  });
}

function parseMessage(v: unknown, path: string, images: ImageCounter): ChatMessage {
  const m = requireObject(v, path);
  let roleValue = get(m, 'role');
  if (roleValue === 'developer') roleValue = 'system';   // OpenAI's newer name for the system role
  const role = checkEnum(roleValue, field(path, 'role'), ROLES);
  const cp = field(path, 'content');
  const rawContent = get(m, 'content');
  let content: ChatMessage['content'];
  if (rawContent === undefined) {
    if (role !== 'assistant') fail(cp, `is required for role ${role}`, 'missing_required_parameter');
    content = null;
  } else if (typeof rawContent === 'string') {
    content = rawContent;
  } else if (Array.isArray(rawContent)) {
    content = parseContentParts(rawContent, cp, role, images);
  } else {
    fail(cp, `must be a string or an array of content parts, got ${typeName(rawContent)}`);
  }
  const msg: ChatMessage = { role, content };
  const name = get(m, 'name');
  if (name !== undefined) msg.name = checkString(name, field(path, 'name'));
  const toolCalls = get(m, 'tool_calls');
  if (toolCalls !== undefined) {
    if (role !== 'assistant') fail(field(path, 'tool_calls'), 'only assistant messages carry tool calls');
    const calls = parseToolCalls(toolCalls, field(path, 'tool_calls'));
    if (calls.length > 0) msg.tool_calls = calls;
  }
  if (role === 'assistant' && content === null && !msg.tool_calls) {
    fail(cp, 'is required unless the message has tool_calls', 'missing_required_parameter');
  }
  if (role === 'tool') {
    const id = get(m, 'tool_call_id');
    if (id === undefined) fail(field(path, 'tool_call_id'), 'is required for role tool', 'missing_required_parameter');
    msg.tool_call_id = checkString(id, field(path, 'tool_call_id'), { nonEmpty: true });
  }
  return msg;
}

export function parseMessages(v: unknown, path = 'messages'): ChatMessage[] {
  if (v === undefined || v === null) fail(path, 'is required', 'missing_required_parameter');
  const list = checkArray(v, path);
  if (list.length === 0) fail(path, 'must contain at least one message');
  const images = new ImageCounter();
  return list.map((m, i) => parseMessage(m, field(path, i), images));
}

export function parseTools(v: unknown, path = 'tools'): ToolSpec[] {
  return parseToolList(v, path, (tool, tp) => {
    const type = get(tool, 'type') ?? 'function';
    if (type !== 'function') fail(field(tp, 'type'), 'must be function');
    const fp = field(tp, 'function');
    const fn = requireObject(get(tool, 'function'), fp);
    const name = checkString(get(fn, 'name'), field(fp, 'name'));
    const spec: ToolSpec = { type: 'function', function: { name } };
    const description = get(fn, 'description');
    if (description !== undefined) spec.function.description = checkString(description, field(fp, 'description'));
    const parameters = get(fn, 'parameters');
    // An object: parseToolList checks it (after the name) with its limits.
    if (parameters !== undefined) spec.function.parameters = parameters as Json;
    return { name, namePath: field(fp, 'name'), schema: parameters === undefined ? null : { value: parameters, path: field(fp, 'parameters') }, tool: spec };
  });
}

export function parseToolChoice(v: unknown, tools: ToolSpec[], path = 'tool_choice'): ToolChoice {
  if (v === undefined) return tools.length > 0 ? 'auto' : 'none';
  if (typeof v === 'string') {
    const choice = checkEnum(v, path, ['auto', 'none', 'required'] as const);
    if (choice === 'required' && tools.length === 0) fail(path, 'required needs tools');
    return choice;
  }
  const obj: Json = requireObject(v, path);
  if (get(obj, 'type') !== 'function') fail(field(path, 'type'), 'must be function');
  const fn = requireObject(get(obj, 'function'), field(path, 'function'));
  const name = checkString(get(fn, 'name'), field(field(path, 'function'), 'name'));
  if (!tools.some((t) => t.function.name === name)) {
    fail(field(field(path, 'function'), 'name'), `no tool named ${name} in tools`);
  }
  return { type: 'function', function: { name } };
}
