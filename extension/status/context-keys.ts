// Context keys for when-clauses and `enablement` in package.json: Start only while stopped or
// failed, Stop and Restart while a server runs or starts, and after it failed (try again).
import * as vscode from 'vscode';
import type { ServerConnection } from '../server/connection.js';

export function registerContextKeys(context: vscode.ExtensionContext, server: ServerConnection): void {
  const set = (): void => {
    const s = server.status.state;
    void vscode.commands.executeCommand('setContext', 'strata.serverState', s);
    void vscode.commands.executeCommand('setContext', 'strata.serverRunning', s === 'ready' || s === 'starting');
  };
  context.subscriptions.push(server.onDidChange(set));
  set();
}
