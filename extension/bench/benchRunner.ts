// "Strata: Run Benchmark": runs `strata bench --url <server> --json FILE` with the editor's
// runtime, streams its output to the log, stores the figures and shows them in the Bench tab.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ServerConnection } from '../backend/connection.js';
import { apiKey } from '../config.js';
import { spawnNodeScript } from '../backend/nodeProcess.js';
import type { BenchView } from '../../webview/protocol.js';
import { benchRun, BenchStore } from './benchResults.js';

export interface BenchController {
  view(): BenchView;
  clear(): Promise<void>;
}

export function registerBenchmark(context: vscode.ExtensionContext, server: ServerConnection, log: vscode.LogOutputChannel, onChange: (v: BenchView) => void, showBenchTab: () => void): BenchController {
  const store = new BenchStore(context.globalState);
  let state: Omit<BenchView, 'runs'> = { running: false, progress: null, error: null };
  const view = (): BenchView => ({ runs: store.runs(), ...state });
  const set = (s: Partial<BenchView>): void => { state = { ...state, ...s }; onChange(view()); };

  context.subscriptions.push(vscode.commands.registerCommand('strata.runBenchmark', async () => {
    if (state.running) return void vscode.window.showInformationMessage('Strata: a benchmark is already running.');
    let client;
    try { client = await server.ensureReady(); } catch { return; }
    const cli = join(context.extensionPath, 'dist', 'strata.mjs');
    const dir = mkdtempSync(join(tmpdir(), 'strata-bench-'));
    const out = join(dir, 'bench.json');
    showBenchTab();
    set({ running: true, progress: 'starting', error: null });
    const args = ['bench', '--url', client.baseUrl, '--json', out, '--label', `vscode ${new Date().toISOString()}`];
    log.info(`benchmark: ${args.join(' ')}`);
    // A remote server may need the key (managed ones run without one).
    const key = server.status.mode === 'remote' ? await apiKey(context.secrets) : undefined;
    if (key) args.push('--api-key', key);
    try {
      const code = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Strata: running benchmark', cancellable: true },
        (progress, token) => new Promise<number | null>((resolve) => {
          const child = spawnNodeScript(cli, args);
          token.onCancellationRequested(() => child.kill('SIGTERM'));
          child.onOutput((line) => {
            log.info(`[bench] ${line}`);
            progress.report({ message: line.slice(0, 80) });
            set({ progress: line.slice(0, 200) });
          });
          child.onExit((c) => resolve(token.isCancellationRequested ? null : c));
        }),
      );
      if (code === null) return set({ running: false, progress: null, error: 'cancelled' });
      if (code !== 0 || !existsSync(out)) throw new Error(`the benchmark exited with code ${code}; see "Strata: Show Log"`);
      const run = benchRun(JSON.parse(readFileSync(out, 'utf8')), client.baseUrl, Date.now(), server.status.model);
      if (!run.figures.length) throw new Error('the benchmark wrote no figures');
      await store.add(run);
      set({ running: false, progress: null, error: null });
    } catch (err) {
      const msg = (err as Error).message;
      set({ running: false, progress: null, error: msg });
      void vscode.window.showErrorMessage(`Strata: ${msg}`, 'Show Log').then((b) => b && log.show());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }));
  return { view, clear: async () => { await store.clear(); onChange(view()); } };
}
