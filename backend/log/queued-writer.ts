// A console writer that never blocks the event loop. Node writes to pipes and files
// synchronously on Linux (process.stdout), so a reader that stops reading (a full pipe)
// would stall serving. Lines go into a bounded queue; one fs.write at a time runs in
// libuv's thread pool; when the queue is full new lines are dropped and counted. The one such
// queue: the server's logger and the engine host's log lines both go through it.
import { write as fsWrite, writeSync } from 'node:fs';

export interface QueuedWriterOptions {
  /** File descriptor to write to (1 = stdout, 2 = stderr). */
  fd: number;
  /** Lines kept while a write is in flight; more are dropped (and counted). */
  maxQueuedLines?: number;
  /** Replaces fs.write (tests use it to simulate a stuck or failing reader). */
  writeImpl?: (fd: number, data: Buffer, cb: (err: NodeJS.ErrnoException | null, written: number) => void) => void;
  /** A line written before the next batch when lines were dropped since the last one (the engine host says so in its log). */
  dropNote?: (dropped: number) => string;
}

export class QueuedWriter {
  private readonly fd: number;
  private readonly max: number;
  private readonly writeImpl: NonNullable<QueuedWriterOptions['writeImpl']>;
  private queue: string[] = [];
  private writing = false;
  private droppedLines = 0;
  private broken = false;
  private unnoted = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly dropNote: ((dropped: number) => string) | undefined;

  constructor(opts: QueuedWriterOptions) {
    this.fd = opts.fd;
    this.max = opts.maxQueuedLines ?? 4096;
    this.writeImpl = opts.writeImpl ?? ((fd, data, cb) => fsWrite(fd, data, 0, data.length, null, cb));
    this.dropNote = opts.dropNote;
  }

  /** Lines dropped because the queue was full (or the output is gone). */
  get dropped(): number { return this.droppedLines; }
  get queued(): number { return this.queue.length; }

  /** Queues one line (a newline is added). Never blocks, never throws. */
  writeLine(line: string): void {
    if (this.broken || this.queue.length >= this.max) { this.droppedLines++; this.unnoted++; return; }
    this.queue.push(line);
    if (!this.writing) this.pump();
  }

  /** Resolves when the queue is empty or after timeoutMs (used at shutdown). */
  flush(timeoutMs = 2000): Promise<void> {
    if (!this.writing && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref?.();
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.idleWaiters = self.idleWaiters.filter((w) => w !== done);
        resolve();
      }
      this.idleWaiters.push(done);
    });
  }

  private pump(): void {
    if (this.queue.length === 0) {
      this.writing = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
      return;
    }
    this.writing = true;
    const data = Buffer.from(`${this.takeQueued()}\n`);
    this.writeFrom(data, 0);
  }

  /**
   * At exit only: writes what is still queued at once (blocking; errors ignored). A batch already
   * handed to fs.write is not repeated.
   */
  drainSync(): void {
    if (this.broken || this.queue.length === 0) return;
    try { writeSync(this.fd, `${this.takeQueued()}\n`); } catch { /* the output is gone */ }
  }

  private takeQueued(): string {
    const note = this.dropNote && this.unnoted > 0 ? [this.dropNote(this.unnoted)] : [];
    this.unnoted = 0;
    const text = [...note, ...this.queue].join('\n');
    this.queue = [];
    return text;
  }

  private writeFrom(data: Buffer, offset: number): void {
    this.writeImpl(this.fd, data.subarray(offset), (err, written) => {
      if (err) {
        if (err.code === 'EAGAIN') {
          // A non-blocking descriptor that is full: try again shortly, without spinning.
          const t = setTimeout(() => this.writeFrom(data, offset), 20);
          t.unref?.();
          return;
        }
        // EPIPE and friends: the reader is gone; count everything from now on as dropped.
        this.broken = true;
        this.droppedLines += this.queue.length;
        this.queue = [];
        this.pump();
        return;
      }
      if (offset + written < data.length) { this.writeFrom(data, offset + written); return; }
      this.pump();
    });
  }
}
