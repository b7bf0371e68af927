// Status bar item: server state, model, live tok/s while busy. Click opens the panel.
import * as vscode from 'vscode';
import type { Metrics } from '../api/types.js';
import type { ServerConnection } from '../backend/connection.js';
import type { MetricsFeed } from './metricsFeed.js';
import { statusBarText } from './statusText.js';

export function registerStatusBar(context: vscode.ExtensionContext, server: ServerConnection, feed: MetricsFeed): void {
  const item = vscode.window.createStatusBarItem('strata.status', vscode.StatusBarAlignment.Right, 100);
  item.name = 'Strata';
  item.command = 'strata.openPanel';
  let metrics: Metrics | undefined;
  const render = (): void => {
    const v = statusBarText(server.status, metrics);
    item.text = v.text;
    item.tooltip = v.tooltip;
    item.backgroundColor = server.status.state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    item.accessibilityInformation = { label: v.tooltip };
  };
  context.subscriptions.push(
    item,
    server.onDidChange(() => render()),
    feed.onMetrics((m) => { metrics = m; render(); }),
  );
  render();
  item.show();
}
