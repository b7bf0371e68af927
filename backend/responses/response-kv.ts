// A stored response's KV on disk, so its previous_response_id chain continues after the engine
// restarts with the earlier turns cached: once a stored response is answered, the engine writes the
// KV of its tokens (prompt and output) from the slot or the park that holds them, as a saved
// session does (<id>.session beside the response, the sessions' file format with its model
// identity and checksum). A follow-up whose tokens no replica holds loads that file (or the file
// of the follow-up that continued it) into an idle slot (or the park, within its budget) first.
// The files have their own bound and go with their responses (response-store.ts). Failures only
// cost time: the prompt is then read afresh.
import type { Logger } from '../log/logger.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ModelView } from '../served-model/model-view.js';
import type { ResponseStore } from './response-store.js';

export interface KvDeps { scheduler: Scheduler; log: Logger; responses: ResponseStore }

/**
 * Writes the KV of a stored response's tokens (in the background; the store waits for it at
 * shutdown); the file of the response it continued (`previous`) then goes (response-store.ts).
 */
export function saveResponseKv(deps: KvDeps, model: ModelView, id: string, tokens: number[], previous: string | null): void {
  if (!deps.responses.keepsKv) return;
  const work = (async () => {
    const path = deps.responses.kvPath(id);
    let lastError: unknown = null;
    for (const client of deps.scheduler.replicasByCache(tokens)) {
      try {
        const res = await client.saveSession(path, tokens, model.session.identity, JSON.stringify({ response: id }));
        if (!(await deps.responses.attachKv(id, res.bytes, previous))) {
          deps.log.info('response KV not kept (its response is gone, or it does not fit --responses-kv-mib)', { response: id, bytes: res.bytes });
        }
        return;
      } catch (e) {
        lastError = e;
      }
    }
    deps.log.warn('response KV not saved; a continuation after an engine restart reads its prompt afresh', {
      response: id, error: (lastError as Error | null)?.message ?? 'no engine is ready',
    });
  })();
  deps.responses.track(id, work);
}

/**
 * Before a continuation of `id` runs: when no replica probably holds its tokens (an engine
 * restarted, or they were evicted), loads the response's KV file into one.
 */
export async function loadResponseKv(deps: KvDeps, model: ModelView, id: string, tokens: number[]): Promise<void> {
  await deps.responses.settled(id);
  if (deps.scheduler.holdsPrefix(tokens)) return;
  const path = await deps.responses.kvOf(id);
  const client = deps.scheduler.anyReadyClient();
  if (!path || !client) return;
  try {
    const res = await client.loadSession(path, model.session.identity);
    deps.scheduler.noteCached(client.replica, Array.from(res.tokenIds));
    deps.log.info('response KV loaded', { response: id, replica: client.replica, into: res.into, tokens: res.tokens });
  } catch (e) {
    deps.log.warn('response KV not loaded; the prompt is read afresh', { response: id, error: (e as Error).message });
  }
}
