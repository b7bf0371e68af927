// Anthropic's Messages API request (POST /v1/messages, /v1/messages/count_tokens) validated into
// the chat types the OpenAI route uses: system text and content blocks become chat messages
// (tool_use blocks assistant tool calls, tool_result blocks tool messages), tools and tool_choice
// OpenAI-style. Thinking blocks sent back are dropped (the panel never resends thinking either).
import type { SamplingParams } from '../../native/lib/addon.js';
import type { ChatMessage, ContentPart, ToolCall, ToolSpec } from '../chat/chat-types.js';
import { decodeBase64Image, ImageCounter } from './images.js';
import type { ToolChoice } from './chat-schema.js';
import {
  checkArray, checkDepth, checkEnum, checkNumber, checkString, fail, field, get, isRecord, optBool, optNumber, optString,
  requireObject, typeName, type Json,
} from './validate.js';
import { checkToolList, type NameRule } from './tool-list.js';
import { parseSampling } from './sampling-schema.js';

export interface MessagesRequest {
  model: string | null;
  maxTokens: number;
  messages: ChatMessage[];
  tools: ToolSpec[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  stop: string[];
  stream: boolean;
  sampling: SamplingParams;
  templateKwargs: Record<string, unknown>;
  /** thinking.budget_tokens: thinking tokens before the server ends the thinking; null: the effort's or the server's --reasoning-budget. */
  thinkingBudget: number | null;
  /** Types of the server tools left out of the prompt (Anthropic runs them; this server cannot). */
  omittedTools: string[];
  /** output_config.effort as a reasoning effort (its budget: --reasoning-effort-budgets); null when absent. */
  effort: 'low' | 'medium' | 'high' | null;
}

/** Anthropic's rule for tool names (no '.'). */
const ANTHROPIC_NAMES: NameRule = { pattern: /^[A-Za-z0-9_-]{1,64}$/, says: 'must be 1-64 characters of a-z, A-Z, 0-9, _ -' };
const MAX_STOP = 8;

function textOf(v: unknown, path: string): string {
  if (typeof v === 'string') return v;
  return checkArray(v, path).map((b, i) => {
    const bp = field(path, i);
    const block = requireObject(b, bp);
    const type = checkString(get(block, 'type'), field(bp, 'type'));
    if (type !== 'text') fail(field(bp, 'type'), `must be text here, got ${JSON.stringify(type)}`, 'unsupported_value');
    checkCacheControl(block, bp);
    return checkString(get(block, 'text'), field(bp, 'text'));
  }).join('');
}

/**
 * cache_control on a block or tool: Anthropic's prompt-cache breakpoint. The server reuses every
 * prefix it holds without being told, so a well-formed one changes nothing; a malformed one is a 400.
 */
function checkCacheControl(obj: Json, path: string): void {
  const v = get(obj, 'cache_control');
  if (v === undefined || v === null) return;
  const cp = field(path, 'cache_control');
  const c = requireObject(v, cp);
  checkEnum(get(c, 'type'), field(cp, 'type'), ['ephemeral'] as const);
  const ttl = get(c, 'ttl');
  if (ttl !== undefined) checkEnum(ttl, field(cp, 'ttl'), ['5m', '1h'] as const);
}

/**
 * The system blocks without the ones that change per session but say nothing to the model: Claude
 * Code's first block, `x-anthropic-billing-header: cc_version=…; …`, whose last part differs each
 * session, would otherwise put a new token at the front of every prompt and cost the reuse of all
 * that follows it (docs/server.md lists what is left out).
 */
function withoutVolatileBlocks(system: unknown): unknown {
  if (!Array.isArray(system)) return system;
  return system.filter((b) => !(isRecord(b) && b.type === 'text' && typeof b.text === 'string' && b.text.startsWith('x-anthropic-billing-header:')));
}

/**
 * System messages before the first assistant turn join the system prompt; later ones keep their
 * place. Claude Code sends its environment (working folder, deferred tools, agents, skills, the date:
 * the same for every session in a project on a day) as a system message after the task, so in place
 * each new session's task would come before it and cost the reuse of its ~2K tokens; joined, a new
 * session reads only its task. Every turn of a session has the same early messages, so the prompt
 * stays a prefix of the next turn's.
 */
function joinEarlySystem(messages: ChatMessage[]): ChatMessage[] {
  const firstAssistant = messages.findIndex((m) => m.role === 'assistant');
  const end = firstAssistant < 0 ? messages.length : firstAssistant;
  const early = messages.slice(0, end);
  const system = early.filter((m) => m.role === 'system');
  if (system.length === 0 || (system.length === 1 && early[0] === system[0])) return messages;
  const joined: ChatMessage = { role: 'system', content: system.map((m) => m.content).join('\n\n') };
  return [joined, ...early.filter((m) => m.role !== 'system'), ...messages.slice(end)];
}

/** One Anthropic message -> chat messages (a user turn with tool results is several). */
function convertMessage(v: unknown, path: string, ids: Set<string>, images: ImageCounter): ChatMessage[] {
  const m = requireObject(v, path);
  // system messages inside messages (Claude Code sends them between turns): see joinEarlySystem.
  const role = checkEnum(get(m, 'role'), field(path, 'role'), ['user', 'assistant', 'system'] as const);
  const cp = field(path, 'content');
  const content = get(m, 'content');
  if (content === undefined) fail(cp, 'is required', 'missing_required_parameter');
  if (role === 'system') return [{ role, content: textOf(content, cp) }];
  if (typeof content === 'string') return [{ role, content }];
  const blocks = checkArray(content, cp);
  let text = '';
  // With an image block, the user turn is parts: the text before and after each image.
  const parts: ContentPart[] = [];
  const calls: ToolCall[] = [];
  const results: ChatMessage[] = [];
  blocks.forEach((b, i) => {
    const bp = field(cp, i);
    const block = requireObject(b, bp);
    const type = checkString(get(block, 'type'), field(bp, 'type'));
    checkCacheControl(block, bp);
    switch (type) {
      case 'text':
        text += checkString(get(block, 'text'), field(bp, 'text'));
        break;
      case 'image': {
        if (role !== 'user') fail(field(bp, 'type'), 'image blocks belong to user messages');
        images.add(bp);
        const sp = field(bp, 'source');
        const source = requireObject(get(block, 'source'), sp);
        const kind = checkString(get(source, 'type'), field(sp, 'type'));
        if (kind === 'url') fail(field(sp, 'type'), 'url image sources are not fetched: the server fetches nothing a request points at; send the image as a base64 source', 'remote_image_not_supported');
        if (kind !== 'base64') fail(field(sp, 'type'), `must be base64, got ${JSON.stringify(kind)}`, 'unsupported_value');
        const media = checkString(get(source, 'media_type'), field(sp, 'media_type'));
        if (!media.startsWith('image/')) fail(field(sp, 'media_type'), `must be an image type (image/png, image/jpeg, ...), got ${JSON.stringify(media)}`);
        if (text !== '') parts.push({ type: 'text', text });
        text = '';
        parts.push({ type: 'image', data: decodeBase64Image(checkString(get(source, 'data'), field(sp, 'data')), field(sp, 'data')) });
        break;
      }
      case 'thinking': case 'redacted_thinking':
        if (role !== 'assistant') fail(field(bp, 'type'), `${type} blocks belong to assistant messages`);
        break;  // never sent back to the model
      case 'tool_use': {
        if (role !== 'assistant') fail(field(bp, 'type'), 'tool_use blocks belong to assistant messages');
        const id = checkString(get(block, 'id'), field(bp, 'id'), { nonEmpty: true });
        const name = checkString(get(block, 'name'), field(bp, 'name'), { nonEmpty: true });
        const input = get(block, 'input') ?? {};
        if (!isRecord(input)) fail(field(bp, 'input'), `must be an object, got ${typeName(input)}`);
        checkDepth(input, field(bp, 'input'));
        ids.add(id);
        calls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(input) } });
        break;
      }
      case 'tool_result': {
        if (role !== 'user') fail(field(bp, 'type'), 'tool_result blocks belong to user messages');
        const id = checkString(get(block, 'tool_use_id'), field(bp, 'tool_use_id'), { nonEmpty: true });
        if (!ids.has(id)) fail(field(bp, 'tool_use_id'), `no earlier tool_use block has the id ${JSON.stringify(id)}`);
        const raw = get(block, 'content');
        let out = raw === undefined ? '' : textOf(raw, field(bp, 'content'));
        if (optBool(block, 'is_error', bp)) out = `Error: ${out}`;
        results.push({ role: 'tool', content: out, tool_call_id: id });
        break;
      }
      default:
        fail(field(bp, 'type'), `${JSON.stringify(type)} content is not supported (text, image, tool_use, tool_result, thinking)`, 'unsupported_value');
    }
  });
  if (role === 'assistant') {
    if (calls.length === 0) return [{ role, content: text }];
    return [{ role, content: text === '' ? null : text, tool_calls: calls }];
  }
  if (parts.length > 0) {
    if (text !== '') parts.push({ type: 'text', text });
    return [...results, { role: 'user' as const, content: parts }];
  }
  return [...results, ...(text !== '' || results.length === 0 ? [{ role: 'user' as const, content: text }] : [])];
}

/**
 * The client's tools, and the types of the server tools among them (web_search_20250305, ...):
 * Anthropic runs those itself, this server cannot, so they are left out of the prompt.
 */
function parseTools(v: unknown): { tools: ToolSpec[]; omitted: string[] } {
  if (v === undefined) return { tools: [], omitted: [] };
  const own: Array<{ value: unknown; path: string }> = [];
  const omitted: string[] = [];
  checkArray(v, 'tools').forEach((t, i) => {
    const tp = field('tools', i);
    const type = get(requireObject(t, tp), 'type');
    if (type === undefined || type === null || type === 'custom') own.push({ value: t, path: tp });
    else omitted.push(checkString(type, field(tp, 'type')));
  });
  return { omitted, tools: checkToolList(own, 'tools', (tool, tp) => {
    const name = checkString(get(tool, 'name'), field(tp, 'name'));
    checkCacheControl(tool, tp);
    // input_schema is required: parseToolList checks it is an object (after the name) with its limits.
    const spec: ToolSpec = { type: 'function', function: { name, parameters: get(tool, 'input_schema') as Json } };
    const description = optString(tool, 'description', tp);
    if (description !== undefined) spec.function.description = description;
    return { name, namePath: field(tp, 'name'), schema: { value: spec.function.parameters, path: field(tp, 'input_schema') }, tool: spec };
  }, ANTHROPIC_NAMES) };
}

function parseToolChoice(v: unknown, tools: ToolSpec[]): { choice: ToolChoice; parallel: boolean } {
  if (v === undefined) return { choice: tools.length > 0 ? 'auto' : 'none', parallel: true };
  const c = requireObject(v, 'tool_choice');
  const type = checkEnum(get(c, 'type'), 'tool_choice.type', ['auto', 'any', 'tool', 'none'] as const);
  const parallel = !(optBool(c, 'disable_parallel_tool_use', 'tool_choice') ?? false);
  if (type !== 'none' && tools.length === 0) fail('tool_choice', `${type} needs tools`);
  if (type === 'auto') return { choice: 'auto', parallel };
  if (type === 'none') return { choice: 'none', parallel };
  if (type === 'any') return { choice: 'required', parallel };
  const name = checkString(get(c, 'name'), 'tool_choice.name');
  if (!tools.some((t) => t.function.name === name)) fail('tool_choice.name', `no tool named ${name} in tools`);
  return { choice: { type: 'function', function: { name } }, parallel: false };
}

/** The conversation part, shared with count_tokens (which has no max_tokens). */
export function parseConversation(obj: Json): Pick<MessagesRequest, 'messages' | 'tools' | 'toolChoice' | 'parallelToolCalls' | 'templateKwargs' | 'thinkingBudget' | 'effort' | 'omittedTools'> {
  const raw = get(obj, 'messages');
  if (raw === undefined) fail('messages', 'is required', 'missing_required_parameter');
  const list = checkArray(raw, 'messages');
  if (list.length === 0) fail('messages', 'must contain at least one message');
  const messages: ChatMessage[] = [];
  const system = get(obj, 'system');
  if (system !== undefined) {
    const text = textOf(withoutVolatileBlocks(system), 'system');
    if (text !== '') messages.push({ role: 'system', content: text });
  }
  const ids = new Set<string>();
  const images = new ImageCounter();
  list.forEach((m, i) => messages.push(...convertMessage(m, field('messages', i), ids, images)));
  const conversation = joinEarlySystem(messages);
  const { tools, omitted: omittedTools } = parseTools(get(obj, 'tools'));
  const { choice, parallel } = parseToolChoice(get(obj, 'tool_choice'), tools);
  // thinking: {type: "enabled" | "adaptive" | "disabled"} -> the templates' enable_thinking switch
  // (adaptive: the model thinks as its template decides, within the effort's budget).
  const templateKwargs: Record<string, unknown> = {};
  const thinking = get(obj, 'thinking');
  let thinkingBudget: number | null = null;
  if (thinking !== undefined) {
    const t = requireObject(thinking, 'thinking');
    const type = checkEnum(get(t, 'type'), 'thinking.type', ['enabled', 'adaptive', 'disabled'] as const);
    templateKwargs.enable_thinking = type !== 'disabled';
    if (type === 'enabled') thinkingBudget = optNumber(t, 'budget_tokens', 'thinking', { integer: true, min: 0 }) ?? null;
  }
  checkAccepted(obj);
  return { messages: conversation, tools, omittedTools, toolChoice: choice, parallelToolCalls: parallel, templateKwargs, thinkingBudget, effort: parseEffort(obj) };
}

/** output_config.effort: max is the most this server offers, high's budget. */
function parseEffort(obj: Json): MessagesRequest['effort'] {
  const v = get(obj, 'output_config');
  if (v === undefined || v === null) return null;
  const effort = get(requireObject(v, 'output_config'), 'effort');
  if (effort === undefined) return null;
  const e = checkEnum(effort, 'output_config.effort', ['low', 'medium', 'high', 'max'] as const);
  return e === 'max' ? 'high' : e;
}

/**
 * Fields that change nothing this server does, checked for shape only: metadata (user_id),
 * context_management (its clear_thinking edit is what the server always does: earlier thinking is
 * never sent back to the model; other edits are not applied, docs/server.md).
 */
function checkAccepted(obj: Json): void {
  const metadata = get(obj, 'metadata');
  if (metadata !== undefined && metadata !== null) {
    const userId = get(requireObject(metadata, 'metadata'), 'user_id');
    if (userId !== undefined && userId !== null) checkString(userId, 'metadata.user_id', { maxLength: 512 });
  }
  const cm = get(obj, 'context_management');
  if (cm !== undefined && cm !== null) {
    const edits = get(requireObject(cm, 'context_management'), 'edits');
    if (edits !== undefined) {
      checkArray(edits, 'context_management.edits').forEach((e, i) => {
        const ep = field('context_management.edits', i);
        checkString(get(requireObject(e, ep), 'type'), field(ep, 'type'), { nonEmpty: true });
      });
    }
  }
}

export function parseMessagesRequest(body: unknown): MessagesRequest {
  const obj = requireObject(body, '');
  const conversation = parseConversation(obj);
  const maxTokens = get(obj, 'max_tokens');
  if (maxTokens === undefined) fail('max_tokens', 'is required', 'missing_required_parameter');
  const stopRaw = get(obj, 'stop_sequences');
  const stop = stopRaw === undefined ? [] : checkArray(stopRaw, 'stop_sequences').map((s, i) => checkString(s, field('stop_sequences', i), { nonEmpty: true }));
  if (stop.length > MAX_STOP) fail('stop_sequences', `at most ${MAX_STOP} stop sequences, got ${stop.length}`);
  const sampling = parseSampling(obj, ['temperature', 'top_p', 'top_k']);
  return {
    ...conversation,
    model: optString(obj, 'model', '') ?? null,
    maxTokens: checkNumber(maxTokens, 'max_tokens', { integer: true, min: 1 }),
    stop,
    stream: optBool(obj, 'stream', '') ?? false,
    sampling,
  };
}
