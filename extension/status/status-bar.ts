// Status bar item: server state, model, live tok/s while busy, a pause mark when completions are
// paused. Its tooltip (and accessible label) adds slots, speed and the last completion latency.
// Click: the Strata menu (status-menu.ts).
import * as vscode from 'vscode';
import type { ServerConnection } from '../server/connection.js';
import type { CompletionGate } from '../completion/pause.js';
import type { CompletionStats } from '../completion/stats.js';
import type { MetricsFeed } from './metrics-feed.js';
import { STATUS_MENU_COMMAND } from './status-menu.js';
import { statusBarText } from './status-text.js';

export interface StatusBarHandle {
  /** Completion figures or the pause state changed. */
  refresh(): void;
}

/** The roles on their own servers, for the tooltip (server/role-servers.ts). */
export interface RoleLines {
  lines(): string[];
  onDidChange(listener: () => void): { dispose(): void };
}

export function registerStatusBar(context: vscode.ExtensionContext, server: ServerConnection, feed: MetricsFeed, stats: CompletionStats, gate: CompletionGate, roles?: RoleLines): StatusBarHandle {
  const item = vscode.window.createStatusBarItem('strata.status', vscode.StatusBarAlignment.Right, 100);
  item.name = 'Strata';
  item.command = STATUS_MENU_COMMAND;
  const render = (): void => {
    const language = vscode.window.activeTextEditor?.document.languageId;
    // The feed's figures, never a copy: a copy would outlive a switch to another server.
    const v = statusBarText(server.status, feed.last, { lastLatencyMs: stats.view().lastLatencyMs, paused: gate.reason(language) });
    const tooltip = [v.tooltip, ...(roles?.lines() ?? [])].join('\n');
    item.text = v.text;
    item.tooltip = tooltip;
    item.backgroundColor = server.status.state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    item.accessibilityInformation = { label: tooltip };
  };
  context.subscriptions.push(
    item,
    server.onDidChange(() => render()),
    feed.onMetrics(render),
    feed.onReset(render),
    gate.onChange(render),
    vscode.window.onDidChangeActiveTextEditor(render),
    ...(roles ? [roles.onDidChange(render)] : []),
  );
  render();
  item.show();
  return { refresh: render };
}
