// What the status bar says for a server status and the latest metrics (pure, unit-tested).
import type { Metrics } from '../api/types.js';
import type { ServerStatus } from '../backend/connection.js';
import { liveTokS } from './metricsFeed.js';

/** Text and tooltip for a server status. */
export function statusBarText(s: ServerStatus, m: Metrics | undefined): { text: string; tooltip: string } {
  const model = s.model ?? 'no model';
  const working = s.state === 'ready' && (s.busy || (m !== undefined && m.running + m.queued > 0));
  switch (s.state) {
    case 'stopped':
      return { text: '$(circle-slash) Strata: stopped', tooltip: 'Strata server stopped. Click to open the Strata panel.' };
    case 'starting':
      return { text: '$(loading~spin) Strata: loading', tooltip: `Strata server starting${s.message ? ` (${s.message})` : ''}` };
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
      if (working) {
        const t = m ? liveTokS(m) : null;
        return { text: `$(pulse) Strata: busy · ${model}${t ? ` · ${t.toFixed(1)} tok/s` : ''}`, tooltip: `Strata server at ${s.url ?? '?'} is generating` };
      }
      return { text: `$(check) Strata: ready · ${model}`, tooltip: `Strata server at ${s.url ?? '?'} (${s.mode}), model ${model}` };
    }
  }
}
