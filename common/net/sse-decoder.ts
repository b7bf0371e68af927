// The one Server-Sent Events decoder: bytes or text in, events out, by eventsource-parser (the
// WHATWG rules: \n, \r\n or \r line ends, also split across chunks; a blank line dispatches;
// ':' lines are comments, counted as keep-alives; several data lines join with "\n"). strata
// bench's client and the extension's read every stream through it.
import { createParser } from 'eventsource-parser';

export interface SseEvent {
  /** The `event:` field, "message" when absent. */
  event: string;
  data: string;
}

export class SseDecoder {
  private readonly text = new TextDecoder();
  private ready: SseEvent[] = [];
  private comments = 0;
  /** The last chunk ended with CR: an LF at the start of the next one belongs to it. */
  private pendingCr = false;
  private readonly parser = createParser({
    onEvent: (e) => { this.ready.push({ event: e.event ?? 'message', data: e.data }); },
    onComment: () => { this.comments++; },
  });

  /** Comment lines seen so far (servers send them as keep-alives while a request waits). */
  get commentCount(): number { return this.comments; }

  /** Feeds a chunk (UTF-8 bytes, split anywhere, or text); returns the events it completed, in order. */
  feed(chunk: Uint8Array | string): SseEvent[] {
    this.parser.feed(this.lineEnds(typeof chunk === 'string' ? chunk : this.text.decode(chunk, { stream: true })));
    return this.take();
  }

  /** Ends the stream: a last event without its blank line is still dispatched (a cut stream's last words count). */
  end(): SseEvent[] {
    const rest = this.lineEnds(this.text.decode());
    // Ends a last line and its event as if the blank line had come; a stream that ended cleanly adds nothing.
    this.parser.feed(`${rest}\n\n`);
    this.parser.reset();
    return this.take();
  }

  /**
   * Every line end as LF. eventsource-parser 3 (the last line for Node 20; 4 needs Node 22) takes a CR
   * whose LF comes in the next chunk for two line ends, which would dispatch an event early.
   */
  private lineEnds(text: string): string {
    if (text === '') return text;
    const s = this.pendingCr && text.startsWith('\n') ? text.slice(1) : text;
    this.pendingCr = s.endsWith('\r');
    return s.replace(/\r\n?/g, '\n');
  }

  private take(): SseEvent[] {
    const out = this.ready;
    this.ready = [];
    return out;
  }
}
