// The user's controls over inline completions: pause for the workspace or a language, snooze,
// resume, and ask now (Alt+\). The pause state lives where it belongs: the workspace's own state,
// the `strata.inlineCompletion.disabledLanguages` setting, and a snooze time in global state.
import * as vscode from 'vscode';
import { SECTION, setting } from '../config/config.js';
import { CompletionGate, type PauseState } from './pause.js';

const WORKSPACE_KEY = 'strata.completions.pausedWorkspace';
const SNOOZE_KEY = 'strata.completions.snoozeUntil';
const LANGUAGES = 'inlineCompletion.disabledLanguages' as const;
/** Context key for when-clauses: automatic completions are paused or snoozed. */
const PAUSED_KEY = 'strata.completionsPaused';

export function registerCompletionControls(context: vscode.ExtensionContext): CompletionGate {
  const gate = new CompletionGate({
    get: (): PauseState => ({
      workspace: context.workspaceState.get<boolean>(WORKSPACE_KEY, false),
      languages: (setting(LANGUAGES) as string[]).filter((l) => typeof l === 'string'),
      snoozeUntil: context.globalState.get<number | null>(SNOOZE_KEY, null),
    }),
    set: async (s) => {
      await context.workspaceState.update(WORKSPACE_KEY, s.workspace || undefined);
      await context.globalState.update(SNOOZE_KEY, s.snoozeUntil ?? undefined);
      const cfg = vscode.workspace.getConfiguration(SECTION);
      const now = setting(LANGUAGES) as string[];
      if (JSON.stringify(now) !== JSON.stringify(s.languages)) await cfg.update(LANGUAGES, s.languages.length ? s.languages : undefined, vscode.ConfigurationTarget.Global);
    },
  });

  // The snooze ends by itself: wake up then, so the status bar and the context key follow.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const sync = (): void => {
    clearTimeout(timer);
    const ends = gate.snoozeEnds();
    if (ends !== null) timer = setTimeout(() => gate.changed(), Math.min(ends - Date.now() + 50, 2 ** 31 - 1));
    void vscode.commands.executeCommand('setContext', PAUSED_KEY, gate.reason() !== null);
  };
  const language = (): string | undefined => vscode.window.activeTextEditor?.document.languageId;

  context.subscriptions.push(
    gate.onChange(sync),
    { dispose: () => clearTimeout(timer) },
    vscode.workspace.onDidChangeConfiguration((e) => { if (e.affectsConfiguration(`${SECTION}.${LANGUAGES}`)) gate.changed(); }),
    vscode.commands.registerCommand('strata.triggerCompletion', () => vscode.commands.executeCommand('editor.action.inlineSuggest.trigger')),
    vscode.commands.registerCommand('strata.pauseCompletions', () => gate.pauseWorkspace()),
    vscode.commands.registerCommand('strata.pauseCompletionsForLanguage', async (id?: unknown) => {
      const lang = typeof id === 'string' ? id : language();
      if (!lang) return void vscode.window.showInformationMessage('Strata: open a file of the language to pause completions for.');
      await gate.pauseLanguage(lang);
    }),
    vscode.commands.registerCommand('strata.snoozeCompletions', () => gate.snooze()),
    vscode.commands.registerCommand('strata.resumeCompletions', () => gate.resume()),
    vscode.commands.registerCommand('strata.resumeCompletionsForLanguage', async (id?: unknown) => {
      const lang = typeof id === 'string' ? id : language();
      if (lang) await gate.resume(lang);
    }),
  );
  sync();
  return gate;
}
