// Pulling a Hub model into the models folder `strata pull` uses, with progress in a notification
// (cancellable; the next pull resumes what arrived): for `hf:` model settings (hub-settings.ts)
// and for Choose Models.
import * as vscode from 'vscode';
import { defaultModelsDir } from '../../common/hub/cache-dir.js';
import { formatHubRef, type HubRef } from '../../common/hub/hub-ref.js';
import { formatSize } from '../../common/hub/pick.js';
import { pullModel } from '../../common/hub/pull.js';

export class PullCancelled extends Error {
  constructor() { super('download stopped'); }
}

/** Pulls with progress in a notification; resolves with the file to load. Cancel keeps what arrived (the next pull resumes it). */
export function pullWithProgress(ref: HubRef, log: vscode.LogOutputChannel, why = ''): Promise<string> {
  return Promise.resolve(vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Strata: pulling ${formatHubRef(ref)}${why}`, cancellable: true },
    async (progress, token) => {
      const ac = new AbortController();
      token.onCancellationRequested(() => ac.abort());
      let lastPct = 0;
      try {
        const r = await pullModel({
          ref, dir: defaultModelsDir(), signal: ac.signal,
          onEvent: (e) => {
            if (e.kind === 'verified') log.info(`${e.file}: sha256 ${e.sha256} verified`);
            if (e.kind === 'retry') log.warn(`${e.file}: ${e.error}; resuming (attempt ${e.attempt})`);
            if (e.kind !== 'progress') return;
            const pct = e.total > 0 ? Math.floor((e.received / e.total) * 100) : 0;
            progress.report({ message: `${formatSize(e.received)} of ${formatSize(e.total)}`, ...(pct > lastPct ? { increment: pct - lastPct } : {}) });
            lastPct = Math.max(lastPct, pct);
          },
        });
        log.info(`${formatHubRef(ref)}: ${r.alreadyPresent ? 'already pulled' : 'pulled'}: ${r.path}`);
        return r.path;
      } catch (err) {
        if (ac.signal.aborted) throw new PullCancelled();
        throw err;
      }
    },
  ));
}
