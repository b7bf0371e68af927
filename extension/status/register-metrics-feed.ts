// One MetricsFeed for the extension: refreshed while our requests run, while the server reports
// work, or while a panel is visible (see metrics-feed.ts).
import type * as vscode from 'vscode';
import type { ActivityTracker } from '../server/activity.js';
import type { ServerConnection } from '../server/connection.js';
import { MetricsFeed } from './metrics-feed.js';

export function registerMetricsFeed(context: vscode.ExtensionContext, server: ServerConnection, activity: ActivityTracker): MetricsFeed {
  const feed = new MetricsFeed(() => server.client?.metrics());
  let lastState = server.status.state;
  context.subscriptions.push(
    feed,
    activity.onChange((busy) => feed.setBusy(busy)),
    server.onDidChange((s) => {
      if (s.state !== lastState && (s.state === 'ready' || lastState === 'ready')) feed.reset();
      lastState = s.state;
    }),
  );
  return feed;
}
