// "Strata: Save Session" / "Strata: Restore Session" from the palette. Save takes the panel's
// current conversation; Restore loads a saved one into the panel's chat.
import * as vscode from 'vscode';
import type { ServerConnection } from '../server/connection.js';
import { fmtBytes } from '../../contract/units.js';
import type { PanelHub } from '../panel/hub.js';
import { sessionNameAdvice } from '../../contract/session-name.js';
import { rememberingSessions, type ConversationStore } from '../sessions/conversation-memory.js';

export function registerSessionCommands(context: vscode.ExtensionContext, server: ServerConnection, hub: PanelHub, conversations: ConversationStore, openPanel: () => void): void {
  const ready = async () => rememberingSessions(await server.ensureReady(), conversations);
  context.subscriptions.push(
    vscode.commands.registerCommand('strata.saveSession', async (nameArg?: unknown) => {
      const conv = hub.lastConversation();
      if (!conv?.messages.length) {
        const pick = await vscode.window.showInformationMessage('Strata: there is no conversation to save yet. Chat in the Strata panel first (or use /save NAME with @strata).', 'Open Panel');
        if (pick) openPanel();
        return;
      }
      const name = typeof nameArg === 'string' && nameArg.trim() ? nameArg.trim() : await vscode.window.showInputBox({
        title: 'Save Strata session', prompt: 'Name for this conversation', value: conv.name === 'chat' ? '' : conv.name,
        validateInput: (v) => sessionNameAdvice(v.trim()),
      });
      if (!name) return;
      try {
        const client = await ready();
        const saved = await client.saveSession(name.trim(), conv.messages);
        void vscode.window.showInformationMessage(`Strata: saved session "${saved.name}"${saved.tokens !== null ? ` (${saved.tokens} tokens)` : ''}.`);
        await hub.refreshSessions();
      } catch (err) {
        void vscode.window.showErrorMessage(`Strata: could not save the session: ${(err as Error).message}`);
      }
    }),
    vscode.commands.registerCommand('strata.compactAgentConversation', async () => {
      const problem = await hub.compactLast();
      if (problem) void vscode.window.showInformationMessage(`Strata: ${problem}.`);
    }),
    vscode.commands.registerCommand('strata.restoreSession', async (nameArg?: unknown) => {
      try {
        const client = await ready();
        let name = typeof nameArg === 'string' ? nameArg : undefined;
        if (!name) {
          const list = await client.sessions();
          if (!list.length) return void vscode.window.showInformationMessage('Strata: no saved sessions yet.');
          const pick = await vscode.window.showQuickPick(list.map((s) => ({
            label: s.name,
            description: [s.tokens !== null ? `${s.tokens} tokens` : null, fmtBytes(s.bytes), s.model].filter(Boolean).join(' · '),
            detail: s.savedAt ? new Date(s.savedAt).toLocaleString() : undefined,
          })), { title: 'Restore Strata session' });
          name = pick?.label;
        }
        if (!name) return;
        const r = await client.restoreSession(name);
        openPanel();
        if (r.messages?.length) hub.loadChat(r.name, r.messages);
        else hub.notice('info', `Restored session "${r.name}" into the server's cache (the server did not send its messages).`);
      } catch (err) {
        void vscode.window.showErrorMessage(`Strata: could not restore the session: ${(err as Error).message}`);
      }
    }),
  );
}
