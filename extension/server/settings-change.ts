// What a change of the server's settings (model, mode, remote URL, ...) does, by the server's state.
import type { ServerStatus } from './connection.js';

/**
 * - `ignore`: nothing runs (the next start reads the settings) or the extension made the change itself;
 * - `ask`: a server runs or starts: restarting it cuts its requests, so the user decides;
 * - `apply`: the server failed: the change is most likely the fix, so it is tried at once
 *   (a crash loop, then a switch to another model or to a remote server, needs no extra Start).
 */
export function settingsChangeAction(state: ServerStatus['state'], selfChange: boolean): 'ignore' | 'ask' | 'apply' {
  if (selfChange || state === 'stopped') return 'ignore';
  return state === 'failed' ? 'apply' : 'ask';
}
