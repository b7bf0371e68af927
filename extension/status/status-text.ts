// What the status bar says for a server status and the latest metrics (pure, unit-tested). The
// tooltip is also the item's accessible label: slots, speed, the last completion's latency and
// whether completions are paused.
import type { Metrics } from '../../contract/metrics.js';
import type { ServerStatus } from '../server/connection.js';
import { liveTokS } from './metrics-feed.js';

export interface CompletionStatus {
  /** The last inline completion's server round trip, ms. */
  lastLatencyMs: number | null;
  /** Why automatic completions are off, or null when they are on. */
  paused: string | null;
}

const CLICK = 'Click for Strata actions.';

/** Slots, speed and completion lines for the tooltip of a ready server. */
function details(m: Metrics | undefined, c: CompletionStatus | undefined): string[] {
  const lines: string[] = [];
  if (m?.slots.length) {
    const busy = m.slots.filter((s) => s.state !== 'idle').length;
    lines.push(`Slots: ${busy} of ${m.slots.length} busy${m.queued ? `, ${m.queued} queued` : ''}`);
  }
  const now = m ? liveTokS(m) : null;
  const last = [...(m?.requests ?? [])].reverse().find((r) => r.decodeTokS !== null)?.decodeTokS ?? null;
  if (now) lines.push(`Speed: ${now.toFixed(1)} tok/s now`);
  else if (last) lines.push(`Speed: ${last.toFixed(1)} tok/s (last request)`);
  if (c) {
    if (c.lastLatencyMs !== null) lines.push(`Last completion: ${Math.round(c.lastLatencyMs)} ms`);
    lines.push(`Inline completions: ${c.paused ?? 'on'}`);
  }
  return lines;
}

/** Text and tooltip for a server status. */
export function statusBarText(s: ServerStatus, m: Metrics | undefined, c?: CompletionStatus): { text: string; tooltip: string } {
  const model = s.model ?? 'no model';
  const working = s.state === 'ready' && (s.busy || (m !== undefined && m.running + m.queued > 0));
  const paused = c?.paused ? ' $(debug-pause)' : '';
  switch (s.state) {
    case 'stopped':
      return { text: `$(circle-slash) Strata: stopped${paused}`, tooltip: `Strata server stopped. ${CLICK}` };
    case 'starting':
      return { text: `$(loading~spin) Strata: loading${paused}`, tooltip: `Strata server starting${s.message ? ` (${s.message})` : ''}` };
    case 'failed':
      return { text: '$(error) Strata: failed', tooltip: `Strata server failed: ${s.message ?? 'unknown error'}` };
    case 'ready': {
      // The server restarts a dead engine itself; say so while it does.
      const down = m?.engines.filter((e) => !e.alive) ?? [];
      if (down.length) {
        return {
          text: `$(warning) Strata: engine restarting · ${model}`,
          tooltip: `Strata: engine ${down.map((e) => `replica ${e.replica} (restarts ${e.restarts})`).join(', ')} is down; the server is restarting it. Requests on it fail until it is back. See "Strata: Show Log".`,
        };
      }
      const info = details(m, c);
      const tip = (first: string): string => [first, ...info, CLICK].join('\n');
      if (working) {
        const t = m ? liveTokS(m) : null;
        return { text: `$(pulse) Strata: busy · ${model}${t ? ` · ${t.toFixed(1)} tok/s` : ''}${paused}`, tooltip: tip(`Strata server at ${s.url ?? '?'} is generating`) };
      }
      return { text: `$(check) Strata: ready · ${model}${paused}`, tooltip: tip(`Strata server at ${s.url ?? '?'} (${s.mode}), model ${model}`) };
    }
  }
}
