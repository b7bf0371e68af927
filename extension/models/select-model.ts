// "Strata: Select Model": a GGUF file from disk, a recent one, one downloaded or pulled earlier,
// or a new download from a Hugging Face URL. Sets strata.modelPath and restarts a running server.
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { ServerControl } from '../server/connection.js';
import { setModelPath } from '../config/config.js';
import { downloadModel } from '../../common/hub/download.js';
import { defaultModelsDir } from '../../common/hub/cache-dir.js';
import { ggufFilesUnder } from '../../common/hub/gguf-files.js';
import { RecentModels } from './recent.js';

type Choice = vscode.QuickPickItem & { action: 'browse' | 'download' | 'demo' | 'path'; path?: string };

export function registerSelectModel(context: vscode.ExtensionContext, server: ServerControl, log: vscode.LogOutputChannel): void {
  const recent = new RecentModels(context.globalState);
  const downloads = join(context.globalStorageUri.fsPath, 'models');

  const use = async (path: string): Promise<void> => {
    await setModelPath(path);
    if (path) await recent.add(path);
    if (server.status.state !== 'stopped') await server.restart().catch(() => undefined);
    else void vscode.window.showInformationMessage(`Strata will use ${path ? basename(path) : 'the demo model'}.`, 'Start Server')
      .then((b) => b && server.start().catch(() => undefined));
  };

  context.subscriptions.push(vscode.commands.registerCommand('strata.selectModel', async () => {
    const items: Choice[] = [
      { label: '$(folder-opened) Choose a GGUF file…', action: 'browse' },
      { label: '$(cloud-download) Download from a Hugging Face URL…', action: 'download', detail: 'https://huggingface.co/ORG/REPO/resolve/main/FILE.gguf' },
      { label: '$(beaker) Demo model', description: 'small generated model, random answers: for trying Strata out', action: 'demo' },
    ];
    const seen = new Set<string>();
    const recentItems = recent.list().filter((p) => existsSync(p));
    // Downloaded here, and pulled by Choose Models or `strata pull`.
    // A split model is loaded from its first part: the others are not choices.
    const downloaded = [downloads, defaultModelsDir()].flatMap((d) => (existsSync(d) ? ggufFilesUnder(d) : []))
      .filter((p) => !/-(?!00001)\d{5}-of-\d{5}\.gguf$/i.test(p));
    for (const [group, paths] of [['recent', recentItems], ['downloaded', downloaded]] as const) {
      const fresh = paths.filter((p) => !seen.has(p));
      if (!fresh.length) continue;
      items.push({ label: group, kind: vscode.QuickPickItemKind.Separator, action: 'path' });
      for (const p of fresh) {
        seen.add(p);
        items.push({ label: basename(p), description: `${(statSync(p).size / 2 ** 30).toFixed(2)} GiB`, detail: dirname(p), action: 'path', path: p });
      }
    }
    const pick = await vscode.window.showQuickPick(items, { title: 'Strata: Select Model', placeHolder: 'Model for the local Strata server' });
    if (!pick) return;
    if (pick.action === 'path' && pick.path) return use(pick.path);
    if (pick.action === 'demo') return use('');
    if (pick.action === 'browse') {
      const files = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'GGUF models': ['gguf'] }, openLabel: 'Use Model' });
      if (files?.[0]) return use(files[0].fsPath);
      return;
    }
    const url = await vscode.window.showInputBox({
      title: 'Download a GGUF model',
      prompt: 'Hugging Face URL of a .gguf file (a /blob/ page link works too). The download resumes if interrupted and is checked against its sha256.',
      placeHolder: 'https://huggingface.co/ORG/REPO/resolve/main/model-Q4_K_M.gguf',
      ignoreFocusOut: true,
    });
    if (!url) return;
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Strata: downloading model', cancellable: true },
        async (progress, token) => {
          const ac = new AbortController();
          token.onCancellationRequested(() => ac.abort());
          let lastPct = 0;
          return downloadModel({
            url, destDir: downloads, signal: ac.signal,
            onProgress: (got, total) => {
              const pct = total ? Math.floor((got / total) * 100) : 0;
              const inc = pct - lastPct;
              lastPct = pct;
              progress.report({ message: `${(got / 2 ** 20).toFixed(0)} MiB${total ? ` of ${(total / 2 ** 20).toFixed(0)} MiB` : ''}`, increment: inc > 0 ? inc : undefined });
            },
          });
        },
      );
      log.info(`model ${result.alreadyPresent ? 'already downloaded' : 'downloaded'}: ${result.path}${result.verified ? ` (sha256 ${result.sha256} verified)` : ''}`);
      if (!result.alreadyPresent && !result.verified) void vscode.window.showWarningMessage('Strata: the download had no published checksum, so it was not verified.');
      await use(result.path);
    } catch (err) {
      void vscode.window.showErrorMessage(`Strata: ${(err as Error).message}`);
    }
  }));
}
