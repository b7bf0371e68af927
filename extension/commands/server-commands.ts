// Start / Stop / Restart Server, Show Log, Set API Key.
import * as vscode from 'vscode';
import type { ServerControl } from '../server/connection.js';
import { API_KEY_SECRET, isSelfChange, SERVER_KEYS } from '../config/config.js';
import { settingsChangeAction } from '../server/settings-change.js';

export function registerServerCommands(context: vscode.ExtensionContext, server: ServerControl, log: vscode.LogOutputChannel): void {
  // start() already told the user what went wrong; a command only has to not throw again.
  const quiet = (p: Promise<void>): Promise<void> => p.catch((err: Error) => log.debug(`command ended: ${err.message}`));
  context.subscriptions.push(
    vscode.commands.registerCommand('strata.startServer', () => quiet(server.start())),
    vscode.commands.registerCommand('strata.stopServer', () => quiet(server.stop())),
    vscode.commands.registerCommand('strata.restartServer', () => quiet(server.restart())),
    vscode.commands.registerCommand('strata.showLog', () => log.show()),
    vscode.commands.registerCommand('strata.setApiKey', async () => {
      const key = await vscode.window.showInputBox({
        title: 'Strata API key',
        prompt: 'Key for a remote or shared Strata (or other OpenAI-compatible) server. Stored in VS Code\'s secret storage. Leave empty to remove it.',
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return;
      if (key) await context.secrets.store(API_KEY_SECRET, key);
      else await context.secrets.delete(API_KEY_SECRET);
      if (server.status.mode === 'remote' && server.status.state !== 'stopped') await quiet(server.restart());
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
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
