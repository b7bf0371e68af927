// The Strata menu behind the status bar item (entries: menu-entries.ts) as a Quick Pick.
import * as vscode from 'vscode';
import type { ServerConnection } from '../server/connection.js';
import type { CompletionGate } from '../completion/pause.js';
import { statusMenuEntries } from './menu-entries.js';

export const STATUS_MENU_COMMAND = 'strata.statusMenu';

type Item = vscode.QuickPickItem & { command?: string; args?: unknown[] };

export function registerStatusMenu(context: vscode.ExtensionContext, server: ServerConnection, gate: CompletionGate): void {
  context.subscriptions.push(vscode.commands.registerCommand(STATUS_MENU_COMMAND, async () => {
    const language = vscode.window.activeTextEditor?.document.languageId;
    const s = gate.state();
    const general = s.workspace || (s.snoozeUntil !== null && gate.snoozeEnds() !== null) ? gate.reason() : null;
    const items: Item[] = statusMenuEntries(server.status.state, general, language, !!language && s.languages.includes(language)).map((e) =>
      ('separator' in e ? { label: e.separator, kind: vscode.QuickPickItemKind.Separator } : { label: e.label, description: e.description, command: e.command, args: e.args }));
    const pick = await vscode.window.showQuickPick(items, {
      title: `Strata: ${server.status.state}${server.status.model ? ` · ${server.status.model}` : ''}`,
      placeHolder: 'Strata actions',
    });
    if (pick?.command) await vscode.commands.executeCommand(pick.command, ...(pick.args ?? []));
  }));
}
