// How the extension starts its managed server: the `strata serve` arguments and the environment.
// Each start gets a new random API key, passed in the environment (never the command line, which
// other users of the machine can read), so no other process or user can use the server or read
// its saved sessions; and how it knows the server answering on the port is that one before it
// sends the key. Node only, no vscode: the integration test starts the server this way.
import { randomBytes } from 'node:crypto';
import { newChallenge, proofMatches } from '../../common/net/key-proof.js';
import { StrataApiError, StrataClient } from '../client/client.js';
import type { Health } from '../client/types.js';
import { buildServeArgs, type ServerSettings } from '../config/server-settings.js';
import { ForeignServer } from './supervisor.js';

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

export interface ManagedLaunchOptions {
  /** Saved sessions and stored responses: in the extension's storage, not the folders a `strata serve` of the user's shares. */
  sessionsDir: string;
  responsesDir: string;
  /** The prefix cache's folder (long prompts' KV), in the extension's storage too; absent: the server's default. */
  prefixCacheDir?: string | undefined;
  parentPid: number;
  apiKey: string;
  /** The --config file with the per-model section (models-section.ts), when the context is chosen per model. */
  configFile?: string | undefined;
}

export function managedLaunch(settings: ServerSettings, port: number, opts: ManagedLaunchOptions): ManagedLaunch {
  return {
    args: [
      ...buildServeArgs(settings, port, opts.configFile),
      '--sessions-dir', opts.sessionsDir, '--responses-dir', opts.responsesDir, '--parent-pid', String(opts.parentPid),
      ...(opts.prefixCacheDir ? ['--prefix-cache-dir', opts.prefixCacheDir] : []),
    ],
    env: { [API_KEY_ENV]: opts.apiKey },
    apiKey: opts.apiKey,
  };
}

/**
 * The supervisor's probe of the managed server: /health with a fresh challenge, the key itself
 * never sent. Any answer without the proof of this start's key (common/net/key-proof.ts) is
 * another program on the port (ForeignServer); a server that is not answering yet throws as usual.
 */
export async function probeManaged(port: number, apiKey: string): Promise<Health> {
  const client = new StrataClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2000 });
  const challenge = newChallenge();
  let health: Health;
  try {
    health = await client.health(undefined, challenge);
  } catch (err) {
    // Status 0: nothing answered (refused, timed out); any other: something answered, and not as ours does.
    if (err instanceof StrataApiError && err.status !== 0) throw new ForeignServer(port);
    throw err;
  }
  if (!proofMatches(apiKey, challenge, health.keyProof)) throw new ForeignServer(port);
  return health;
}
