// Strata: Use with a Coding Agent: pick Claude Code, Codex CLI, opencode or Continue's CLI, and a
// terminal runs it against the server the extension uses (the managed one is started first when
// needed), through `strata launch` (docs/agents.md).
import * as vscode from 'vscode';
import type { ServerConnection } from '../server/connection.js';
import { AGENT_PICKS, agentTerminalOptions } from './agent-terminal.js';

export function registerAgentCommand(context: vscode.ExtensionContext, server: ServerConnection, log: vscode.LogOutputChannel): void {
  context.subscriptions.push(vscode.commands.registerCommand('strata.useWithCodingAgent', async () => {
    const pick = await vscode.window.showQuickPick(
      AGENT_PICKS.map((a) => ({ label: a.title, description: `${a.bin} · npm ${a.npmPackage}`, agent: a.name })),
      { title: 'Use Strata with a coding agent', placeHolder: 'The agent runs in a terminal against the Strata server' },
    );
    if (!pick) return;
    let client;
    try {
      client = await server.ensureReady();
    } catch (e) {
      log.warn(`Use with a Coding Agent: no server: ${(e as Error).message}`);
      void vscode.window.showErrorMessage(`Strata: the server is not ready: ${(e as Error).message}`);
      return;
    }
    const opts = agentTerminalOptions(pick.agent, client, { execPath: process.execPath, cli: vscode.Uri.joinPath(context.extensionUri, 'dist', 'strata.mjs').fsPath });
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
    const terminal = vscode.window.createTerminal({ ...opts, ...(folder ? { cwd: folder.uri } : {}) });
    terminal.show();
  }));
}
