// Responses API shapes: the chat path's deltas (reasoning, content, tool calls) as output items
// (reasoning, message, function_call) and the stream events that build them, in the order the
// OpenAI SDK accumulates them (output_item.added, content_part.added, the deltas, their .done,
// output_item.done), each with its sequence number; the response object and its usage. Pure
// functions of their inputs: unit-tested without a server.
import type {
  FunctionCallItem, ItemStatus, MessageItem, OutputItem, ReasoningItem, ResponseObject, ResponseStatus, ResponseUsage,
} from '../../contract/responses.js';
import type { ChatDelta } from './openai-shapes.js';

/** An event before its sequence number. */
export type ResponseEvent = { type: string } & Record<string, unknown>;

/**
 * Turns one answer's deltas into output items and their events. Items open as their first delta
 * arrives and close when another kind begins or the answer ends; a call's arguments stream as
 * function_call_arguments deltas.
 */
export class OutputStream {
  readonly items: OutputItem[] = [];
  private open: OutputItem | null = null;
  private seq = 0;

  /**
   * `prefix`: what item ids start with after their kind (the response's own id part); `members`: the
   * qualified names of namespace tools' functions, whose calls go back as the namespace and the member's name.
   */
  constructor(private readonly prefix: string, private readonly members: Readonly<Record<string, { namespace: string; name: string }>> = {}) {}

  push(deltas: readonly ChatDelta[]): ResponseEvent[] {
    return deltas.flatMap((d) => this.one(d));
  }

  /** The answer ended: the open item closes (`status`: incomplete when it was cut by max_output_tokens). */
  end(status: ItemStatus = 'completed'): ResponseEvent[] {
    return this.close(status);
  }

  private id(kind: string): string { return `${kind}_${this.prefix}_${this.seq++}`; }

  private index(): number { return this.items.length - 1; }

  private one(d: ChatDelta): ResponseEvent[] {
    const out: ResponseEvent[] = [];
    if (d.type === 'reasoning') {
      const item = this.open?.type === 'reasoning' ? this.open : this.start<ReasoningItem>(out, {
        type: 'reasoning', id: this.id('rs'), status: 'in_progress', summary: [], content: [],
      }, { type: 'reasoning_text', text: '' });
      item.content[0]!.text += d.text;
      out.push({ type: 'response.reasoning_text.delta', item_id: item.id, output_index: this.index(), content_index: 0, delta: d.text });
    } else if (d.type === 'content') {
      const item = this.open?.type === 'message' ? this.open : this.start<MessageItem>(out, {
        type: 'message', id: this.id('msg'), status: 'in_progress', role: 'assistant', content: [],
      }, { type: 'output_text', text: '', annotations: [], logprobs: [] });
      item.content[0]!.text += d.text;
      out.push({ type: 'response.output_text.delta', item_id: item.id, output_index: this.index(), content_index: 0, delta: d.text, logprobs: [] });
    } else if (d.type === 'tool_call') {
      const member = Object.hasOwn(this.members, d.name) ? this.members[d.name] : undefined;
      this.start<FunctionCallItem>(out, {
        type: 'function_call', id: this.id('fc'), status: 'in_progress', call_id: d.id,
        ...(member ? { name: member.name, namespace: member.namespace } : { name: d.name }), arguments: '',
      }, null);
    } else if (this.open?.type === 'function_call' && d.text) {
      this.open.arguments += d.text;
      out.push({ type: 'response.function_call_arguments.delta', item_id: this.open.id, output_index: this.index(), delta: d.text });
    }
    return out;
  }

  /** Closes the open item and opens `item` (with its one content part, when it has parts). */
  private start<T extends OutputItem>(out: ResponseEvent[], item: T, part: Record<string, unknown> | null): T {
    out.push(...this.close('completed'));
    this.items.push(item);
    this.open = item;
    out.push({ type: 'response.output_item.added', output_index: this.index(), item: structuredClone(item) });
    if (part) {
      (item as MessageItem | ReasoningItem).content.push(part as never);
      out.push({ type: 'response.content_part.added', item_id: item.id, output_index: this.index(), content_index: 0, part: structuredClone(part) });
    }
    return item;
  }

  private close(status: ItemStatus): ResponseEvent[] {
    const item = this.open;
    if (!item) return [];
    this.open = null;
    item.status = status;
    const at = { item_id: item.id, output_index: this.index() };
    const out: ResponseEvent[] = [];
    if (item.type === 'message') {
      const part = item.content[0]!;
      out.push({ type: 'response.output_text.done', ...at, content_index: 0, text: part.text, logprobs: [] });
      out.push({ type: 'response.content_part.done', ...at, content_index: 0, part: structuredClone(part) });
    } else if (item.type === 'reasoning') {
      const part = item.content[0]!;
      out.push({ type: 'response.reasoning_text.done', ...at, content_index: 0, text: part.text });
      out.push({ type: 'response.content_part.done', ...at, content_index: 0, part: structuredClone(part) });
    } else {
      out.push({ type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: item.arguments });
    }
    out.push({ type: 'response.output_item.done', output_index: this.index(), item: structuredClone(item) });
    return out;
  }
}

/** Numbers the events of one stream, from 0. */
export class EventNumbers {
  private next = 0;
  number(ev: ResponseEvent): ResponseEvent & { sequence_number: number } { return { ...ev, sequence_number: this.next++ }; }
}

export function responseUsage(f: { promptTokens: number; reused: number | null; generated: number }, reasoningTokens: number): ResponseUsage {
  return {
    input_tokens: f.promptTokens,
    input_tokens_details: { cached_tokens: f.reused ?? 0 },
    output_tokens: f.generated,
    output_tokens_details: { reasoning_tokens: Math.min(reasoningTokens, f.generated) },
    total_tokens: f.promptTokens + f.generated,
  };
}

/** The response at a point of its life: `base` holds what the request set, the rest what happened. */
export function responseAt(
  base: Omit<ResponseObject, 'status' | 'output' | 'usage' | 'error' | 'incomplete_details'>,
  now: { status: ResponseStatus; output?: OutputItem[]; usage?: ResponseUsage | null; error?: { code: string; message: string } | null },
): ResponseObject {
  return {
    ...base,
    status: now.status,
    error: now.error ?? null,
    incomplete_details: now.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    output: structuredClone(now.output ?? []),
    usage: now.usage ?? null,
  };
}
