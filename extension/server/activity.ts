// Counts requests that occupy the model right now (chat answers, inline completions), so the
// status bar can say "busy" and the metrics feed knows when to refresh. No vscode.
import type { ActivitySink } from '../client/client.js';

export class ActivityTracker implements ActivitySink {
  private counts = { chat: 0, infill: 0 };
  private readonly listeners = new Set<(busy: boolean) => void>();

  get busy(): boolean {
    return this.counts.chat + this.counts.infill > 0;
  }

  begin(kind: 'chat' | 'infill'): void {
    const was = this.busy;
    this.counts[kind]++;
    if (!was) this.emit();
  }

  end(kind: 'chat' | 'infill'): void {
    const was = this.busy;
    this.counts[kind] = Math.max(0, this.counts[kind] - 1);
    if (was && !this.busy) this.emit();
  }

  onChange(listener: (busy: boolean) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private emit(): void {
    for (const l of this.listeners) l(this.busy);
  }
}
