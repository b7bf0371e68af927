// How the extension starts its managed server: the `strata serve` arguments and the environment.
// Each start gets a new random API key, passed in the environment (never the command line, which
// other users of the machine can read), so no other process or user can use the server or read
// its saved sessions. Node only, no vscode: the integration test starts the server this way.
import { randomBytes } from 'node:crypto';
import { buildServeArgs, type ServerSettings } from '../config/server-settings.js';

export interface ManagedLaunch {
  args: string[];
  /** Added to the extension's own environment. */
  env: Record<string, string>;
  /** The key every request must send (Authorization: Bearer). */
  apiKey: string;
}

/** The server's --api-key in its environment (serve-options.ts envOf('apiKey'); test/unit/settings-table.test.ts checks it). */
export const API_KEY_ENV = 'STRATA_API_KEY';

export function newApiKey(): string {
  return randomBytes(32).toString('base64url');
}

/** `configFile`: the --config file with the per-model section (models-section.ts), when the context is chosen per model. */
export function managedLaunch(settings: ServerSettings, port: number, opts: { sessionsDir: string; parentPid: number; apiKey: string; configFile?: string | undefined }): ManagedLaunch {
  return {
    args: [...buildServeArgs(settings, port, opts.configFile), '--sessions-dir', opts.sessionsDir, '--parent-pid', String(opts.parentPid)],
    env: { [API_KEY_ENV]: opts.apiKey },
    apiKey: opts.apiKey,
  };
}
