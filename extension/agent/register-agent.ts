// Wires Agent mode into VS Code: the loop's tools (built-in, and MCP servers' from the settings),
// the workspace (documents, Problems, ripgrep, the terminal, WorkspaceEdits), workspace trust
// (no tools in Restricted Mode), the Open Diff view, and the mode each saved session was in.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { agentSettings } from '../config/config.js';
import { CheckpointStore } from './checkpoints.js';
import { loadRules, ruleViews, withRules } from './rules.js';
import { TodoList, todoTool } from './todo-tool.js';
import type { AgentProvider } from './agent-chats.js';
import { CHANGE_TOOLS } from './change-tools.js';
import { ProposalDiffs } from './diff-view.js';
import { AgentLoop } from './loop.js';
import { mcpDeclinedNote, McpTools } from './mcp.js';
import { mcpConsent } from './mcp-consent.js';
import { WorkspacePaths } from './paths.js';
import { agentSystemPrompt } from './prompt.js';
import { READ_TOOLS, searchCodebase } from './read-tools.js';
import { ToolRegistry } from './registry.js';
import { AgentTerminal } from './terminal-command.js';
import type { CodebaseSearchFn } from './types.js';
import { VscodeWorkspace } from './vscode-workspace.js';

function folders(): vscode.WorkspaceFolder[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
}

/** files.exclude globs that are on (list_files and search_text leave them out, as the Explorer does). */
function filesExclude(): string[] {
  const ex = vscode.workspace.getConfiguration('files').get<Record<string, boolean>>('exclude', {});
  return Object.entries(ex).filter(([, on]) => on === true).map(([g]) => g);
}

export function registerAgent(context: vscode.ExtensionContext, opts: { codebase?: CodebaseSearchFn | undefined; log: vscode.LogOutputChannel }): AgentProvider {
  const terminal = new AgentTerminal();
  const diffs = new ProposalDiffs();
  const mcp = new McpTools((m) => opts.log.info(m), () => folders()[0]?.uri.fsPath, mcpConsent(context.globalState));
  context.subscriptions.push(terminal, diffs, { dispose: () => void mcp.dispose() });
  const builtin = (): ToolRegistry => new ToolRegistry([...READ_TOOLS.filter((t) => t !== searchCodebase || opts.codebase), ...CHANGE_TOOLS]);
  let lastTools = builtin().specs();
  // The last system message a loop got (with the rules then): saved sessions hold it.
  let lastSystem: string | null = null;
  const system = (): string => lastSystem ?? agentSystemPrompt(folders().map((f) => f.name));
  // Checkpoints live in the extension's storage for this workspace, never in the user's folder.
  const checkpoints = new CheckpointStore(join((context.storageUri ?? context.globalStorageUri).fsPath, 'agent-checkpoints'), (m) => opts.log.warn(m));
  const workspaceNow = (): VscodeWorkspace | string => {
    const open = folders();
    if (!open.length) return 'Restore needs the workspace folder the agent worked in';
    return new VscodeWorkspace(new WorkspacePaths(open.map((f) => ({ name: f.name, path: f.uri.fsPath }))), { exclude: filesExclude }, terminal);
  };
  return {
    system,
    restorePlan: async (chatId, stepId) => {
      const ws = workspaceNow();
      return typeof ws === 'string' ? { chatId, stepId, files: [], commands: [], error: ws } : checkpoints.plan(chatId, stepId, ws);
    },
    restore: async (chatId, stepId) => {
      const ws = workspaceNow();
      return typeof ws === 'string' ? { chatId, stepId, restored: [], conflicts: [], error: ws } : checkpoints.restore(chatId, stepId, ws);
    },
    tools: () => lastTools,
    showDiff: (change) => diffs.show(change),
    closeDiff: (change) => diffs.close(change),
    attention: (what) => {
      void vscode.window.showInformationMessage(`Strata: ${what}. It waits for you in the chat.`, 'Open Chat').then((b) => {
        if (b) void vscode.commands.executeCommand('strata.openPanel');
      });
    },
    makeLoop: async (client, onEvent, approvals, chatId) => {
      if (!vscode.workspace.isTrusted) return 'Agent mode is off in Restricted Mode: trust this workspace (Manage Workspace Trust) to let the agent use its tools.';
      const open = folders();
      if (!open.length) return 'Agent mode needs a folder: open one (File > Open Folder) for the agent to work in.';
      const paths = new WorkspacePaths(open.map((f) => ({ name: f.name, path: f.uri.fsPath })));
      const settings = agentSettings();
      const tools = builtin();
      tools.add(todoTool(new TodoList((items) => onEvent({ type: 'todo', items }))));
      const external = await mcp.tools(settings.mcpServers);
      for (const t of external.tools) {
        try { tools.add(t); } catch (err) { opts.log.warn(`MCP tool left out: ${(err as Error).message}`); }
      }
      lastTools = tools.specs();
      const workspace = new VscodeWorkspace(paths, { exclude: filesExclude, codebase: opts.codebase }, terminal);
      const countTokens = async (text: string, signal: AbortSignal): Promise<number> => (await client.tokenize(text, signal)).length;
      const rules = await loadRules({
        paths, listFiles: (s) => workspace.listFiles(s), readText: (abs) => workspace.readText(abs), isIgnored: (abs) => workspace.isIgnored(abs),
        skipped: (m) => opts.log.warn(m), extra: settings.rulesFiles, count: countTokens,
      }, AbortSignal.timeout(20_000))
        .catch((err: unknown) => { opts.log.warn(`agent rules not read: ${(err as Error).message}`); return []; });
      lastSystem = withRules(agentSystemPrompt(open.map((f) => f.name)), rules);
      const loop = new AgentLoop({
        client, tools, workspace, paths, approvals, settings, onEvent, countTokens,
        ...(chatId ? { checkpoints: checkpoints.recorder(chatId) } : {}),
        contextWindow: client.chatSlotContext ? (signal) => client.chatSlotContext!(signal) : undefined,
      });
      return { loop, system: lastSystem + mcpDeclinedNote(external.declined), rules: ruleViews(rules) };
    },
  };
}
