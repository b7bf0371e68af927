// OpenAI response shapes: chat completion chunks (role first, reasoning, content and tool-call deltas,
// a final chunk with finish_reason, usage and llama.cpp-style timings), whole responses,
// and text completion chunks. Pure functions of their inputs: unit-tested without a server.
import type { ParsedDelta } from '../chat/tool-calls.js';
import type { ToolCall } from '../chat/chat-types.js';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/** llama-server's `timings`; a figure the engine did not report stays null. */
export interface Timings {
  cache_n: number | null;
  prompt_n: number | null;
  prompt_ms: number | null;
  prompt_per_token_ms: number | null;
  prompt_per_second: number | null;
  predicted_n: number;
  predicted_ms: number | null;
  predicted_per_token_ms: number | null;
  predicted_per_second: number | null;
}

export interface Figures {
  promptTokens: number;
  reused: number | null;
  generated: number;
  promptMs: number | null;
  decodeMs: number | null;
}

export function usageOf(f: Figures): Usage {
  return {
    prompt_tokens: f.promptTokens,
    completion_tokens: f.generated,
    total_tokens: f.promptTokens + f.generated,
    prompt_tokens_details: { cached_tokens: f.reused ?? 0 },
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
  choices: Array<{ index: 0; delta: ChunkChoiceDelta; logprobs: null; finish_reason: ChatFinish | null }>;
  usage?: Usage;
  timings?: Timings;
}

/** Builds the chunks of one streamed chat completion. */
export class ChatChunkBuilder {
  constructor(readonly id: string, readonly model: string, readonly created: number, readonly fingerprint: string) {}

  private chunk(delta: ChunkChoiceDelta, finish: ChatFinish | null = null): ChatChunk {
    return {
      id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model,
      system_fingerprint: this.fingerprint,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
  }

  role(): ChatChunk { return this.chunk({ role: 'assistant', content: '' }); }

  /** A chunk that carries nothing but what the caller adds (prompt_progress). */
  empty(): ChatChunk { return this.chunk({}); }

  /**
   * Chunks for the deltas, in order: adjacent reasoning pieces merged into one reasoning_content
   * chunk, adjacent content pieces into one content chunk, one chunk per tool-call piece.
   */
  deltas(deltas: readonly ChatDelta[]): ChatChunk[] {
    const out: ChatChunk[] = [];
    let text = '';
    let kind: 'content' | 'reasoning' = 'content';
    const flushText = () => {
      if (text) out.push(this.chunk(kind === 'content' ? { content: text } : { reasoning_content: text }));
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
        out.push(this.chunk({ tool_calls: [{ index: d.index, id: d.id, type: 'function', function: { name: d.name, arguments: '' } }] }));
      } else {
        out.push(this.chunk({ tool_calls: [{ index: d.index, function: { arguments: d.text } }] }));
      }
    }
    flushText();
    return out;
  }

  final(finish: ChatFinish, figures: Figures): ChatChunk {
    return { ...this.chunk({}, finish), usage: usageOf(figures), timings: timingsOf(figures) };
  }

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

export function chatCompletion(opts: {
  id: string; model: string; created: number; fingerprint: string; content: string; calls: readonly ToolCall[];
  finish: ChatFinish; figures: Figures;
  /** The model's thinking; the message carries reasoning_content only when this is non-empty. */
  reasoning?: string;
}) {
  return {
    id: opts.id, object: 'chat.completion' as const, created: opts.created, model: opts.model,
    system_fingerprint: opts.fingerprint,
    choices: [{
      index: 0,
      message: {
        role: 'assistant' as const,
        content: opts.calls.length > 0 && opts.content.trim() === '' ? null : opts.content,
        ...(opts.reasoning ? { reasoning_content: opts.reasoning } : {}),
        ...(opts.calls.length > 0 ? { tool_calls: opts.calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } })) } : {}),
      },
      logprobs: null,
      finish_reason: opts.finish,
    }],
    usage: usageOf(opts.figures),
    timings: timingsOf(opts.figures),
  };
}

export function completionChunk(id: string, model: string, created: number, text: string, finish: 'stop' | 'length' | null) {
  return {
    id, object: 'text_completion' as const, created, model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
  };
}

export function completionResponse(opts: { id: string; model: string; created: number; text: string; finish: 'stop' | 'length'; figures: Figures }) {
  return {
    ...completionChunk(opts.id, opts.model, opts.created, opts.text, opts.finish),
    usage: usageOf(opts.figures),
    timings: timingsOf(opts.figures),
  };
}
