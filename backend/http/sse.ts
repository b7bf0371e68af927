// Server-sent events for streamed completions: headers, `data:` events, `: keep-alive`
// comments while the request waits (queued, or the engine reads its prompt), an error
// event, and `data: [DONE]`.
//
// The status line is committed by the first byte the stream sends (an event, or a keep-alive
// comment after keepAliveMs of waiting), never before: until then a failure is still an HTTP
// status with the JSON error, exactly as for a request that does not stream (generation.ts).
import type { ClientConnection } from './client-connection.js';

export interface SseOptions {
  /** Comment period while waiting (ms). */
  keepAliveMs: number;
  /** Least gap between comments sent on progress events (ms; default keepAliveMs). */
  progressGapMs?: number;
  headers?: Record<string, string>;
}

export class SseStream {
  private timer: NodeJS.Timeout | null = null;
  /** Creation counts as a write: the first comment comes keepAliveMs after the request, not at once. */
  private lastWrite = Date.now();
  private started = false;
  private writes = 0;
  private readonly progressGapMs: number;
  /** How fail() writes its error: an OpenAI `error` event unless a route says otherwise (Anthropic). */
  private errorText: (error: unknown) => string = (e) => `event: error\ndata: ${JSON.stringify(e)}\n\n`;

  constructor(private readonly conn: ClientConnection, private readonly opts: SseOptions) {
    this.progressGapMs = opts.progressGapMs ?? opts.keepAliveMs;
    // Keep-alives sent while its model loaded (model-routing.ts) already committed the 200.
    this.started = conn.res.headersSent;
  }

  /** Whether the status line (200, text/event-stream) went out: from then on errors are events. */
  get isStarted(): boolean { return this.started; }
  /** Writes handed to the socket so far (a caller compares two readings to see if bytes went out). */
  get written(): number { return this.writes; }

  private start(): void {
    if (this.started) return;
    this.started = true;
    const res = this.conn.res;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      ...this.opts.headers,
    });
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    this.lastWrite = Date.now();
  }

  /** While waiting, a comment goes out every keepAliveMs so proxies and clients keep the stream. */
  setWaiting(waiting: boolean): void {
    if (waiting && !this.timer && this.opts.keepAliveMs > 0) {
      this.timer = setInterval(() => {
        if (Date.now() - this.lastWrite >= this.opts.keepAliveMs - 5) this.comment('keep-alive');
      }, this.opts.keepAliveMs);
    } else if (!waiting) this.stopTimer();
  }

  /** The engine read more of the prompt: say we are alive (rate-limited). */
  progress(): void {
    if (this.progressGapMs > 0 && Date.now() - this.lastWrite >= this.progressGapMs) this.comment('keep-alive');
  }

  comment(text: string): void { this.write(`: ${text}\n\n`); }

  event(data: unknown): void { this.write(`data: ${JSON.stringify(data)}\n\n`); }

  /** A named event (`event:` line, then data), the way Anthropic's Messages stream is framed. */
  named(event: string, data: unknown): void { this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`); }

  /** Changes how an error ends the stream (the OpenAI error body in, the SSE text out). */
  setErrorFormat(format: (error: unknown) => string): void { this.errorText = format; }

  /**
   * Ends a started stream with an `error` event and no [DONE] (OpenAI clients raise it as an
   * APIError). Before the stream started the caller answers with a status code instead.
   */
  fail(error: unknown): void {
    this.stopTimer();
    if (!this.started) this.start();
    this.conn.end(this.errorText(error));
  }

  done(): void {
    this.stopTimer();
    this.write('data: [DONE]\n\n');
    this.conn.end();
  }

  /** Stops the keep-alives; a started stream ends (without [DONE] unless done() sent it). */
  close(): void {
    this.stopTimer();
    if (this.started) this.conn.end();
  }

  private write(s: string): void {
    if (!this.started) this.start();
    if (this.conn.write(s)) { this.lastWrite = Date.now(); this.writes++; }
  }

  private stopTimer(): void {
    if (this.timer) { clearInterval(this.timer); this.timer = null; }
  }
}
