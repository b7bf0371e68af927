// The one way a chat prompt becomes tokens, for chat requests and saved sessions alike (they must
// stay token-identical, or the prefix cache and restored sessions would miss): the model's template
// renders the messages with the client's text protected (client-text.ts), and the engine parses
// special tokens only in what the template wrote. And the one way a raw prompt does (tokenizeRawPrompt).
import type { ImageInput, PromptSegment } from '../../native/lib/addon.js';
import type { ChatSegment, ClientTextGuard, ProtectedRender } from './client-text.js';
import type { ChatTemplate, RenderOptions } from './template.js';
import type { ChatMessage, ContentPart } from './chat-types.js';
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
  /** The same text cut into the template's segments and the client's (plain) ones, and where images go. */
  readonly segments: ChatSegment[];
  /** The messages' images in order (ChatSegment.image indexes them); empty for a text-only prompt. */
  readonly images: readonly Uint8Array[];
  /** Let the vocabulary add BOS: false when the template wrote it (never doubled, never lost). */
  readonly addSpecial: boolean;
}

export interface SegmentTokenizer {
  tokenizeSegments(segments: PromptSegment[], addSpecial: boolean): Promise<number[]>;
}

/** An image part's place while the messages are protected: its index, never its bytes. */
interface ImageRef { type: 'image_ref'; index: number }

/** The messages with each image part replaced by its index, and the images in order. */
function takeImages(messages: ChatMessage[]): { messages: ChatMessage[]; images: Uint8Array[] } {
  const images: Uint8Array[] = [];
  const out = messages.map((m) => {
    if (!Array.isArray(m.content) || !m.content.some((p) => p.type === 'image')) return m;
    const content = m.content.map((p): ContentPart => {
      if (p.type !== 'image') return p;
      images.push((p as { data: Uint8Array }).data);
      return { type: 'image_ref', index: images.length - 1 } satisfies ImageRef;
    });
    return { ...m, content };
  });
  return { messages: out, images };
}

/** After protection: each image's place as a text part holding its marker (templates see text). */
function placeImages(messages: ChatMessage[], guard: ProtectedRender): ChatMessage[] {
  return messages.map((m) => (!Array.isArray(m.content) ? m : {
    ...m,
    content: m.content.map((p): ContentPart => (p.type === 'image_ref' ? { type: 'text', text: guard.image((p as unknown as ImageRef).index) } : p)),
  }));
}

/**
 * Renders `messages` (throws ChatTemplateError as the template does). An image part becomes a
 * marker in its message's text, which the segments give back as {image} where the template put it.
 */
export function renderChatPrompt(model: ChatPromptModel, messages: ChatMessage[], opts: RenderOptions): RenderedPrompt {
  const guard = model.clientText.begin();
  const taken = takeImages(messages);
  const rendered = model.template.render(placeImages(guard.value(taken.messages), guard), {
    ...opts,
    ...(opts.tools ? { tools: guard.value(opts.tools) } : {}),
    ...(opts.extraContext ? { extraContext: guard.value(opts.extraContext) } : {}),
  });
  const segments = guard.segments(rendered);
  const first = segments[0];
  // A BOS the client typed is text, not the template's BOS.
  const bosWritten = model.bosText !== '' && first !== undefined && !first.plain && first.text.startsWith(model.bosText);
  return { text: segments.map((s) => s.text).join(''), segments, addSpecial: !bosWritten, images: taken.images };
}

/**
 * The prompt's tokens: the rendered request's own tokenization, nothing else. What a slot, the park
 * or a restored session holds is reused only up to the first token that differs (the engine's
 * prefix match), so an answer never depends on what the server ran before.
 */
export function tokenizeChatPrompt(tokenizer: SegmentTokenizer, prompt: RenderedPrompt): Promise<number[]> {
  if (prompt.images.length > 0) throw new Error('a prompt with images is tokenized by tokenizeChatInput');
  return tokenizer.tokenizeSegments(prompt.segments, prompt.addSpecial);
}

/** An image prepared by the model's projector (engine/calls.ts ImageTokens): its tokens in a prompt. */
export interface ImageTokenizer {
  prepareImage(data: Uint8Array, maxPixels: number): Promise<{ tokens: number[] }>;
}

/** A chat prompt's tokens and the images read at their placeholders (GenerateRequest.images). */
export interface ChatInput {
  prompt: number[];
  images: ImageInput[];
}

/**
 * A rendered prompt's tokens, images included: the text between images is tokenized as
 * tokenizeChatPrompt does (BOS only at the start), and each image takes the tokens its projector
 * gives it (marker tokens, then placeholders derived from its bytes), so the same conversation
 * always gives the same tokens and its KV is reused like any other prefix. Throws (an engine call
 * error) for an image the projector cannot read; a template that drops an image's marker is an Error.
 */
export async function tokenizeChatInput(
  tokenizer: SegmentTokenizer & ImageTokenizer, prompt: RenderedPrompt, maxPixels: number,
): Promise<ChatInput> {
  if (prompt.images.length === 0) return { prompt: await tokenizeChatPrompt(tokenizer, prompt), images: [] };
  const runs: PromptSegment[][] = [[]];
  const order: number[] = [];
  for (const s of prompt.segments) {
    if (s.image === undefined) { runs.at(-1)!.push({ text: s.text, ...(s.plain ? { plain: true } : {}) }); continue; }
    order.push(s.image);
    runs.push([]);
  }
  const placed = new Set(order);
  const dropped = prompt.images.findIndex((_, i) => !placed.has(i));
  if (dropped >= 0) throw new ImageDroppedError(dropped);
  const [texts, prepared] = await Promise.all([
    Promise.all(runs.map((r, i) => (r.length === 0 ? Promise.resolve([]) : tokenizer.tokenizeSegments(r, i === 0 && prompt.addSpecial)))),
    Promise.all(prompt.images.map((data) => tokenizer.prepareImage(data, maxPixels))),
  ]);
  const tokens: number[] = [...texts[0]!];
  const images: ImageInput[] = [];
  order.forEach((k, i) => {
    const img = prepared[k]!;
    // Where the first placeholder sits: after the projector's own marker tokens.
    const at = tokens.length + img.tokens.findIndex((t) => t < 0);
    tokens.push(...img.tokens, ...texts[i + 1]!);
    images.push({ at, data: prompt.images[k]! });
  });
  return { prompt: tokens, images };
}

/** The chat template left out an image's marker: the model would never see that image. */
export class ImageDroppedError extends Error {
  override name = 'ImageDroppedError';
  constructor(readonly index: number) {
    super(`the model's chat template left out image ${index + 1} (it renders no place for it)`);
  }
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
