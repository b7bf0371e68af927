// Incremental Server-Sent Events parser (WHATWG rules for the fields a completion stream uses):
// lines end in \n, \r\n or \r (also when split across chunks); a blank line dispatches the
// event; ":" lines are comments (keep-alives); several data lines join with "\n".

export interface SseEvent {
  /** The `event:` field, "message" when absent. */
  event: string;
  data: string;
}

export class SseParser {
  private buffer = '';
  /** A chunk ended in \r: a \n starting the next chunk belongs to that line end. */
  private pendingCr = false;
  private data: string[] = [];
  private event = '';
  private comments = 0;

  /** Comment lines seen so far (servers send them as keep-alives while a request waits). */
  get commentCount(): number { return this.comments; }

  /** Feeds decoded text; returns the events completed by it, in order. */
  feed(text: string): SseEvent[] {
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(this.buffer.slice(start, i), events);
      if (c === 13) {
        if (i + 1 < this.buffer.length) { if (this.buffer.charCodeAt(i + 1) === 10) i++; } else this.pendingCr = true;
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** Ends the stream: a last event without its blank line is still dispatched. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.buffer.length > 0) this.line(this.buffer, events);
    this.buffer = '';
    this.line('', events);
    return events;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event || 'message', data: this.data.join('\n') });
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) { this.comments++; return; }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    // id and retry do not matter to a benchmark client.
  }
}
