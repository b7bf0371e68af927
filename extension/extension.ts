// Strata for VS Code: activation wires one feature per register* call. Features get narrow
// interfaces (ServerConnection, PanelHub, MetricsFeed), never an app object.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { ActivityTracker } from './server/activity.js';
import { registerEngineWatch } from './server/engine-watch.js';
import { ServerManager } from './server/manager.js';
import type { BenchController } from './bench/bench-runner.js';
import { registerBenchmark } from './bench/bench-runner.js';
import { registerAgent } from './agent/register-agent.js';
import { registerChatParticipant } from './chat/participant.js';
import { registerServerCommands } from './commands/server-commands.js';
import { registerGpuBackendCommand } from './commands/gpu-backend-command.js';
import { registerAgentCommand } from './commands/agent-command.js';
import { registerSessionCommands } from './commands/session-commands.js';
import { LastEditor } from './context/editor-context.js';
import { registerCodebase } from './codebase/register-codebase.js';
import { registerCompletionControls } from './completion/controls.js';
import { registerInlineCompletions } from './completion/provider.js';
import { CompletionStats } from './completion/stats.js';
import { allowInsecureRemote, autoStart, roleApiKey, roleModelName, roleServerUrl } from './config/config.js';
import { registerRoleServerCommands } from './commands/role-server-commands.js';
import { RoleServers } from './server/role-servers.js';
import { registerInlineEdit } from './edit/inline-edit.js';
import { registerChatModelProvider } from './lm/provider.js';
import { registerNextEdit } from './next-edit/controller.js';
import { registerSelectModel } from './models/select-model.js';
import { registerChooseModels } from './models/choose-models.js';
import { registerPanel } from './panel/register-panel.js';
import { FileConversationStore } from './sessions/conversation-memory.js';
import { registerContextKeys } from './status/context-keys.js';
import { registerMetricsFeed } from './status/register-metrics-feed.js';
import { registerStatusBar } from './status/status-bar.js';
import { registerStatusMenu } from './status/status-menu.js';
import { platformMismatch } from './platform/check.js';

let stopServer: (() => Promise<void>) | undefined;

export function activate(context: vscode.ExtensionContext): void {
  // A VSIX of another platform: say which one this computer needs, and start nothing.
  const wrongPlatform = platformMismatch(context.extensionUri.fsPath, String(context.extension.packageJSON.version ?? ''));
  if (wrongPlatform) {
    void vscode.window.showErrorMessage(wrongPlatform);
    return;
  }
  const log = vscode.window.createOutputChannel('Strata', { log: true });
  const activity = new ActivityTracker();
  const server = new ServerManager(context, log, activity);
  const lastEditor = new LastEditor();
  context.subscriptions.push(log, server, lastEditor);
  stopServer = () => server.stop();

  // Each role's features talk to the main server or to the role's own server (strata.*ServerUrl).
  const roles = new RoleServers({
    main: server, log, activity,
    settings: { url: roleServerUrl, apiKey: (r, url) => roleApiKey(context.secrets, r, url), model: roleModelName, allowInsecureKey: allowInsecureRemote },
  });
  registerRoleServerCommands(context, roles, server);
  const chat = roles.connection('chat');

  const conversations = new FileConversationStore(join(context.globalStorageUri.fsPath, 'conversations'));
  const feed = registerMetricsFeed(context, server, activity);
  registerContextKeys(context, server);
  registerServerCommands(context, server, log);
  registerSelectModel(context, server, log);
  registerChooseModels(context, server, log);
  registerEngineWatch(context, server, feed, log, vscode.Uri.joinPath(context.extensionUri, 'docs', 'user-guide.md'));
  registerGpuBackendCommand(context, server, log);
  registerAgentCommand(context, server, log);

  const stats = new CompletionStats();
  const gate = registerCompletionControls(context);
  const status = registerStatusBar(context, server, feed, stats, gate, roles);
  registerStatusMenu(context, server, gate);

  const edit = registerInlineEdit(context, chat);
  const codebase = registerCodebase(context, { embedding: roles.connection('embedding'), rerank: roles.connection('rerank') }, activity, log);
  let bench: BenchController | undefined;
  const agent = registerAgent(context, { log, codebase: codebase.service ? (q, o, s) => codebase.service!.search(q, o, s) : undefined });
  const panel = registerPanel(context, server, chat, feed, log, {
    agentBlocked: () => roles.agentBlocked(),
    conversations, clearBench: async () => bench?.clear(), lastEditor, edit, agent,
    codebase: codebase.search ? { view: codebase.view, search: codebase.search, searchView: (q) => codebase.service!.searchView(q), action: codebase.action } : undefined,
  });
  context.subscriptions.push(codebase.onChange((v) => panel.hub.indexChanged(v)));
  bench = registerBenchmark(context, server, log, (v) => panel.hub.benchChanged(v), () => { panel.open(); panel.hub.showTab('bench'); });
  panel.hub.benchChanged(bench.view());
  registerSessionCommands(context, server, panel.hub, conversations, () => panel.open());

  registerChatModelProvider(context, chat);
  registerChatParticipant(context, chat, conversations, codebase.search);

  const statsChanged = throttled(500, () => { panel.hub.completionStatsChanged(stats.view()); status.refresh(); });
  const nextEdit = registerNextEdit(context, roles.connection('nextEdit'), gate, log);
  const indexSearch = codebase.search;
  registerInlineCompletions(context, roles.connection('completion'), stats, gate, statsChanged, log, nextEdit.itemsAt,
    indexSearch && (async (q) => (await indexSearch(q, { limit: 4, rerankTop: 0, vectors: false })).hits.map((h) => h.chunk)));
  panel.hub.completionStatsChanged(stats.view());

  if (autoStart()) void server.start().catch((err: Error) => log.info(`auto-start did not start the server: ${err.message}`));
}

/** Stops the managed server (SIGTERM, then SIGKILL) before VS Code unloads the extension. */
export async function deactivate(): Promise<void> {
  await stopServer?.();
}

/** Calls f at most once per `ms`, always with the latest data (a trailing call). */
function throttled(ms: number, f: () => void): () => void {
  // biome-ignore lint/correctness/noUnusedVariables: read by ??= below
  let timer: ReturnType<typeof setTimeout> | undefined;
  return () => {
    timer ??= setTimeout(() => { timer = undefined; f(); }, ms);
  };
}
