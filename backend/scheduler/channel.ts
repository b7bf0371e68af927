// A single-consumer async queue: the scheduler pushes a request's events, the HTTP handler
// iterates them. Pushing never blocks; iteration ends after close().
export class Channel<T> implements AsyncIterable<T> {
  private buffer: T[] = [];
  private closed = false;
  private wake: (() => void) | null = null;

  push(item: T): void {
    if (this.closed) return;
    this.buffer.push(item);
    this.notify();
  }

  close(): void {
    this.closed = true;
    this.notify();
  }

  get isClosed(): boolean { return this.closed; }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.buffer.length > 0) { yield this.buffer.shift()!; continue; }
      if (this.closed) return;
      await new Promise<void>((resolve) => { this.wake = resolve; });
    }
  }
}
