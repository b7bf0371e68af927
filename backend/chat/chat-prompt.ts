// The one way a chat prompt becomes tokens, for chat requests and saved sessions alike (they must
// stay token-identical, or the prefix cache and restored sessions would miss): the model's template
// renders the messages with the client's text protected (client-text.ts), and the engine parses
// special tokens only in what the template wrote. And the one way a raw prompt does (tokenizeRawPrompt).
import type { PromptSegment } from '../../native/lib/addon.js';
import type { ClientTextGuard } from './client-text.js';
import type { ChatTemplate, RenderOptions } from './template.js';
import type { ChatMessage } from './chat-types.js';
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
 * The prompt's tokens: the rendered request's own tokenization, nothing else. What a slot, the park
 * or a restored session holds is reused only up to the first token that differs (the engine's
 * prefix match), so an answer never depends on what the server ran before.
 */
export function tokenizeChatPrompt(tokenizer: SegmentTokenizer, prompt: RenderedPrompt): Promise<number[]> {
  return tokenizer.tokenizeSegments(prompt.segments, prompt.addSpecial);
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
