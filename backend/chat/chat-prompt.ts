// The one way a chat prompt becomes tokens, for chat requests and saved sessions alike (they must
// stay token-identical, or the prefix cache and restored sessions would miss): the model's template
// renders the messages with the client's text protected (client-text.ts), and the engine parses
// special tokens only in what the template wrote. And the one way a raw prompt does (tokenizeRawPrompt).
import type { PromptSegment } from '../../native/lib/addon.js';
import type { ClientTextGuard } from './client-text.js';
import type { ChatTemplate, RenderOptions } from './template.js';
import type { ChatMessage } from './chat-types.js';
import { segmentsFrom, type TokenMemory } from './token-memory.js';
import type { RawPromptCache } from './raw-prompt-cache.js';

/** What rendering needs to know about the model (server/model-view.ts has it). */
export interface ChatPromptModel {
  readonly template: ChatTemplate;
  /** BOS as text ('' when the vocabulary has none). */
  readonly bosText: string;
  readonly clientText: ClientTextGuard;
}

export interface RenderedPrompt {
  /** The whole prompt as text, client text as the client wrote it. */
  readonly text: string;
  /** The same text cut into the template's segments and the client's (plain) ones. */
  readonly segments: PromptSegment[];
  /** Let the vocabulary add BOS: false when the template wrote it (never doubled, never lost). */
  readonly addSpecial: boolean;
}

export interface SegmentTokenizer {
  tokenizeSegments(segments: PromptSegment[], addSpecial: boolean): Promise<number[]>;
}

/** Renders `messages` (throws ChatTemplateError as the template does). */
export function renderChatPrompt(model: ChatPromptModel, messages: ChatMessage[], opts: RenderOptions): RenderedPrompt {
  const guard = model.clientText.begin();
  const rendered = model.template.render(guard.value(messages), {
    ...opts,
    ...(opts.tools ? { tools: guard.value(opts.tools) } : {}),
    ...(opts.extraContext ? { extraContext: guard.value(opts.extraContext) } : {}),
  });
  const segments = guard.segments(rendered);
  const first = segments[0];
  // A BOS the client typed is text, not the template's BOS.
  const bosWritten = model.bosText !== '' && first !== undefined && !first.plain && first.text.startsWith(model.bosText);
  return { text: segments.map((s) => s.text).join(''), segments, addSpecial: !bosWritten };
}

/**
 * The prompt's tokens; with `memory`, a prompt whose text starts with a text the server knows the
 * tokens of (an answer the model wrote, a restored session) starts with those tokens, and only the
 * rest is tokenized (token-memory.ts).
 */
export async function tokenizeChatPrompt(tokenizer: SegmentTokenizer, prompt: RenderedPrompt, memory?: TokenMemory): Promise<number[]> {
  return (await tokenizeChatPromptKnown(tokenizer, prompt, memory)).tokens;
}

/** tokenizeChatPrompt, saying where a remembered part ends: its first `known.tokens` tokens are the text's first `known.chars` characters. */
export async function tokenizeChatPromptKnown(
  tokenizer: SegmentTokenizer, prompt: RenderedPrompt, memory?: TokenMemory,
): Promise<{ tokens: number[]; known: { chars: number; tokens: number } | null }> {
  const hit = memory?.find(prompt);
  if (!hit) return { tokens: await tokenizer.tokenizeSegments(prompt.segments, prompt.addSpecial), known: null };
  const rest = segmentsFrom(prompt.segments, hit.length);
  const tail = rest.length > 0 ? await tokenizer.tokenizeSegments(rest, false) : [];
  return { tokens: [...hit.tokens, ...tail], known: { chars: hit.length, tokens: hit.tokens.length } };
}

export interface TextTokenizer {
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): Promise<number[]>;
}

/**
 * The one way a raw prompt (a completions prompt, a session saved from prompt text) becomes
 * tokens: it is model input, so its special tokens are parsed, and the vocabulary adds BOS
 * unless the text already starts with it (never doubled). Completions and sessions must agree,
 * or a saved session would never match the prompt that continues it.
 */
export async function tokenizeRawPrompt(
  tokenizer: TextTokenizer, model: Pick<ChatPromptModel, 'bosText'> & { readonly rawPrompts?: RawPromptCache }, text: string,
): Promise<number[]> {
  const known = model.rawPrompts?.get(text);
  if (known) return known;
  const tokens = await tokenizer.tokenize(text, model.bosText === '' || !text.startsWith(model.bosText), true);
  model.rawPrompts?.put(text, tokens);
  return tokens;
}
