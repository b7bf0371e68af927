// A pull's events as text for a person: on a terminal one line rewritten in place (at most ten
// times a second); elsewhere (a log, a pipe, the server's log) a line per tenth of the download,
// so logs stay short.
import { formatSize } from './pick.js';
import type { PullEvent } from './pull.js';

export interface ProgressSink {
  /** Writes a whole line (on a terminal, over the progress line). */
  line(text: string): void;
  /** Rewrites the progress line in place; absent: not a terminal. */
  overwrite?: (text: string) => void;
}

export function pullProgress(sink: ProgressSink, now: () => number = Date.now): (e: PullEvent) => void {
  let started = 0;
  let startBytes = 0;
  let lastTenth = -1;
  let lastDrawn = -Infinity;
  return (e) => {
    if (e.kind === 'picked') {
      sink.line(`picked ${e.file}${e.parts > 1 ? ` and ${e.parts - 1} more parts` : ''} (${formatSize(e.bytes)}): ${e.reason}`);
      return;
    }
    if (e.kind === 'retry') { sink.line(`${e.file}: ${e.error}; resuming (attempt ${e.attempt})`); return; }
    if (e.kind === 'verified') { sink.line(`${e.file}: sha256 ${e.sha256} verified`); return; }
    if (started === 0) { started = now(); startBytes = e.received; }
    const pct = e.total > 0 ? Math.min(100, Math.floor((e.received / e.total) * 100)) : 0;
    const secs = (now() - started) / 1000;
    const rate = secs > 0.5 ? `  ${formatSize((e.received - startBytes) / secs)}/s` : '';
    const text = `${e.parts > 1 ? `part ${e.part}/${e.parts}  ` : ''}${String(pct).padStart(3)}%  ${formatSize(e.received)} of ${formatSize(e.total)}${rate}`;
    if (sink.overwrite) {
      if (now() - lastDrawn < 100 && e.received < e.total) return;
      lastDrawn = now();
      sink.overwrite(text);
      return;
    }
    const tenth = Math.floor(pct / 10);
    if (tenth > lastTenth) { lastTenth = tenth; sink.line(text); }
  };
}
