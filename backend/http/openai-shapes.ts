// OpenAI response shapes: chat completion chunks (role first, reasoning, content and tool-call deltas,
// a final chunk with finish_reason, usage and llama.cpp-style timings), whole responses,
// and text completion chunks. Pure functions of their inputs: unit-tested without a server.
import type { ParsedDelta } from '../chat/tool-calls.js';
import type { ToolCall } from '../chat/chat-types.js';
import type { ChatLogprob, CompletionLogprobs } from './logprob-shapes.js';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  /**
   * With a prediction (OpenAI's predicted outputs): its tokens the answer followed, and those verified
   * and thrown away; with thinking: the tokens written inside it (reasoning_tokens).
   */
  completion_tokens_details?: { accepted_prediction_tokens?: number; rejected_prediction_tokens?: number; reasoning_tokens?: number };
}

/** llama-server's `timings`; a figure the engine did not report stays null. */
export interface Timings {
  /** Speculative decoding (llama-server's names): draft tokens verified and accepted; present only with drafts. */
  draft_n?: number;
  draft_n_accepted?: number;
  cache_n: number | null;
  prompt_n: number | null;
  prompt_ms: number | null;
  prompt_per_token_ms: number | null;
  prompt_per_second: number | null;
  predicted_n: number;
  predicted_ms: number | null;
  predicted_per_token_ms: number | null;
  predicted_per_second: number | null;
  /** What the request asked that the server did not enforce (a tool schema the grammar cannot express under tool_choice "auto"). */
  warnings?: string[];
}

export interface Figures {
  promptTokens: number;
  reused: number | null;
  generated: number;
  promptMs: number | null;
  decodeMs: number | null;
  /** Speculative tokens verified / accepted (0 without speculation). */
  drafted?: number;
  accepted?: number;
  /** Timings' warnings (absent or empty: none). */
  warnings?: string[];
  /** The request's prediction: its tokens accepted and rejected (absent: the request had none). */
  prediction?: { accepted: number; rejected: number };
  /** Tokens the model wrote inside its thinking (absent or 0: it did not think). */
  reasoningTokens?: number;
}

export function usageOf(f: Figures): Usage {
  return {
    prompt_tokens: f.promptTokens,
    completion_tokens: f.generated,
    total_tokens: f.promptTokens + f.generated,
    prompt_tokens_details: { cached_tokens: f.reused ?? 0 },
    ...(f.prediction || f.reasoningTokens ? {
      completion_tokens_details: {
        ...(f.prediction ? { accepted_prediction_tokens: f.prediction.accepted, rejected_prediction_tokens: f.prediction.rejected } : {}),
        ...(f.reasoningTokens ? { reasoning_tokens: f.reasoningTokens } : {}),
      },
    } : {}),
  };
}

export function timingsOf(f: Figures): Timings {
  const promptN = f.reused === null ? null : Math.max(0, f.promptTokens - f.reused);
  const per = (ms: number | null, n: number | null) => (ms !== null && n !== null && n > 0 ? round3(ms / n) : null);
  const rate = (ms: number | null, n: number | null) => (ms !== null && n !== null && ms > 0 ? round3((n * 1000) / ms) : null);
  return {
    cache_n: f.reused,
    prompt_n: promptN,
    prompt_ms: f.promptMs === null ? null : round3(f.promptMs),
    prompt_per_token_ms: per(f.promptMs, promptN),
    prompt_per_second: rate(f.promptMs, promptN),
    predicted_n: f.generated,
    predicted_ms: f.decodeMs === null ? null : round3(f.decodeMs),
    predicted_per_token_ms: per(f.decodeMs, f.generated),
    predicted_per_second: rate(f.decodeMs, f.generated),
    ...(f.drafted ? { draft_n: f.drafted, draft_n_accepted: f.accepted ?? 0 } : {}),
    ...(f.warnings?.length ? { warnings: f.warnings } : {}),
  };
}

function round3(x: number): number { return Math.round(x * 1000) / 1000; }

export type ChatFinish = 'stop' | 'length' | 'tool_calls';

/** What a chat chunk carries: the tool-call parser's deltas, plus the model's thinking. */
export type ChatDelta = ParsedDelta | { type: 'reasoning'; text: string };

interface ChunkChoiceDelta {
  role?: 'assistant';
  content?: string;
  /** The thinking of a reasoning model (llama-server's field; Continue, Open WebUI read it). */
  reasoning_content?: string;
  tool_calls?: Array<{ index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } }>;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: Array<{ index: number; delta: ChunkChoiceDelta; logprobs: { content: ChatLogprob[] } | null; finish_reason: ChatFinish | null }>;
  usage?: Usage;
  timings?: Timings;
}

/** Builds the chunks of one streamed chat completion. */
export class ChatChunkBuilder {
  constructor(readonly id: string, readonly model: string, readonly created: number, readonly fingerprint: string) {}

  private chunk(delta: ChunkChoiceDelta, finish: ChatFinish | null = null, index = 0, logprobs: ChatLogprob[] | null = null): ChatChunk {
    return {
      id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model,
      system_fingerprint: this.fingerprint,
      choices: [{ index, delta, logprobs: logprobs ? { content: logprobs } : null, finish_reason: finish }],
    };
  }

  role(index = 0): ChatChunk { return this.chunk({ role: 'assistant', content: '' }, null, index); }

  /** A chunk that carries nothing but what the caller adds (prompt_progress). */
  empty(): ChatChunk { return this.chunk({}); }

  /**
   * Chunks for the deltas, in order: adjacent reasoning pieces merged into one reasoning_content
   * chunk, adjacent content pieces into one content chunk, one chunk per tool-call piece.
   */
  deltas(deltas: readonly ChatDelta[], index = 0, logprobs: ChatLogprob[] | null = null): ChatChunk[] {
    const out: ChatChunk[] = [];
    let text = '';
    let kind: 'content' | 'reasoning' = 'content';
    // The step's log-probabilities ride on the first chunk it produces.
    let lps = logprobs && logprobs.length > 0 ? logprobs : null;
    const push = (delta: ChunkChoiceDelta) => { out.push(this.chunk(delta, null, index, lps)); lps = null; };
    const flushText = () => {
      if (text) push(kind === 'content' ? { content: text } : { reasoning_content: text });
      text = '';
    };
    for (const d of deltas) {
      if (d.type === 'content' || d.type === 'reasoning') {
        if (d.type !== kind) { flushText(); kind = d.type; }
        text += d.text;
        continue;
      }
      flushText();
      if (d.type === 'tool_call') {
        push({ tool_calls: [{ index: d.index, id: d.id, type: 'function', function: { name: d.name, arguments: '' } }] });
      } else {
        push({ tool_calls: [{ index: d.index, function: { arguments: d.text } }] });
      }
    }
    flushText();
    if (lps) push({});  // log-probabilities of tokens whose text is still withheld
    return out;
  }

  final(finish: ChatFinish, figures: Figures, index = 0): ChatChunk {
    return { ...this.chunk({}, finish, index), usage: usageOf(figures), timings: timingsOf(figures) };
  }

  /** A choice's end without the figures (n > 1: every choice but the last to be reported). */
  finishOnly(finish: ChatFinish, index: number): ChatChunk { return this.chunk({}, finish, index); }

  /** The stream_options.include_usage chunk: no choices, only usage. */
  usageOnly(figures: Figures): ChatChunk {
    return { ...this.chunk({}), choices: [], usage: usageOf(figures) };
  }
}

/** The finish_reason of a chat completion: tool_calls only when calls completed. */
export function chatFinish(engineFinish: string, calls: readonly ToolCall[]): ChatFinish {
  if (calls.length > 0) return 'tool_calls';
  return engineFinish === 'length' ? 'length' : 'stop';
}

/** One choice of a whole chat answer. */
export interface ChatChoiceResult {
  content: string;
  calls: readonly ToolCall[];
  finish: ChatFinish;
  /** The model's thinking; the message carries reasoning_content only when this is non-empty. */
  reasoning?: string;
  /** Present when the request asked for logprobs. */
  logprobs?: ChatLogprob[];
}

export function chatChoice(index: number, c: ChatChoiceResult) {
  return {
    index,
    message: {
      role: 'assistant' as const,
      content: c.calls.length > 0 && c.content.trim() === '' ? null : c.content,
      ...(c.reasoning ? { reasoning_content: c.reasoning } : {}),
      ...(c.calls.length > 0 ? { tool_calls: c.calls.map((t) => ({ id: t.id, type: 'function' as const, function: { name: t.function.name, arguments: t.function.arguments } })) } : {}),
    },
    logprobs: c.logprobs ? { content: c.logprobs } : null,
    finish_reason: c.finish,
  };
}

export function chatCompletionChoices(opts: {
  id: string; model: string; created: number; fingerprint: string; choices: readonly ChatChoiceResult[]; figures: Figures;
}) {
  return {
    id: opts.id, object: 'chat.completion' as const, created: opts.created, model: opts.model,
    system_fingerprint: opts.fingerprint,
    choices: opts.choices.map((c, i) => chatChoice(i, c)),
    usage: usageOf(opts.figures),
    timings: timingsOf(opts.figures),
  };
}

export function completionChunk(id: string, model: string, created: number, text: string, finish: 'stop' | 'length' | null,
  index = 0, logprobs: CompletionLogprobs | null = null) {
  return {
    id, object: 'text_completion' as const, created, model,
    choices: [{ index, text, logprobs, finish_reason: finish }],
  };
}

export interface CompletionChoiceResult { text: string; finish: 'stop' | 'length'; logprobs?: CompletionLogprobs }

export function completionResponseChoices(opts: { id: string; model: string; created: number; choices: readonly CompletionChoiceResult[]; figures: Figures }) {
  return {
    id: opts.id, object: 'text_completion' as const, created: opts.created, model: opts.model,
    choices: opts.choices.map((c, index) => ({ index, text: c.text, logprobs: c.logprobs ?? null, finish_reason: c.finish })),
    usage: usageOf(opts.figures),
    timings: timingsOf(opts.figures),
  };
}
