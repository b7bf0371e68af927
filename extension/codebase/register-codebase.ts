// Wires the codebase index into VS Code: the store in the workspace's storage, a pass at start and
// whenever the server becomes ready (to embed what has no vector yet) or the settings change, the
// file watcher (save, create, rename, delete; batched), the status bar item with progress and
// ETA (click: pause, resume, cancel, rebuild), the commands, and the search others call.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { IndexAction, IndexView } from '../../contract/panel.js';
import type { ActivityTracker } from '../server/activity.js';
import type { ServerConnection } from '../server/connection.js';
import { roleServerUrl } from '../config/config.js';
import { DEFAULT_CHUNK_OPTIONS } from './chunker.js';
import { CodebaseService } from './service.js';
import type { SearchOptions, SearchResult } from './search.js';
import { DEFAULT_EXCLUDES } from './walker.js';

export interface CodebaseHandle {
  /** Searches the index (undefined when it is off or there is no folder). */
  search: ((query: string, opts?: Partial<SearchOptions>) => Promise<SearchResult>) | undefined;
  service: CodebaseService | undefined;
  view(): IndexView;
  action(a: IndexAction): void;
  onChange(listener: (v: IndexView) => void): { dispose(): void };
}

const OFF: IndexView = {
  enabled: false, phase: 'idle', paused: false, filesDone: 0, filesTotal: 0, chunksDone: 0, chunksTotal: 0, etaSeconds: null,
  message: null, files: 0, chunks: 0, vectors: 0, bytes: 0, model: null, reranker: null, lastUpdated: null,
};

const WATCH_BATCH_MS = 300;

function settings() {
  const c = vscode.workspace.getConfiguration('strata');
  const filesExclude = vscode.workspace.getConfiguration('files').get<Record<string, boolean>>('exclude', {});
  return {
    enabled: c.get<boolean>('codebase.enabled', true),
    embeddingModel: c.get<string>('embeddingModel', '').trim(),
    rerankModel: c.get<string>('rerankModel', '').trim(),
    exclude: [...DEFAULT_EXCLUDES, ...c.get<string[]>('codebase.exclude', []), ...Object.entries(filesExclude).filter(([, on]) => on === true).map(([g]) => g)],
    maxFileBytes: Math.max(1, c.get<number>('codebase.maxFileKiB', 1024)) * 1024,
  };
}

export function statusText(v: IndexView): { text: string; tooltip: string } | null {
  if (v.phase === 'idle') return null;
  const eta = v.etaSeconds !== null ? ` · ${v.etaSeconds < 90 ? `${v.etaSeconds}s` : `${Math.round(v.etaSeconds / 60)}m`} left` : '';
  const what = v.phase === 'embedding' ? `${v.chunksDone}/${v.chunksTotal} chunks${eta}` : v.phase === 'chunking' ? `${v.filesDone}/${v.filesTotal} files` : 'scanning';
  return {
    text: `${v.paused ? '$(debug-pause)' : '$(sync~spin)'} Index ${what}`,
    tooltip: `Strata codebase index: ${v.paused ? 'paused, ' : ''}${v.phase} (${v.files} files, ${v.chunks} chunks indexed). Click to pause, cancel or rebuild.`,
  };
}

/** The connections of the embedding and rerank roles (the main server's, or each role's own). */
export interface CodebaseServers { embedding: ServerConnection; rerank: ServerConnection }

export function registerCodebase(context: vscode.ExtensionContext, servers: CodebaseServers, activity: ActivityTracker, log: vscode.LogOutputChannel): CodebaseHandle {
  const listeners = new Set<(v: IndexView) => void>();
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  const handle: CodebaseHandle = {
    search: undefined, service: undefined, view: () => OFF, action: () => {},
    onChange: (l) => { listeners.add(l); return { dispose: () => listeners.delete(l) }; },
  };
  if (!settings().enabled || !context.storageUri || folders.length === 0) return handle;
  let service: CodebaseService;
  try {
    service = createService(context, context.storageUri, folders, servers, activity, log);
  } catch (e) {
    log.warn(`codebase index unavailable: ${(e as Error).message}`);
    return handle;
  }
  const sync = (): void => void service.indexer.sync().catch((e: Error) => log.warn(`codebase index: ${e.message}`));
  const action = (a: IndexAction): void => {
    if (a === 'pause') service.indexer.pause();
    else if (a === 'resume') service.indexer.resume();
    else if (a === 'cancel') service.indexer.cancel();
    else sync();
  };
  const server = servers.embedding;
  const wasReady = { v: server.status.state === 'ready' };
  context.subscriptions.push(
    statusItem(service),
    ...watchFiles(service),
    { dispose: () => void service.dispose() },
    server.onDidChange((st) => {
      // A server that comes up may serve the embedding model: embed what has no vector yet.
      const ready = st.state === 'ready';
      if (ready && !wasReady.v) sync();
      wasReady.v = ready;
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('strata.embeddingModel') || e.affectsConfiguration('strata.rerankModel') || e.affectsConfiguration('strata.codebase')
        || e.affectsConfiguration('strata.embeddingServerUrl') || e.affectsConfiguration('strata.rerankServerUrl')) sync();
    }),
    ...commands(service, action),
  );
  sync();
  handle.service = service;
  handle.search = (q, o) => service.search(q, o);
  handle.view = () => service.view();
  handle.action = action;
  handle.onChange = (l) => service.onChange(l);
  return handle;
}

/** The index over the folders, stored in the workspace's storage, embedding and reranking with the server's models. */
function createService(context: vscode.ExtensionContext, storage: vscode.Uri, folders: readonly vscode.WorkspaceFolder[], servers: CodebaseServers,
  activity: ActivityTracker, log: vscode.LogOutputChannel): CodebaseService {
  const s = settings();
  const foreground = (): Promise<void> => (activity.busy ? new Promise((resolve) => {
    const sub = activity.onChange((busy) => { if (!busy) { sub.dispose(); resolve(); } });
  }) : Promise.resolve());
  mkdirSync(storage.fsPath, { recursive: true });
  return new CodebaseService({
    roots: folders.map((f) => ({ name: f.name, path: f.uri.fsPath })),
    storePath: join(storage.fsPath, 'codebase-index.sqlite'),
    wasmDir: join(context.extensionPath, 'dist', 'tree-sitter'),
    workerScript: join(context.extensionPath, 'dist', 'codebase-worker.cjs'),
    models: {
      embedding: () => {
        const c = servers.embedding.client;
        const name = c?.modelFor('embedding');
        // The main server falls back to its chat model when none is set: that one does not embed.
        return c && name && (settings().embeddingModel || roleServerUrl('embedding')) ? { name, embed: (t, sig) => c.embeddings(t, sig) } : null;
      },
      reranker: () => {
        const c = servers.rerank.client;
        const name = c?.modelFor('rerank');
        return c && name && (settings().rerankModel || roleServerUrl('rerank')) ? { name, rerank: (q, d, sig) => c.rerank(q, d, sig) } : null;
      },
    },
    foreground,
    onForeground: (l) => { const sub = activity.onChange(l); if (activity.busy) l(true); return () => sub.dispose(); },
    log: (m) => log.info(`codebase index: ${m}`),
    options: { walk: { exclude: s.exclude, maxFileBytes: s.maxFileBytes }, chunk: DEFAULT_CHUNK_OPTIONS, batch: 8 },
  });
}

/** The status bar item: progress and ETA while a pass runs; click for the menu. */
function statusItem(service: CodebaseService): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('strata.codebaseIndex', vscode.StatusBarAlignment.Right, 99);
  item.name = 'Strata codebase index';
  item.command = 'strata.codebase.menu';
  const sub = service.onChange((v) => {
    const t = statusText(v);
    if (!t) { item.hide(); return; }
    item.text = t.text;
    item.tooltip = t.tooltip;
    item.accessibilityInformation = { label: t.tooltip };
    item.show();
  });
  return { dispose: () => { sub.dispose(); item.dispose(); } };
}

/**
 * Watcher events, batched: a rename arrives as a delete and a create, which land in one update
 * (the renamed file's vectors are kept by their chunks' hashes).
 */
function watchFiles(service: CodebaseService): vscode.Disposable[] {
  const pending = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onFile = (uri: vscode.Uri): void => {
    const f = vscode.workspace.getWorkspaceFolder(uri);
    if (f?.uri.scheme !== 'file') return;
    const p = service.indexer.storedPath({ name: f.name, path: f.uri.fsPath }, vscode.workspace.asRelativePath(uri, false));
    if (!p) return;
    pending.add(p);
    clearTimeout(timer);
    timer = setTimeout(() => { const batch = [...pending]; pending.clear(); void service.indexer.update(batch); }, WATCH_BATCH_MS);
  };
  const watcher = vscode.workspace.createFileSystemWatcher('**/*');
  return [watcher, watcher.onDidCreate(onFile), watcher.onDidChange(onFile), watcher.onDidDelete(onFile), { dispose: () => clearTimeout(timer) }];
}

/** The palette commands: rebuild, pause, resume, cancel, the menu, and a search that opens a hit. */
function commands(service: CodebaseService, action: (a: IndexAction) => void): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('strata.codebase.rebuild', () => action('rebuild')),
    vscode.commands.registerCommand('strata.codebase.pause', () => action('pause')),
    vscode.commands.registerCommand('strata.codebase.resume', () => action('resume')),
    vscode.commands.registerCommand('strata.codebase.cancel', () => action('cancel')),
    vscode.commands.registerCommand('strata.codebase.menu', async () => {
      const v = service.view();
      const picks: Array<{ label: string; a: IndexAction }> = [
        ...(v.phase !== 'idle' ? [v.paused ? { label: '$(debug-start) Resume indexing', a: 'resume' as const } : { label: '$(debug-pause) Pause indexing', a: 'pause' as const }] : []),
        ...(v.phase !== 'idle' ? [{ label: '$(close) Cancel this pass', a: 'cancel' as const }] : []),
        { label: '$(refresh) Rebuild the index', a: 'rebuild' },
      ];
      const pick = await vscode.window.showQuickPick(picks, { title: `Strata codebase index: ${v.files} files, ${v.chunks} chunks` });
      if (pick) action(pick.a);
    }),
    vscode.commands.registerCommand('strata.codebase.search', async () => {
      const query = await vscode.window.showInputBox({ title: 'Search the codebase (Strata index)', prompt: 'Words, identifiers or a question' });
      if (!query) return;
      const r = await service.search(query);
      const pick = await vscode.window.showQuickPick(r.hits.map((h) => ({
        label: `${h.chunk.path}:${h.chunk.startLine}-${h.chunk.endLine}`, detail: h.chunk.text.split('\n').find((l) => l.trim())?.trim() ?? '', hit: h,
      })), { title: `${r.hits.length} hits (${r.stages.join(' + ')})`, matchOnDetail: true });
      const abs = pick ? service.indexer.absolute(pick.hit.chunk.path) : null;
      if (!pick || !abs) return;
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(abs));
      const range = new vscode.Range(pick.hit.chunk.startLine - 1, 0, pick.hit.chunk.endLine - 1, 0);
      await vscode.window.showTextDocument(doc, { selection: range });
    }),
  ];
}
