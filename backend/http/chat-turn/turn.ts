// One chat turn, whatever dialect asked for it: the chat completions, Messages and Responses
// routes each parse their body into a ChatTurn and write the turn's events in their own wire shape
// (a TurnWriter); run.ts renders, checks, constrains and generates the turn the same way for all
// three. A new feature of the turn is a field here, a step in run.ts, and where the wire differs a
// line in each writer.
import type { ServerResponse } from 'node:http';
import type { SamplingParams } from '../../../native/lib/addon.js';
import type { ChatInput, RenderedPrompt } from '../../chat/chat-prompt.js';
import type { ChatMessage, ToolCall, ToolSpec } from '../../chat/chat-types.js';
import type { ReasoningFormat } from '../../chat/reasoning.js';
import type { OutputConstraint, ToolChoice } from '../../validation/schemas.js';
import type { DoneEvent } from '../../engine/client.js';
import type { ModelView } from '../../served-model/model-view.js';
import type { AppContext } from '../app-context.js';
import type { GenerationRun, PromptProgress } from '../generation.js';
import type { ChatLogprob } from '../logprob-shapes.js';
import type { ChatDelta, Figures } from '../openai-shapes.js';

/** The conversation a turn continues: messages, the tools offered and what the model may do with them. */
export interface ChatConversation {
  messages: ChatMessage[];
  /** [] when none. */
  tools: ToolSpec[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  /** Extra template variables (enable_thinking, ...). */
  templateKwargs: Record<string, unknown>;
}

export interface ChatTurn {
  /** The conversation as the request gives it (a dialect with stored state prepares the whole one: PreparedTurn). */
  conversation: ChatConversation;
  /** The request field that holds the conversation (named by an empty or too-long prompt's 400). */
  conversationField: 'messages' | 'input';
  stream: boolean;
  /** Choices sharing the prompt (chat completions' n; 1 elsewhere). */
  n: number;
  /** null: all the room the context leaves. */
  maxTokens: number | null;
  stop: string[];
  ignoreEos: boolean;
  sampling: SamplingParams;
  /** null: none; 0 the tokens' own; N also the N most likely. */
  logprobs: number | null;
  /** What the whole answer must match (response_format, text.format); null = free (tool calls may constrain it). */
  constraint: OutputConstraint | null;
  draftMax: number | null;
  /** A predicted output (the answer's draft); null = none. */
  prediction: string | null;
  reasoningFormat: ReasoningFormat;
  /** Where the thinking budget comes from: the request's own budget, else its effort, else the server's. */
  thinking: { budget: number | null; effort: string | null };
  /** llama-server's prompt_progress events while the prompt is read (a writer that has a shape for them). */
  returnProgress: boolean;
}

/** A turn's conversation as the model reads it: rendered, and how its tokens are made. */
export interface PreparedTurn {
  /** The whole conversation the turn continues and adds to. */
  conversation: ChatConversation;
  /** Whether tool calls are parsed and constrained. */
  toolsOn: boolean;
  rendered: RenderedPrompt;
  /** The prompt's tokens and images (called once the request is booked). */
  tokens(): Promise<ChatInput>;
}

/** One choice of a finished turn. */
export interface ChoiceResult {
  content: string;
  reasoning: string;
  calls: readonly ToolCall[];
  /** The engine's finish for this choice: stop, length, ... (a writer maps it, calls first). */
  finish: string;
  /** Present when the request asked for logprobs. */
  logprobs?: ChatLogprob[];
}

export interface TurnResult {
  done: DoneEvent;
  choices: ChoiceResult[];
  figures: Figures;
  /** The prompt's tokens and choice 0's output tokens, when every token came with its id (stored responses keep them). */
  prompt: number[];
  outputIds: number[];
}

/** What a writer knows when it is made: the request is booked and its prompt tokenized. */
export interface TurnStart {
  app: AppContext;
  res: ServerResponse;
  model: ModelView;
  run: GenerationRun;
  prompt: number[];
}

/**
 * A dialect's side of a turn. Streams open lazily: a writer writes its opening events with the
 * first real event, so a turn that fails before its first token still gets a status code.
 */
export interface TurnWriter {
  /** How a failure after the stream's first byte is written (default: the OpenAI error event). */
  streamError?(body: unknown): string;
  /** A step's new deltas for `choice` (logprobs: the step's, when asked for); streamed or kept. */
  deltas(choice: number, deltas: readonly ChatDelta[], logprobs: ChatLogprob[] | null): void;
  /** The prompt read so far (only when the turn asked for progress and the writer has a shape for it). */
  progress?(p: PromptProgress): void;
  /** The answer is complete: write the last events, or the whole answer. */
  end(result: TurnResult): Promise<void> | void;
}

/** A dialect: how it prepares the conversation (default: render it, then tokenize with images) and its writer. */
export interface Dialect {
  prepare?(model: ModelView): Promise<PreparedTurn>;
  writer(start: TurnStart): TurnWriter;
}

/**
 * A writer's stream: `write` puts events on the wire; the opening events (role chunks,
 * message_start, response.created) go first, with the first real events. Without a stream
 * (a whole answer) nothing is written.
 */
export function lazyStream<T>(sse: unknown, opening: () => readonly T[], write: (events: readonly T[]) => void): (events: readonly T[]) => void {
  let opened = false;
  return (events) => {
    if (!sse || events.length === 0) return;
    if (!opened) { opened = true; write(opening()); }
    write(events);
  };
}
