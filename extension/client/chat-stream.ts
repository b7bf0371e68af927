// Assembles OpenAI chat-completion chunks into text and whole tool calls. Tool-call deltas
// arrive in pieces (id and name first, then argument fragments, keyed by index); a call is
// emitted once, complete, when the choice finishes or the stream ends.
import { arr, num, obj, str } from './normalize.js';
import { parseTimings, parseUsage } from './normalize.js';
import type { ChatStreamEvent } from './types.js';
import type { ToolCall } from '../../contract/chat.js';

interface PendingCall { id: string; name: string; args: string }

export class ChatChunkAssembler {
  private readonly calls = new Map<number, PendingCall>();
  private finishReason: string | null = null;
  private usage: ReturnType<typeof parseUsage> = null;
  private timings: ReturnType<typeof parseTimings> = null;
  private flushed = false;

  /** Feeds one parsed `data:` payload (not "[DONE]"). */
  push(chunk: unknown): ChatStreamEvent[] {
    const out: ChatStreamEvent[] = [];
    const o = obj(chunk);
    if (o.error !== undefined) {
      const e = obj(o.error);
      throw new Error(str(e, 'message') ?? (typeof o.error === 'string' ? o.error : 'the server ended the stream with an error'));
    }
    for (const c of arr(o.choices)) {
      const choice = obj(c);
      const delta = obj(choice.delta);
      const text = str(delta, 'content');
      if (text) out.push({ type: 'text', text });
      for (const t of arr(delta.tool_calls)) {
        const tc = obj(t);
        const index = num(tc, 'index') ?? 0;
        const fn = obj(tc.function);
        const cur = this.calls.get(index) ?? { id: '', name: '', args: '' };
        cur.id ||= str(tc, 'id') ?? '';
        cur.name ||= str(fn, 'name') ?? '';
        cur.args += str(fn, 'arguments') ?? '';
        this.calls.set(index, cur);
      }
      const finish = str(choice, 'finish_reason');
      if (finish) {
        this.finishReason = finish;
        out.push(...this.flushCalls());
      }
    }
    if (o.usage) this.usage = parseUsage(o.usage) ?? this.usage;
    if (o.timings) this.timings = parseTimings(o.timings) ?? this.timings;
    return out;
  }

  /** Ends the stream: any unfinished tool calls, then the one 'done' event. */
  end(): ChatStreamEvent[] {
    if (this.flushed) return [];
    this.flushed = true;
    return [...this.flushCalls(), { type: 'done', finishReason: this.finishReason, usage: this.usage, timings: this.timings }];
  }

  private flushCalls(): ChatStreamEvent[] {
    const out: ChatStreamEvent[] = [];
    for (const [index, c] of [...this.calls].sort((a, b) => a[0] - b[0])) {
      const call: ToolCall = { id: c.id || `call_${index}`, name: c.name, arguments: c.args || '{}' };
      out.push({ type: 'toolCall', call });
    }
    this.calls.clear();
    return out;
  }
}
