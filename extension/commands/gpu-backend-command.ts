// "Strata: Install GPU Backend": picks a prebuilt backend (Vulkan, CUDA 13, CUDA 12) for this
// machine, installs it with `strata gpu install` (progress, cancel), and offers a restart.
// When the managed server runs with no GPU device although the machine has one, it suggests the
// backend that fits (from /v1/devices' gpu_backends.suggestion), once per session, unless told
// not to ask again.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { StrataClient } from '../client/client.js';
import type { ServerControl } from '../server/connection.js';
import {
  installGpuBackend, listGpuBackends, type BackendListReport, type GpuBackendKind, type InstallOutcome,
} from '../server/gpu-backend-cli.js';

const DONT_ASK = 'strata.gpuBackendSuggestion.dismissed';
const TITLES: Record<GpuBackendKind, string> = {
  vulkan: 'Vulkan (any GPU with a Vulkan driver: NVIDIA, AMD, Intel)',
  cuda: 'CUDA 13 (NVIDIA; needs the CUDA 13 runtime and cuBLAS)',
  'cuda-ext': 'CUDA 12 (NVIDIA with an older driver; needs the CUDA 12 runtime and cuBLAS)',
};

type Pick = vscode.QuickPickItem & { backend: GpuBackendKind };

export function registerGpuBackendCommand(context: vscode.ExtensionContext, server: ServerControl, log: vscode.LogOutputChannel): void {
  const cli = join(context.extensionPath, 'dist', 'strata.mjs');

  const install = async (kind: GpuBackendKind): Promise<void> => {
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Strata: installing the ${kind} backend`, cancellable: true },
      (progress, token) => new Promise<InstallOutcome>((resolve) => {
        let lastPct = 0;
        const run = installGpuBackend(cli, kind, (e) => {
          log.info(`gpu backend: ${e.message}`);
          if (e.phase === 'download' && e.received && e.total) {
            const pct = Math.floor((100 * e.received) / e.total);
            progress.report({ message: `${Math.round(e.received / 2 ** 20)} of ${Math.round(e.total / 2 ** 20)} MiB`, increment: pct > lastPct ? pct - lastPct : undefined });
            lastPct = Math.max(lastPct, pct);
          } else {
            progress.report({ message: e.message });
          }
        });
        token.onCancellationRequested(() => run.cancel());
        void run.done.then(resolve);
      }),
    );
    if (outcome.kind === 'error') {
      if (outcome.cancelled) { log.info(`gpu backend: ${kind} install cancelled`); return; }
      log.error(`gpu backend: ${outcome.message}`);
      void vscode.window.showErrorMessage(`Strata: the ${kind} backend could not be installed: ${outcome.message}`, 'Show Log').then((b) => b && log.show());
      return;
    }
    if (!outcome.loads) {
      const why = outcome.missing.length ? outcome.missing.map((m) => `${m.library}: ${m.hint}`).join('; ') : outcome.failed.map((f) => f.error).join('; ');
      log.warn(`gpu backend: ${kind} installed but does not load here: ${why}`);
      void vscode.window.showWarningMessage(`Strata: the ${kind} backend is installed but cannot run here yet: ${why}. Until then the engine uses the CPU (or another installed backend).`, 'Show Log')
        .then((b) => b && log.show());
      return;
    }
    const devices = outcome.devices.map((d) => d.name).join(', ') || 'no device found by it';
    log.info(`gpu backend: ${kind} installed (devices: ${devices})`);
    const running = server.status.state !== 'stopped';
    const pick = await vscode.window.showInformationMessage(
      `Strata: the ${kind} backend is installed (devices: ${devices}).${running ? ' Restart the server to use it.' : ''}`,
      ...(running ? ['Restart Server'] : ['Start Server']));
    if (pick === 'Restart Server') await server.restart().catch(() => undefined);
    else if (pick === 'Start Server') await server.start().catch(() => undefined);
  };

  context.subscriptions.push(vscode.commands.registerCommand('strata.installGpuBackend', async (kind?: GpuBackendKind) => {
    if (kind) return install(kind);
    let report: BackendListReport;
    try {
      report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Strata: looking at this machine’s GPUs' },
        () => listGpuBackends(cli));
    } catch (err) {
      log.error(`gpu backend: ${(err as Error).message}`);
      void vscode.window.showErrorMessage(`Strata: ${(err as Error).message}`, 'Show Log').then((b) => b && log.show());
      return;
    }
    const items: Pick[] = report.readiness.map((r) => {
      const installed = report.installed.find((b) => b.kind === r.kind);
      const tags = [installed ? `installed ${installed.version}` : null, report.suggestion?.kind === r.kind ? 'recommended' : null,
        r.loads ? null : `needs ${r.missing.map((m) => m.library).join(', ')}`].filter(Boolean);
      return { backend: r.kind, label: TITLES[r.kind], description: tags.join(' · '), detail: r.note ?? undefined };
    });
    const gpus = report.devices.filter((d) => d.type !== 'cpu' && d.backend !== 'RPC').map((d) => d.name);
    const pick = await vscode.window.showQuickPick(items, {
      title: 'Strata: Install GPU Backend',
      placeHolder: gpus.length ? `The engine already sees ${gpus.join(', ')}` : (report.suggestion?.reason ?? 'The engine sees no GPU yet'),
    });
    if (pick) await install(pick.backend);
  }));

  // The suggestion: once per session, when the managed server is ready without a GPU device.
  let asked = false;
  const sub = server.onDidChange((s) => {
    if (asked || s.state !== 'ready' || s.mode !== 'managed' || !s.url) return;
    asked = true;
    void suggest(s.url);
  });
  context.subscriptions.push(sub);

  const suggest = async (url: string): Promise<void> => {
    let suggestion: { kind: GpuBackendKind; reason: string } | null = null;
    try {
      suggestion = await new StrataClient({ baseUrl: url, apiKey: server.client?.apiKey, timeoutMs: 10_000 }).gpuSuggestion();
    } catch (err) {
      log.debug(`gpu backend: no suggestion (${(err as Error).message})`);
      return;
    }
    if (!suggestion || context.globalState.get<string[]>(DONT_ASK, []).includes(suggestion.kind)) return;
    log.info(`gpu backend: ${suggestion.reason}`);
    const pick = await vscode.window.showInformationMessage(`Strata: ${suggestion.reason}. Install the ${suggestion.kind} backend?`, 'Install', 'Don’t Ask Again');
    if (pick === 'Install') await install(suggestion.kind);
    else if (pick === 'Don’t Ask Again') await context.globalState.update(DONT_ASK, [...context.globalState.get<string[]>(DONT_ASK, []), suggestion.kind]);
  };
}
