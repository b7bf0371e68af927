// One MetricsFeed for the extension: refreshed while our requests run, while the server reports
// work, or while a panel is visible (see metrics-feed.ts).
import type * as vscode from 'vscode';
import type { ActivityTracker } from '../server/activity.js';
import { serverSource } from '../../contract/panel.js';
import type { ServerConnection } from '../server/connection.js';
import { MetricsFeed } from './metrics-feed.js';

export function registerMetricsFeed(context: vscode.ExtensionContext, server: ServerConnection, activity: ActivityTracker): MetricsFeed {
  const feed = new MetricsFeed(() => server.client?.metrics());
  let last = serverSource(server.status);
  context.subscriptions.push(
    feed,
    activity.onChange((busy) => feed.setBusy(busy)),
    // Another server, or none: its figures must not be shown as this one's.
    server.onDidChange((s) => {
      const now = serverSource(s);
      if (now !== last) feed.reset();
      last = now;
    }),
  );
  return feed;
}
