// Request validators: parsed JSON (unknown) in, typed request out, or ApiError 400 naming the
// field. Output types are camelCase; `sampling` is the engine's own SamplingParams, ready to
// pass on. Unknown top-level fields are ignored (OpenAI clients send extras); null means "not set".
import type { SamplingParams } from '../../native/lib/addon.js';
import { REASONING_FORMATS, type ReasoningFormat } from '../chat/reasoning.js';
import { sessionNameProblem } from '../../contract/session-name.js';
import type { ChatMessage, ToolSpec } from '../chat/chat-types.js';
import { parseMessages, parseToolChoice, parseTools, type ToolChoice } from './chat-schema.js';
import {
  parseChatLogprobs, parseChoices, parseCompletionLogprobs, parseDraftMax, parseOutputConstraint, type OutputConstraint,
} from './output-schema.js';
import { parsePrediction } from './prediction-schema.js';
import { parseSampling } from './sampling-schema.js';
import {
  checkArray, checkDepth, checkEnum, checkNumber, checkString, fail, field, get, optBool, optNumber, optString,
  requireObject, reqString, typeName, type Json,
} from './validate.js';

export { parseJsonBody } from './body.js';
export type { ToolChoice } from './chat-schema.js';
export type { OutputConstraint } from './output-schema.js';

/** Fields every generating request shares. */
export interface GenerationParams {
  /** The model the client named: http/model-routing.ts picks the served model by it (null: its role's, or the default). */
  model: string | null;
  /** max_completion_tokens, max_tokens or n_predict (>= 1); null = the server's default. */
  maxTokens: number | null;
  /** Stop strings (at most 8, none empty). */
  stop: string[];
  stream: boolean;
  /** stream_options.include_usage: a usage chunk before [DONE]. */
  includeUsage: boolean;
  /** Engine sampling settings; only the fields the client set. temperature 0 = greedy. */
  sampling: SamplingParams;
  /** Extension: keep generating past end-of-generation tokens. */
  ignoreEos: boolean;
  /** llama-server extension: progress events while the prompt is read. */
  returnProgress: boolean;
  /** llama-server extension: timings in every streamed chunk. */
  timingsPerToken: boolean;
  /** Choices (n): sequences that share the prompt; the route checks n against the slots. */
  n: number;
  /** Log-probabilities: null none, 0 the tokens' own, N also the N most likely (chat top_logprobs, completions logprobs). */
  logprobs: number | null;
  /** What the output must match (JSON schema, JSON object, GBNF); null = free. */
  constraint: OutputConstraint | null;
  /** Speculative draft tokens per step (speculative.n_max); null = the server's setting. */
  draftMax: number | null;
  /** OpenAI's predicted output (prediction.content): the answer's draft; null = none (chat and completions). */
  prediction: string | null;
}

export interface ChatRequest extends GenerationParams {
  messages: ChatMessage[];
  /** [] when none. */
  tools: ToolSpec[];
  /** Defaults: 'auto' with tools, 'none' without. */
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  /** chat_template_kwargs: extra template variables (e.g. enable_thinking). */
  templateKwargs: Record<string, unknown>;
  /** reasoning_effort as given (its budget: --reasoning-effort-budgets); null when absent. */
  reasoningEffort: (typeof REASONING_EFFORTS)[number] | null;
  /** llama-server's reasoning_format: 'auto' = 'deepseek' (`<think>` text -> reasoning_content); 'none': all content. */
  reasoningFormat: ReasoningFormat;
}

export interface CompletionRequest extends GenerationParams {
  /** Text, or token ids. */
  prompt: string | number[];
}

export interface InfillRequest extends GenerationParams {
  inputPrefix: string;
  inputSuffix: string;
  /** Extra context files (llama-server's input_extra), in order. */
  inputExtra: Array<{ filename: string; text: string }>;
  /** Text placed after the FIM middle token, before generation (llama-server's prompt). */
  prompt: string;
  /** Stop generating after this many ms of decoding (llama-server t_max_predict_ms); null = no limit. */
  tMaxPredictMs: number | null;
  /**
   * Latest wins: a newer infill with the same key (an editor sends its document's URI)
   * supersedes this one inside the server; null = independent.
   */
  supersedeKey: string | null;
  /** llama-server's cache_prompt: false reads the whole prompt again (a cold request). */
  cachePrompt: boolean;
}

export interface TokenizeRequest { content: string; addSpecial: boolean; parseSpecial: boolean; withPieces: boolean }
export interface DetokenizeRequest { tokens: number[] }

/** Save what `messages` (with `tools`) or `prompt` forms; neither given: the server decides (or refuses). */
export interface SessionSaveRequest {
  name: string;
  messages: ChatMessage[] | null;
  tools: ToolSpec[];
  prompt: string | null;
}

const MAX_STOP = 8;

function parseStop(obj: Json): string[] {
  const v = get(obj, 'stop');
  if (v === undefined) return [];
  const list = typeof v === 'string' ? [v] : checkArray(v, 'stop');
  if (list.length > MAX_STOP) fail('stop', `at most ${MAX_STOP} stop strings, got ${list.length}`);
  return list.map((s, i) => checkString(s, typeof v === 'string' ? 'stop' : field('stop', i), { nonEmpty: true }));
}

function parseMaxTokens(obj: Json): number | null {
  for (const key of ['max_completion_tokens', 'max_tokens'] as const) {
    const v = optNumber(obj, key, '', { integer: true, min: 1 });
    if (v !== undefined) return v;
  }
  // llama-server's n_predict: -1 means "no limit".
  const n = optNumber(obj, 'n_predict', '', { integer: true, min: -1 });
  if (n === 0) fail('n_predict', 'must be -1 (no limit) or at least 1, got 0');
  return n === undefined || n === -1 ? null : n;
}

function refuse(obj: Json, key: string, isSet: (v: unknown) => boolean, why: string): void {
  const v = get(obj, key);
  if (v !== undefined && isSet(v)) fail(key, why, 'unsupported_value');
}

function parseGeneration(obj: Json, route: 'chat' | 'completion' | 'infill'): GenerationParams {
  refuse(obj, 'best_of', (v) => v !== 1, 'only 1 is supported (use n for several choices)');
  if (route !== 'chat') refuse(obj, 'top_logprobs', (v) => v !== 0, 'is a chat completions field; here logprobs is the number of alternatives');
  if (route === 'infill') {
    // Infill answers without log-probabilities (ghost text shows none); n candidates share the prompt.
    refuse(obj, 'logprobs', (v) => v !== false && v !== 0, 'log probabilities are not supported on infill');
  }
  const streamOptions = get(obj, 'stream_options');
  let includeUsage = false;
  if (streamOptions !== undefined) {
    includeUsage = optBool(requireObject(streamOptions, 'stream_options'), 'include_usage', 'stream_options') ?? false;
  }
  const model = optString(obj, 'model', '');
  return {
    model: model ?? null,
    maxTokens: parseMaxTokens(obj),
    stop: parseStop(obj),
    stream: optBool(obj, 'stream', '') ?? false,
    includeUsage,
    sampling: parseSampling(obj),
    ignoreEos: optBool(obj, 'ignore_eos', '') ?? false,
    returnProgress: optBool(obj, 'return_progress', '') ?? false,
    timingsPerToken: optBool(obj, 'timings_per_token', '') ?? false,
    n: parseChoices(obj),
    logprobs: route === 'chat' ? parseChatLogprobs(obj) : route === 'completion' ? parseCompletionLogprobs(obj) : null,
    constraint: route === 'infill' ? null : parseOutputConstraint(obj, route === 'chat'),
    draftMax: parseDraftMax(obj),
    prediction: route === 'infill' ? null : parsePrediction(obj),
  };
}

function parseReasoningFormat(obj: Json): ReasoningFormat {
  const v = get(obj, 'reasoning_format');
  if (v === undefined) return 'auto';
  if (typeof v === 'string' && (REASONING_FORMATS as readonly string[]).includes(v)) return v as ReasoningFormat;
  // llama-server's deepseek-legacy also repeats the thinking in content; not offered here.
  if (v === 'deepseek-legacy') fail('reasoning_format', `deepseek-legacy is not supported (use ${REASONING_FORMATS.join(', ')})`, 'unsupported_value');
  const got = typeof v === 'string' ? JSON.stringify(v) : typeName(v);
  fail('reasoning_format', `must be one of ${REASONING_FORMATS.join(', ')}, got ${got}`);
}

/** OpenAI's reasoning efforts: none and minimal turn thinking off, the others on (xhigh with high's budget). */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

/**
 * A reasoning effort as the templates' enable_thinking switch (an enable_thinking the request's
 * chat_template_kwargs set wins); absent: the kwargs as they are.
 */
export function withEffort(kwargs: Record<string, unknown>, effort: unknown, path: string): Record<string, unknown> {
  if (effort === undefined) return kwargs;
  const e = checkEnum(effort, path, REASONING_EFFORTS);
  if (kwargs.enable_thinking !== undefined) return kwargs;
  return { ...kwargs, enable_thinking: e !== 'none' && e !== 'minimal' };
}

function checkedKwargs(v: unknown): Record<string, unknown> {
  const kwargs = requireObject(v, 'chat_template_kwargs');
  checkDepth(kwargs, 'chat_template_kwargs');
  return kwargs;
}

export function parseChatRequest(body: unknown): ChatRequest {
  const obj = requireObject(body, '');
  const messages = parseMessages(get(obj, 'messages'));
  const tools = parseTools(get(obj, 'tools'));
  const toolChoice = parseToolChoice(get(obj, 'tool_choice'), tools);
  const kwargs = get(obj, 'chat_template_kwargs');
  const generation = parseGeneration(obj, 'chat');
  const forced = toolChoice === 'required' || typeof toolChoice === 'object';
  if (forced && generation.constraint) {
    fail(generation.constraint.param.split('.')[0]!, 'cannot be combined with a tool_choice that forces a tool call');
  }
  return {
    ...generation,
    messages,
    tools,
    toolChoice,
    parallelToolCalls: optBool(obj, 'parallel_tool_calls', '') ?? true,
    templateKwargs: withEffort(kwargs === undefined ? {} : checkedKwargs(kwargs), get(obj, 'reasoning_effort'), 'reasoning_effort'),
    reasoningEffort: get(obj, 'reasoning_effort') === undefined ? null : checkEnum(get(obj, 'reasoning_effort'), 'reasoning_effort', REASONING_EFFORTS),
    reasoningFormat: parseReasoningFormat(obj),
  };
}

function parseTokenIds(v: unknown, path: string): number[] {
  return checkArray(v, path).map((t, i) => checkNumber(t, field(path, i), { integer: true, min: 0 }));
}

export function parseCompletionRequest(body: unknown): CompletionRequest {
  const obj = requireObject(body, '');
  const raw = get(obj, 'prompt');
  if (raw === undefined) fail('prompt', 'is required', 'missing_required_parameter');
  let prompt: string | number[];
  if (typeof raw === 'string') {
    prompt = raw;
  } else if (Array.isArray(raw) && raw.every((x) => typeof x === 'number')) {
    prompt = parseTokenIds(raw, 'prompt');
  } else if (Array.isArray(raw) && raw.length === 1) {
    // One prompt in a batch form: ["text"] or [[1, 2, 3]].
    const only = raw[0];
    prompt = typeof only === 'string' ? only : parseTokenIds(only, 'prompt[0]');
  } else if (Array.isArray(raw)) {
    fail('prompt', `only one prompt per request is supported, got ${raw.length}`, 'unsupported_value');
  } else {
    fail('prompt', `must be a string or an array of token ids, got ${typeName(raw)}`);
  }
  refuse(obj, 'echo', (v) => v !== false, 'echo is not supported');
  refuse(obj, 'suffix', (v) => v !== '', 'suffix is not supported here; use /v1/infill for fill-in-the-middle');
  return { ...parseGeneration(obj, 'completion'), prompt };
}

const MAX_SUPERSEDE_KEY = 2048;

export function parseInfillRequest(body: unknown): InfillRequest {
  const obj = requireObject(body, '');
  const extraRaw = get(obj, 'input_extra');
  const inputExtra = extraRaw === undefined ? [] : checkArray(extraRaw, 'input_extra').map((e, i) => {
    const ep = field('input_extra', i);
    const item = requireObject(e, ep);
    return { filename: optString(item, 'filename', ep) ?? '', text: reqString(item, 'text', ep) };
  });
  const tMax = optNumber(obj, 't_max_predict_ms', '', { min: 0 });
  const key = optString(obj, 'supersede_key', '');
  if (key !== undefined && (key.length === 0 || key.length > MAX_SUPERSEDE_KEY)) {
    fail('supersede_key', `must be 1-${MAX_SUPERSEDE_KEY} characters, got ${key.length}`);
  }
  return {
    ...parseGeneration(obj, 'infill'),
    inputPrefix: optString(obj, 'input_prefix', '') ?? '',
    inputSuffix: optString(obj, 'input_suffix', '') ?? '',
    inputExtra,
    prompt: optString(obj, 'prompt', '') ?? '',
    tMaxPredictMs: tMax === undefined || tMax === 0 ? null : tMax,
    supersedeKey: key ?? null,
    cachePrompt: optBool(obj, 'cache_prompt', '') ?? true,
  };
}

export function parseTokenizeRequest(body: unknown): TokenizeRequest {
  const obj = requireObject(body, '');
  return {
    content: reqString(obj, 'content', ''),
    addSpecial: optBool(obj, 'add_special', '') ?? false,
    parseSpecial: optBool(obj, 'parse_special', '') ?? true,
    withPieces: optBool(obj, 'with_pieces', '') ?? false,
  };
}

export function parseDetokenizeRequest(body: unknown): DetokenizeRequest {
  const obj = requireObject(body, '');
  const tokens = get(obj, 'tokens');
  if (tokens === undefined) fail('tokens', 'is required', 'missing_required_parameter');
  return { tokens: parseTokenIds(tokens, 'tokens') };
}

/** A session name safe as a file name (contract/session-name.ts: the one rule, also the panel's). */
export function sanitizeSessionName(name: unknown, path = 'name'): string {
  if (typeof name !== 'string') fail(path, `must be a string, got ${typeName(name)}`);
  const problem = sessionNameProblem(name);
  if (problem !== null) fail(path, problem);
  return name;
}

export function parseSessionSaveRequest(body: unknown): SessionSaveRequest {
  const obj = requireObject(body, '');
  const name = get(obj, 'name');
  if (name === undefined) fail('name', 'is required', 'missing_required_parameter');
  const messagesRaw = get(obj, 'messages');
  const promptRaw = get(obj, 'prompt');
  if (messagesRaw !== undefined && promptRaw !== undefined) fail('prompt', 'give messages or prompt, not both');
  const messages = messagesRaw === undefined ? null : parseMessages(messagesRaw);
  // A saved session keeps its conversation as JSON text beside the state: images stay with chat requests.
  messages?.forEach((m, i) => {
    const at = Array.isArray(m.content) ? m.content.findIndex((p) => p.type === 'image') : -1;
    if (at >= 0) fail(`messages[${i}].content[${at}]`, 'a saved session holds text only: images are not saved in sessions', 'unsupported_value');
  });
  return {
    name: sanitizeSessionName(name),
    messages,
    tools: parseTools(get(obj, 'tools')),
    prompt: promptRaw === undefined ? null : checkString(promptRaw, 'prompt'),
  };
}
