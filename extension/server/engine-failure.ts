// What the server's /health says when every engine gave up after crashing again and again
// ("failed"): its `engine_death` (contract/health.ts: signal or exit code, the engine's last error
// line, deaths in a row, model, devices), told in one sentence a notification can show. The
// server's `reason` text is quoted in the log only, never parsed.
import type { EngineDeathBody } from '../../contract/health.js';

/** One sentence ("the engine stopped …"): what happened, to which model on which device, and the last error line. */
export function engineFailureMessage(death: EngineDeathBody | null): string {
  if (!death) return 'the engine stopped after crashing again and again; see the log.';
  const how = death.signal ? ` (signal ${death.signal})` : death.exit_code !== null ? ` (exit code ${death.exit_code})` : '';
  const times = death.deaths_in_row > 1 ? ` after ${death.deaths_in_row} crashes in a row` : '';
  const where = [`running ${death.model}`, death.devices.length ? `on ${death.devices.join(', ')}` : null].filter(Boolean).join(' ');
  const last = death.last_error ? ` Last engine error: ${death.last_error}` : ' The engine wrote no error line; see the log.';
  return `the engine stopped${times}${how} ${where}.${last}`;
}
