// Server-sent events: bytes in, `data:` payloads out. Comments (`: keep-alive`) are skipped.
// Pure (no vscode, no fetch) so it is unit-tested with hand-cut chunks.

export class SseDecoder {
  private buffer = '';
  private data: string[] = [];
  private readonly text = new TextDecoder();

  /** Feeds a chunk; returns the payloads of the events it completed. */
  push(chunk: Uint8Array | string): string[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.text.decode(chunk, { stream: true });
    const out: string[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\n|\r/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      const sep = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      // A lone \r at the end of the buffer may be the first half of \r\n: wait for more.
      if (sep === 1 && this.buffer[nl] === '\r' && nl === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(nl + sep);
      this.line(line, out);
    }
    return out;
  }

  /** Ends the stream; returns a last event not followed by a blank line. */
  end(): string[] {
    const out: string[] = [];
    if (this.buffer) this.line(this.buffer, out);
    this.buffer = '';
    if (this.data.length) out.push(this.data.join('\n'));
    this.data = [];
    return out;
  }

  private line(line: string, out: string[]): void {
    if (line === '') {
      if (this.data.length) out.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
  }
}
