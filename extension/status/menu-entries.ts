// The entries of the Strata menu behind the status bar item, for a server state and the
// completions' pause state (pure, unit-tested; status-menu.ts shows them as a Quick Pick).
import type { ServerStateKind } from '../../contract/panel.js';

export type MenuEntry =
  | { separator: string }
  | { label: string; description?: string; command: string; args?: unknown[] };

export function statusMenuEntries(state: ServerStateKind, paused: string | null, language: string | undefined, languagePaused: boolean): MenuEntry[] {
  const out: MenuEntry[] = [{ separator: 'Inline completions and next edits' }];
  // paused: the workspace pause or the snooze (a language pause is languagePaused).
  if (paused) out.push({ label: '$(debug-start) Resume Completions', description: paused, command: 'strata.resumeCompletions' });
  else {
    out.push({ label: '$(debug-pause) Pause Completions in This Workspace', command: 'strata.pauseCompletions' });
    if (language && !languagePaused) out.push({ label: `$(debug-pause) Pause Completions for ${language}`, command: 'strata.pauseCompletionsForLanguage', args: [language] });
    out.push({ label: '$(bell-slash) Snooze Completions for 30 Minutes', command: 'strata.snoozeCompletions' });
  }
  if (language && languagePaused) out.push({ label: `$(debug-start) Resume Completions for ${language}`, command: 'strata.resumeCompletionsForLanguage', args: [language] });
  out.push({ label: '$(sparkle) Trigger Completion Now', description: 'Alt+\\', command: 'strata.triggerCompletion' });
  out.push({ separator: 'Server' });
  if (state === 'stopped' || state === 'failed') out.push({ label: '$(play) Start Server', command: 'strata.startServer' });
  else out.push({ label: '$(debug-stop) Stop Server', command: 'strata.stopServer' }, { label: '$(debug-restart) Restart Server', command: 'strata.restartServer' });
  out.push(
    { label: '$(library) Switch Model…', command: 'strata.selectModel' },
    { label: '$(layers) Open Panel', command: 'strata.openPanel' },
    { label: '$(output) Show Log', command: 'strata.showLog' },
  );
  return out;
}
