// Reads request bodies within three bounds: a size limit per body (a declared Content-Length over
// it is refused before reading; a chunked body is cut off once it passes it), a budget of bytes
// held by all bodies being read at once (so many concurrent large bodies cannot grow the heap
// without bound), and a time limit from the headers to the body's end (so a client that dribbles
// its body cannot hold a connection and part of the budget forever).
import type { IncomingMessage } from 'node:http';

export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`request body is larger than the limit of ${limit} bytes`);
  }
}

/** The budget of bytes being read is spent by other requests' bodies: the client may retry. */
export class BodyBudgetSpent extends Error {
  constructor(readonly budget: number) {
    super(`the server is reading ${budget} bytes of request bodies already; retry shortly`);
  }
}

/** The body did not arrive within the time limit. */
export class BodyTimedOut extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the request body did not arrive within ${timeoutMs} ms`);
  }
}

/** Bytes held by bodies being read, across every request of the server. */
export class BodyBudget {
  private used = 0;
  constructor(readonly bytes: number) {}

  /** Takes n bytes; false (nothing taken) when that would pass the budget. */
  take(n: number): boolean {
    if (this.used + n > this.bytes) return false;
    this.used += n;
    return true;
  }

  give(n: number): void {
    this.used = Math.max(0, this.used - n);
  }

  /** Bytes held now (for tests and metrics). */
  held(): number {
    return this.used;
  }
}

/** setTimeout / clearTimeout, injectable so tests drive the body timeout. */
export interface BodyTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: BodyTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface BodyReaderOptions {
  /** Largest body, bytes. */
  limitBytes: number;
  /** Bytes all bodies being read may hold together. */
  budgetBytes: number;
  /** Time from the start of reading to the body's end, ms (0 = none). */
  timeoutMs: number;
  timers?: BodyTimers;
}

/** The server's one body reader (shared by every model's routes, so the budget is server-wide). */
export class BodyReader {
  readonly limitBytes: number;
  readonly timeoutMs: number;
  readonly budget: BodyBudget;
  private readonly timers: BodyTimers;

  constructor(opts: BodyReaderOptions) {
    this.limitBytes = opts.limitBytes;
    this.timeoutMs = opts.timeoutMs;
    this.budget = new BodyBudget(opts.budgetBytes);
    this.timers = opts.timers ?? realTimers;
  }

  /** The body's bytes, or BodyTooLarge, BodyBudgetSpent, BodyTimedOut or the stream's own error. */
  read(req: IncomingMessage): Promise<Buffer> {
    const limit = this.limitBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume(); // discard; the connection closes after the answer
      return Promise.reject(new BodyTooLarge(limit));
    }
    // A declared length is taken whole up front, so a body that fits when it starts always finishes.
    const upFront = Number.isFinite(declared) && declared > 0 ? declared : 0;
    if (!this.budget.take(upFront)) {
      req.resume();
      return Promise.reject(new BodyBudgetSpent(this.budget.bytes));
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let held = upFront;
      let settled = false;
      const settle = (err: Error | null) => {
        if (settled) return;
        settled = true;
        if (timer !== null) this.timers.clear(timer);
        this.budget.give(held);
        held = 0;
        if (err) {
          req.removeListener('data', onData);
          req.resume(); // discard the rest; the connection closes after the answer
          reject(err);
        } else {
          resolve(Buffer.concat(chunks));
        }
      };
      const onData = (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size > limit) { settle(new BodyTooLarge(limit)); return; }
        if (size > held) {
          const more = size - held;
          if (!this.budget.take(more)) { settle(new BodyBudgetSpent(this.budget.bytes)); return; }
          held += more;
        }
        chunks.push(chunk);
      };
      const timer = this.timeoutMs > 0 ? this.timers.set(() => settle(new BodyTimedOut(this.timeoutMs)), this.timeoutMs) : null;
      req.on('data', onData);
      req.on('end', () => settle(null));
      req.on('error', (err) => settle(err));
      req.on('aborted', () => settle(new Error('the client closed the connection while sending the body')));
    });
  }
}
