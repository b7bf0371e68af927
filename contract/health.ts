// An engine's death as data: what the server knows when an engine process ends (its signal or exit
// code, the last error line, how many deaths in a row, the model and the devices). The server puts
// it in GET /health (`engine_death`, while an engine is down or has given up) and in GET /metrics
// (`engines[].last_death`); the extension reads it through engineDeathSchema and says it in one
// sentence. No side parses the other's wording: a field the notification needs is added here.
import * as z from 'zod/mini';
import { checkBody } from './check.js';

export interface EngineDeathBody {
  replica: number;
  /** The engine process's epoch (a new one per start). */
  epoch: number;
  pid: number | null;
  /** The signal that ended the process ("SIGSEGV", "SIGKILL"), or null when it exited by itself or had not exited yet. */
  signal: string | null;
  exit_code: number | null;
  /**
   * Why it ended, as one line: the server's own reason for ending it (a load limit or silence),
   * the engine's fatal message or load error, else its last error-level log line; null when it said nothing.
   */
  last_error: string | null;
  /** Deaths in a row, this one included; 1 after an engine that had served requests (the back-off starts over). */
  deaths_in_row: number;
  /** true when the server stopped restarting it after this death (a crash loop). */
  gave_up: boolean;
  /** The model the engine ran (the served name, or the file's). */
  model: string;
  /** The devices its model was placed on (the last successful load's, else the ones it was asked for). */
  devices: string[];
  /** When it died (ISO 8601). */
  time: string;
}

export const engineDeathSchema: z.ZodMiniType<EngineDeathBody> = z.object({
  replica: z.number(), epoch: z.number(), pid: z.nullable(z.number()), signal: z.nullable(z.string()),
  exit_code: z.nullable(z.number()), last_error: z.nullable(z.string()), deaths_in_row: z.number(), gave_up: z.boolean(),
  model: z.string(), devices: z.array(z.string()), time: z.string(),
});

/** GET /health's `engine_death` (absent from other servers: null), checked against the contract. */
export function parseEngineDeath(raw: unknown): EngineDeathBody | null {
  return raw === undefined || raw === null ? null : checkBody(engineDeathSchema, raw, 'GET /health engine_death');
}
