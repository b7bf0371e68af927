// Start / Stop / Restart Server, Show Log, Set API Key (kept for the server it is entered for).
import * as vscode from 'vscode';
import type { ServerControl } from '../server/connection.js';
import { keyOrigin } from '../client/key-policy.js';
import { API_KEY_SECRET, apiKey, isSelfChange, remoteUrl, SERVER_KEYS, storeBoundKey, storedKeyOrigin } from '../config/config.js';
import { settingsChangeAction } from '../server/settings-change.js';

export function registerServerCommands(context: vscode.ExtensionContext, server: ServerControl, log: vscode.LogOutputChannel): void {
  // start() already told the user what went wrong; a command only has to not throw again.
  const quiet = (p: Promise<void>): Promise<void> => p.catch((err: Error) => log.debug(`command ended: ${err.message}`));
  // A key kept before keys were bound to a server is bound now, to strata.remoteUrl's server.
  void apiKey(context.secrets).catch(() => undefined);
  const setKey = async (): Promise<void> => {
    const origin = keyOrigin(remoteUrl());
    if (origin === null) {
      void vscode.window.showInformationMessage('Strata: set strata.remoteUrl first: the key is kept for the server it is entered for.', 'Open Settings')
        .then((b) => b && vscode.commands.executeCommand('workbench.action.openSettings', 'strata.remoteUrl'));
      return;
    }
    const key = await vscode.window.showInputBox({
      title: 'Strata API key',
      prompt: `Key for ${origin} (strata.remoteUrl); a changed address asks again. Stored in VS Code's secret storage. Leave empty to remove it.`,
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key) await storeBoundKey(context.secrets, API_KEY_SECRET, key, remoteUrl());
    else await context.secrets.delete(API_KEY_SECRET);
    if (server.status.mode === 'remote' && server.status.state !== 'stopped') await quiet(server.restart());
  };
  context.subscriptions.push(
    vscode.commands.registerCommand('strata.startServer', () => quiet(server.start())),
    vscode.commands.registerCommand('strata.stopServer', () => quiet(server.stop())),
    vscode.commands.registerCommand('strata.restartServer', () => quiet(server.restart())),
    vscode.commands.registerCommand('strata.showLog', () => log.show()),
    vscode.commands.registerCommand('strata.setApiKey', setKey),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('strata.remoteUrl')) {
        // The key stays with the server it was entered for: ask for the new one's.
        const was = await storedKeyOrigin(context.secrets, API_KEY_SECRET);
        const now = keyOrigin(remoteUrl());
        if (was !== null && now !== null && was !== now) {
          void vscode.window.showInformationMessage(`Strata: the API key was entered for ${was}, so it is not sent to ${now}. Enter the key for ${now}?`, 'Set API Key')
            .then((b) => b && setKey());
        }
      }
      if (!SERVER_KEYS.some((k) => e.affectsConfiguration(`strata.${k}`))) return;
      const action = settingsChangeAction(server.status.state, isSelfChange());
      if (action === 'apply') {
        log.info('server settings changed while the server had failed: starting again with them');
        await quiet(server.restart());
        return;
      }
      if (action !== 'ask') return;
      const pick = await vscode.window.showInformationMessage('Strata server settings changed. Restart the server to apply them?', 'Restart');
      if (pick === 'Restart') await quiet(server.restart());
    }),
  );
}
