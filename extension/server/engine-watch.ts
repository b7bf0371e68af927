// Watches for engines that stay down: when the metrics show a dead engine, /health is asked once
// a second until the engine is back or the server says it gave up ("failed" after a crash loop).
// Then one notification says what happened, with what to do next, and the server shows as failed.
import * as vscode from 'vscode';
import type { Metrics } from '../../contract/metrics.js';
import type { ServerConnection } from './connection.js';
import { engineFailureMessage } from './engine-failure.js';

/** Where the metrics come from (status/metrics-feed.ts's MetricsFeed). */
export interface MetricsSource {
  onMetrics(listener: (m: Metrics) => void): { dispose(): void };
}

export interface EngineFailureSink {
  /** The server runs but its engines gave up: show it as failed with this message. */
  markEngineFailed(message: string): void;
}

const POLL_MS = 1000;
const GPU_BACKEND_COMMAND = 'strata.installGpuBackend';

export function registerEngineWatch(context: vscode.ExtensionContext, server: ServerConnection & EngineFailureSink, feed: MetricsSource, log: vscode.LogOutputChannel, userGuideUri: vscode.Uri): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let notified = false;

  const stop = (): void => { clearTimeout(timer); timer = undefined; };
  const poll = async (): Promise<void> => {
    timer = undefined;
    const client = server.client;
    if (!client) return;
    let health;
    try { health = await client.health(); } catch { health = null; }
    if (health?.status === 'ok') return;
    if (health?.status === 'failed') {
      if (!notified) {
        notified = true;
        const sentence = engineFailureMessage(health.engineDeath);
        log.error(`${sentence} (server: ${health.reason ?? 'no reason given'})`);
        server.markEngineFailed(sentence);
        void notify(`Strata: ${sentence}`);
      }
      return;
    }
    timer = setTimeout(() => void poll(), POLL_MS);
  };

  const notify = async (message: string): Promise<void> => {
    const hasGpuCommand = (await vscode.commands.getCommands(true)).includes(GPU_BACKEND_COMMAND);
    const actions = ['Show Log', hasGpuCommand ? 'Choose Another Backend' : 'Device Settings', 'Choose Another Model', 'Troubleshooting'];
    const pick = await vscode.window.showErrorMessage(message, ...actions);
    if (pick === 'Show Log') log.show();
    else if (pick === 'Choose Another Backend') void vscode.commands.executeCommand(GPU_BACKEND_COMMAND);
    else if (pick === 'Device Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'strata.devices');
    else if (pick === 'Choose Another Model') void vscode.commands.executeCommand('strata.selectModel');
    else if (pick === 'Troubleshooting') void vscode.commands.executeCommand('markdown.showPreview', userGuideUri.with({ fragment: 'troubleshooting' }));
  };

  context.subscriptions.push(
    { dispose: stop },
    feed.onMetrics((m) => {
      if (m.engines.some((e) => !e.alive) && timer === undefined && !notified) timer = setTimeout(() => void poll(), 0);
    }),
    server.onDidChange((s) => {
      if (s.state !== 'ready') stop();
      // A new start is a new chance: the next crash loop gets its own notification.
      if (s.state === 'starting') notified = false;
    }),
  );
}
