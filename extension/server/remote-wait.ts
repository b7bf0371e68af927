// Waiting for a server the extension does not run (remote mode, a role's own server) to be ready.
import type { StrataClient } from '../client/client.js';

/** Health of a remote server: /health if it has one, else /v1/models (any OpenAI-compatible server). */
export async function waitForRemote(client: StrataClient, signal: AbortSignal): Promise<string | null> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    let health;
    try {
      health = await client.health(signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new Error((err as Error).message);
    }
    if (health.status === 'ok') return health.model ?? (await client.models(signal).then((m) => m[0]?.id ?? null, () => null));
    if (health.status === 'error') {
      const models = await client.models(signal); // servers without /health
      return models[0]?.id ?? null;
    }
    if (Date.now() > deadline) throw new Error(`${client.baseUrl} is still loading after 2 minutes`);
    await new Promise((r) => setTimeout(r, 1000));
    if (signal.aborted) throw new Error('cancelled');
  }
}
