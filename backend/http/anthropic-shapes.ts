// Anthropic Messages shapes: the whole message (content blocks: thinking, text, tool_use), and
// the streamed events (message_start, content_block_start / _delta / _stop, message_delta,
// message_stop) built from the same chat deltas the OpenAI route streams. Pure functions and a
// small block state machine; no I/O.
import type { ToolCall } from '../chat/chat-types.js';
import type { ChatDelta } from './openai-shapes.js';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';

export type ContentBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface AnthropicEvent { event: string; data: Record<string, unknown> }

export function anthropicUsage(promptTokens: number, cached: number | null, output: number): AnthropicUsage {
  // Anthropic counts cached prompt tokens apart from input_tokens.
  const read = cached ?? 0;
  return { input_tokens: promptTokens - read, output_tokens: output, cache_read_input_tokens: read, cache_creation_input_tokens: 0 };
}

export function stopReason(finish: string, calls: readonly ToolCall[], stopString: string | undefined): StopReason {
  if (calls.length > 0) return 'tool_use';
  if (finish === 'length') return 'max_tokens';
  return stopString !== undefined ? 'stop_sequence' : 'end_turn';
}

/** Tool-call arguments (a JSON object text) as the input object. */
function inputOf(args: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(args);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

/** The whole answer's blocks, in order: thinking, text, then the tool calls. */
export function contentBlocks(reasoning: string, text: string, calls: readonly ToolCall[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (reasoning) blocks.push({ type: 'thinking', thinking: reasoning, signature: '' });
  if (text || calls.length === 0) blocks.push({ type: 'text', text });
  for (const c of calls) blocks.push({ type: 'tool_use', id: c.id, name: c.function.name, input: inputOf(c.function.arguments) });
  return blocks;
}

export function messageObject(opts: {
  id: string; model: string; content: ContentBlock[] | []; stopReason: StopReason | null; stopSequence: string | null; usage: AnthropicUsage;
}) {
  return {
    id: opts.id, type: 'message' as const, role: 'assistant' as const, model: opts.model, content: opts.content,
    stop_reason: opts.stopReason, stop_sequence: opts.stopSequence, usage: opts.usage,
  };
}

/**
 * Streamed content blocks from chat deltas: consecutive deltas of one kind share a block; a new
 * kind (or a tool call) closes the open block and starts the next, numbered from 0.
 */
export class BlockStream {
  private open: { kind: 'thinking' | 'text' | 'tool_use'; index: number } | null = null;
  private next = 0;

  push(deltas: readonly ChatDelta[]): AnthropicEvent[] {
    const out: AnthropicEvent[] = [];
    for (const d of deltas) {
      if (d.type === 'reasoning') {
        this.ensure('thinking', { type: 'thinking', thinking: '' }, out);
        out.push(this.delta({ type: 'thinking_delta', thinking: d.text }));
      } else if (d.type === 'content') {
        if (d.text === '') continue;
        this.ensure('text', { type: 'text', text: '' }, out);
        out.push(this.delta({ type: 'text_delta', text: d.text }));
      } else if (d.type === 'tool_call') {
        this.close(out);
        this.start('tool_use', { type: 'tool_use', id: d.id, name: d.name, input: {} }, out);
      } else if (this.open?.kind === 'tool_use') {
        out.push(this.delta({ type: 'input_json_delta', partial_json: d.text }));
      }
    }
    return out;
  }

  /** Closes the open block; an answer without any block gets an empty text block (as Anthropic sends). */
  end(): AnthropicEvent[] {
    const out: AnthropicEvent[] = [];
    if (this.next === 0) this.start('text', { type: 'text', text: '' }, out);
    this.close(out);
    return out;
  }

  private ensure(kind: 'thinking' | 'text', block: Record<string, unknown>, out: AnthropicEvent[]): void {
    if (this.open?.kind === kind) return;
    this.close(out);
    this.start(kind, block, out);
  }

  private start(kind: 'thinking' | 'text' | 'tool_use', block: Record<string, unknown>, out: AnthropicEvent[]): void {
    this.open = { kind, index: this.next++ };
    out.push({ event: 'content_block_start', data: { type: 'content_block_start', index: this.open.index, content_block: block } });
  }

  private delta(delta: Record<string, unknown>): AnthropicEvent {
    return { event: 'content_block_delta', data: { type: 'content_block_delta', index: this.open!.index, delta } };
  }

  private close(out: AnthropicEvent[]): void {
    if (!this.open) return;
    if (this.open.kind === 'thinking') out.push(this.delta({ type: 'signature_delta', signature: '' }));
    out.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: this.open.index } });
    this.open = null;
  }
}

/** Anthropic's error body for an HTTP status. */
export function anthropicError(status: number, message: string) {
  const type = status === 400 || status === 415 || status === 405 ? 'invalid_request_error'
    : status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : status === 404 ? 'not_found_error'
      : status === 413 ? 'request_too_large' : status === 429 ? 'rate_limit_error' : status === 503 ? 'overloaded_error' : 'api_error';
  return { type: 'error' as const, error: { type, message } };
}
