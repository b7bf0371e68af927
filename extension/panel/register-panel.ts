// Wires the panel: the hub, its two views, the Open Panel command, and the data it shows.
import * as vscode from 'vscode';
import { join } from 'node:path';
import type { ServerConnection } from '../server/connection.js';
import { rememberingSessions, type ConversationStore } from '../sessions/conversation-memory.js';
import type { MetricsFeed } from '../status/metrics-feed.js';
import type { PanelCommand } from '../../contract/panel.js';
import { fileContext, selectionContext, type LastEditor } from '../context/editor-context.js';
import type { InlineEditHandle } from '../edit/inline-edit.js';
import type { PanelCodebase } from './hub.js';
import type { AgentProvider } from '../agent/agent-chats.js';
import { PanelHub } from './hub.js';
import { panelEditor } from './panel-editor.js';
import { PanelViews, SIDEBAR_VIEW_ID } from './panel-views.js';

const COMMANDS: Record<PanelCommand, string> = {
  start: 'strata.startServer', stop: 'strata.stopServer', restart: 'strata.restartServer',
  selectModel: 'strata.selectModel', showLog: 'strata.showLog', runBench: 'strata.runBenchmark',
};

export interface PanelHandle {
  hub: PanelHub;
  open(): void;
}

export interface PanelOptions {
  conversations: ConversationStore;
  clearBench: () => Promise<void>;
  lastEditor: LastEditor;
  edit: InlineEditHandle;
  codebase?: PanelCodebase | undefined;
  agent?: AgentProvider | undefined;
  /** Why Agent mode cannot run on the chat role's server, else null. */
  agentBlocked?: () => string | null;
}

/** `server`: the main server (sessions, devices, traces); `chat`: the chat role's (the main one unless chat has its own). */
export function registerPanel(context: vscode.ExtensionContext, server: ServerConnection, chat: ServerConnection, feed: MetricsFeed, log: vscode.LogOutputChannel, opts: PanelOptions): PanelHandle {
  const { conversations, clearBench } = opts;
  const hub = new PanelHub({
    client: () => (server.client ? rememberingSessions(server.client, conversations) : undefined),
    chatClient: () => chat.client,
    ...(opts.agentBlocked ? { agentBlocked: opts.agentBlocked } : {}),
    ensureClient: async () => rememberingSessions(await chat.ensureReady(), conversations),
    conversationSettings: conversations,
    runCommand: (c) => void vscode.commands.executeCommand(COMMANDS[c]),
    revealSession: (name, reported) => {
      // The managed server keeps sessions where the extension told it to (--sessions-dir).
      const path = reported ?? (server.status.mode === 'managed' ? join(context.globalStorageUri.fsPath, 'sessions', `${name}.session`) : null);
      if (!path) return void vscode.window.showInformationMessage(`Strata: the server did not say where session "${name}" is stored.`);
      void vscode.window.showInformationMessage(`Session "${name}": ${path}`, 'Copy Path', 'Reveal in File Explorer').then((b) => {
        if (b === 'Copy Path') void vscode.env.clipboard.writeText(path);
        else if (b) void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(path));
      });
    },
    clearBench,
    visibilityChanged: (v) => feed.setPanelVisible(v),
    log: (m) => log.debug(m),
    editor: panelEditor(opts.lastEditor, opts.edit),
    codebase: opts.codebase,
    agent: opts.agent,
  });
  const views = new PanelViews(context.extensionUri, hub);
  /** Attaches context to the chat the user looked at last; with no chat open, the sidebar's opens. */
  const attach = async (item: ReturnType<typeof selectionContext>): Promise<void> => {
    if (typeof item === 'string') return void vscode.window.showInformationMessage(`Strata: ${item}`);
    if (!(await hub.addContext(item))) await vscode.commands.executeCommand(`${SIDEBAR_VIEW_ID}.focus`);
  };
  context.subscriptions.push(
    ...views.register(),
    { dispose: () => hub.dispose() },
    server.onDidChange((s) => hub.serverChanged(s)),
    feed.onMetrics((m) => hub.metricsChanged(m)),
    vscode.commands.registerCommand('strata.openPanel', () => views.open()),
    vscode.commands.registerCommand('strata.addSelectionToChat', () => attach(selectionContext(vscode.window.activeTextEditor ?? opts.lastEditor.get()))),
    vscode.commands.registerCommand('strata.addFileToChat', async (uri?: unknown) => {
      const doc = uri instanceof vscode.Uri ? await vscode.workspace.openTextDocument(uri) : opts.lastEditor.get()?.document;
      await attach(fileContext(doc));
    }),
  );
  hub.serverChanged(server.status);
  return { hub, open: () => views.open() };
}
