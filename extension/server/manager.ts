// Runs the Strata server for VS Code: a managed local process (Supervisor + real processes), or
// an existing server in remote mode. Turns failures into messages that say what to do.
import { existsSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as vscode from 'vscode';
import { StrataClient } from '../client/client.js';
import * as config from '../config/config.js';
import type { ActivityTracker } from './activity.js';
import type { ServerControl, ServerStatus } from './connection.js';
import { adviceFor, type Failure } from './failures.js';
import { freePort } from '../../common/net/free-port.js';
import { spawnNodeScript } from './node-process.js';
import { requestModels, servedModels, settingsProblems, type ServerSettings } from '../config/server-settings.js';
import { PullCancelled, pullWithProgress } from './hub-pull.js';
import { resolveHubModels } from '../config/hub-settings.js';
import { formatHubRef } from '../../common/hub/hub-ref.js';
import { managedLaunch, newApiKey, probeManaged } from './managed-launch.js';
import { writeModelsSection } from './models-section.js';
import { Supervisor, type SupervisorState } from './supervisor.js';
import { waitForRemote } from './remote-wait.js';

/** Thrown when the user chose not to start (dismissed a prompt); callers stay quiet. */
export class StartDeclined extends Error {
  constructor() { super('start declined'); }
}

const DEMO_ACCEPTED = 'strata.demoModelAccepted';
/** "2025-01-01T00:00:00.000Z info  message" as `strata serve --log-format text` writes it. */
const SERVER_LINE = /^\d{4}-\d\d-\d\dT[\d:.]+Z\s+(debug|info|warn|error)\s+/;

export interface ManagerContext {
  extensionPath: string;
  globalStorageUri: vscode.Uri;
  globalState: vscode.Memento;
  secrets: vscode.SecretStorage;
}

export class ServerManager implements ServerControl, vscode.Disposable {
  private supervisor: Supervisor | undefined;
  private unsubscribe: Array<() => void> = [];
  private currentClient: StrataClient | undefined;
  /** The `model` names the managed server's clients send (from the settings it was started with). */
  private requestModels: ReturnType<typeof requestModels> = {};
  /** The managed server's key for this start (its clients send it). */
  private managedKey: string | undefined;
  private pending: Promise<StrataClient> | undefined;
  private remoteAbort: AbortController | undefined;
  private state: ServerStatus;
  private readonly emitter = new vscode.EventEmitter<ServerStatus>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly ctx: ManagerContext, private readonly log: vscode.LogOutputChannel, private readonly activity: ActivityTracker) {
    this.state = { state: 'stopped', busy: false, mode: config.serverMode(), model: null, url: null, message: null };
    this.disposables.push(this.emitter, activity.onChange((busy) => this.update({ busy })));
  }

  get status(): ServerStatus {
    return this.state;
  }

  get client(): StrataClient | undefined {
    return this.state.state === 'ready' ? this.currentClient : undefined;
  }

  onDidChange(listener: (s: ServerStatus) => void): vscode.Disposable {
    return this.emitter.event(listener);
  }

  async ensureReady(): Promise<StrataClient> {
    if (this.client) return this.client;
    if (this.pending) return this.pending;
    await this.start();
    if (!this.client) throw new Error(this.state.message ?? 'the Strata server is not running');
    return this.client;
  }

  /** Starts with a progress notification; failures are shown to the user and rethrown. */
  start(): Promise<void> {
    if (this.state.state === 'ready') return Promise.resolve();
    this.pending ??= this.startOnce().finally(() => { this.pending = undefined; });
    return this.pending.then(() => undefined);
  }

  async stop(): Promise<void> {
    this.remoteAbort?.abort();
    const sup = this.supervisor;
    if (sup) {
      this.log.info('stopping the server');
      await sup.stop();
    }
    this.detach();
    this.currentClient = undefined;
    this.update({ state: 'stopped', model: null, url: null, message: null });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** The server process runs but every engine gave up (engine-watch.ts): show it as failed. */
  markEngineFailed(message: string): void {
    if (this.state.state !== 'ready') return;
    this.update({ state: 'failed', message });
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }

  private async startOnce(): Promise<StrataClient> {
    const mode = config.serverMode();
    this.update({ mode });
    return mode === 'remote' ? this.startRemote() : this.startManaged();
  }

  private async startManaged(): Promise<StrataClient> {
    // A server that is restarting after a crash is still ours: wait for it instead of starting another.
    const running = this.supervisor;
    if (running && (running.current.kind === 'starting' || running.current.kind === 'restarting')) {
      await running.whenReady();
      if (this.currentClient) return this.currentClient;
    }
    if (running) await running.stop();
    const written = config.readServerSettings();
    const problems = settingsProblems(written);
    if (problems.length) {
      this.showError(`Strata cannot start: ${problems.join('; ')}.`, ['Open Settings']);
      throw new Error(problems.join('; '));
    }
    const settings = await this.hubModels(written);
    if (servedModels(settings).models.length === 0 && !this.ctx.globalState.get<boolean>(DEMO_ACCEPTED)) {
      const pick = await vscode.window.showInformationMessage(
        'No model is configured for Strata. Use the small generated demo model (for trying things out, its answers are random), or choose a GGUF model?',
        'Use Demo Model', 'Select Model…');
      if (pick === 'Select Model…') void vscode.commands.executeCommand('strata.selectModel');
      if (pick !== 'Use Demo Model') throw new StartDeclined();
      await this.ctx.globalState.update(DEMO_ACCEPTED, true);
    }
    const missing = servedModels(settings).models.find((m) => !existsSync(m.path));
    if (missing) {
      this.showError(`Strata: the model file ${missing.path} does not exist.`, ['Select Model…']);
      throw new Error(`model file ${missing.path} does not exist`);
    }
    this.requestModels = requestModels(settings, 'managed');
    const cli = join(this.ctx.extensionPath, 'dist', 'strata.mjs');
    if (!existsSync(cli)) {
      this.showError(`Strata: the server program is missing (${cli}). Reinstall the extension.`, []);
      throw new Error(`missing ${cli}`);
    }
    const sessionsDir = join(this.ctx.globalStorageUri.fsPath, 'sessions');
    mkdirSync(sessionsDir, { recursive: true });
    // The server makes it (0700) on the first stored response.
    const responsesDir = join(this.ctx.globalStorageUri.fsPath, 'responses');
    const prefixCacheDir = join(this.ctx.globalStorageUri.fsPath, 'prefix-cache');

    this.detach();
    const apiKey = newApiKey();
    this.managedKey = apiKey;
    const sup = new Supervisor({
      spawn: (port) => {
        const launch = managedLaunch(settings, port, { sessionsDir, responsesDir, prefixCacheDir, parentPid: process.pid, apiKey, configFile: writeModelsSection(settings, this.ctx.globalStorageUri.fsPath) });
        this.log.info(`starting: ${basename(process.execPath)} ${cli} ${launch.args.join(' ')} (with a new API key in its environment)`);
        return spawnNodeScript(cli, launch.args, launch.env);
      },
      pickPort: freePort,
      // Ready only once the answer proves this start's key: a program already on the port gets nothing.
      probe: (port) => probeManaged(port, apiKey),
      clock: { now: Date.now, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) },
    }, { port: settings.port });
    this.supervisor = sup;
    this.unsubscribe.push(
      sup.onOutput((line) => this.logServerLine(line)),
      sup.onState((s) => this.onSupervisorState(s)),
    );
    const modelName = settings.modelPath ? basename(settings.modelPath) : 'demo model';
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Strata: starting the server (${modelName})`, cancellable: true },
      async (progress, token) => {
        token.onCancellationRequested(() => void this.stop());
        const sub = sup.onState((s) => {
          if (s.kind === 'starting') progress.report({ message: `loading on port ${s.port}…` });
        });
        try { await sup.start(); } finally { sub(); }
      },
    ).then(undefined, (err: Error) => {
      if (sup === this.supervisor) throw err;
      throw new StartDeclined();
    });
    if (!this.currentClient) throw new Error('the Strata server stopped while starting');
    return this.currentClient;
  }

  /** hf:ORG/REPO[:QUANT] model settings become their files, pulled first (with progress) when missing. */
  private async hubModels(s: ServerSettings): Promise<ServerSettings> {
    try {
      return await resolveHubModels(s, (ref, setting) => {
        // The status bar says why the start waits.
        this.update({ state: 'starting', message: `pulling ${formatHubRef(ref)}` });
        return pullWithProgress(ref, this.log, ` (${setting})`);
      });
    } catch (err) {
      if (err instanceof PullCancelled) {
        this.update({ state: 'stopped', message: null });
        void vscode.window.showInformationMessage('Strata: download stopped; the server did not start. Start it again to resume the download.');
        throw new StartDeclined();
      }
      this.update({ state: 'failed', message: (err as Error).message });
      this.showError(`Strata cannot start: ${(err as Error).message}.`, ['Open Settings', 'Show Log']);
      throw err;
    }
  }

  private onSupervisorState(s: SupervisorState): void {
    switch (s.kind) {
      case 'starting':
        this.update({ state: 'starting', url: `http://127.0.0.1:${s.port}`, message: s.attempt > 1 ? `restart ${s.attempt - 1}` : null });
        break;
      case 'ready': {
        const url = `http://127.0.0.1:${s.port}`;
        this.currentClient = new StrataClient({ baseUrl: url, apiKey: this.managedKey, activity: this.activity, models: this.requestModels });
        this.log.info(`server ready at ${url} (model ${s.model ?? '?'}, ${s.slots ?? '?'} slots)`);
        this.update({ state: 'ready', url, model: displayModel(s.model), message: null });
        break;
      }
      case 'restarting':
        this.currentClient = undefined;
        this.log.warn(`server stopped: ${s.last.message}; restarting in ${s.retryInMs / 1000} s`);
        this.update({ state: 'starting', message: `${s.last.message}; restarting in ${Math.round(s.retryInMs / 1000)} s` });
        if (s.failures === 1) void vscode.window.showWarningMessage(`Strata: ${s.last.message}. Restarting it.`, 'Show Log').then((b) => b && this.log.show());
        break;
      case 'failed':
        this.currentClient = undefined;
        this.log.error(`server failed: ${s.failure.message}`);
        this.update({ state: 'failed', message: s.failure.message });
        this.showFailure(s.failure);
        break;
      case 'stopped':
        break;
    }
  }

  private async startRemote(): Promise<StrataClient> {
    const url = config.remoteUrl();
    if (!url) {
      this.showError('Strata is in remote mode but strata.remoteUrl is empty. Set it to the server address, e.g. http://host:8080.', ['Open Settings']);
      throw new Error('strata.remoteUrl is empty');
    }
    this.detach();
    const client = new StrataClient({
      baseUrl: url, apiKey: await config.apiKey(this.ctx.secrets), allowInsecureKey: config.allowInsecureRemote(), activity: this.activity,
      models: requestModels(config.readServerSettings(), 'remote'),
    });
    this.update({ state: 'starting', url: client.baseUrl, model: null, message: 'connecting' });
    const abort = new AbortController();
    this.remoteAbort = abort;
    try {
      const model = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Strata: connecting to ${client.baseUrl}`, cancellable: true },
        (_p, token) => {
          token.onCancellationRequested(() => abort.abort());
          return waitForRemote(client, abort.signal);
        },
      );
      this.currentClient = client;
      this.log.info(`connected to ${client.baseUrl} (model ${model ?? '?'})`);
      this.update({ state: 'ready', model: displayModel(model), message: null });
      return client;
    } catch (err) {
      const msg = abort.signal.aborted ? 'connection cancelled' : (err as Error).message;
      this.update({ state: abort.signal.aborted ? 'stopped' : 'failed', message: msg });
      if (!abort.signal.aborted) this.showError(`Strata: ${msg}. Check strata.remoteUrl and the API key.`, ['Open Settings', 'Set API Key']);
      throw abort.signal.aborted ? new StartDeclined() : err;
    }
  }

  private logServerLine(raw: string): void {
    // The server's text log starts with its own time and level: keep the level, drop the time
    // (the channel adds one). Other lines (engine output, crashes) are judged by their words.
    const m = SERVER_LINE.exec(raw);
    const level = m?.[1] ?? (/\b(error|fatal|abort)/i.test(raw) ? 'error' : /\bwarn/i.test(raw) ? 'warn' : 'info');
    const line = m ? raw.slice(m[0].length) : raw;
    if (level === 'error') this.log.error(line);
    else if (level === 'warn') this.log.warn(line);
    else if (level === 'debug') this.log.debug(line);
    else this.log.info(line);
  }

  private showFailure(f: Failure): void {
    const buttons = f.kind === 'modelMissing' ? ['Select Model…', 'Show Log']
      : f.kind === 'portInUse' || f.kind === 'badSettings' || f.kind === 'outOfMemory' ? ['Open Settings', 'Show Log']
        : ['Restart', 'Show Log'];
    this.showError(`Strata: ${f.message}. ${f.advice ?? adviceFor(f.kind)}`, buttons);
  }

  private showError(message: string, buttons: string[]): void {
    void vscode.window.showErrorMessage(message, ...buttons).then((b) => {
      if (b === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'strata.');
      else if (b === 'Select Model…') void vscode.commands.executeCommand('strata.selectModel');
      else if (b === 'Show Log') this.log.show();
      else if (b === 'Restart') void vscode.commands.executeCommand('strata.restartServer');
      else if (b === 'Set API Key') void vscode.commands.executeCommand('strata.setApiKey');
    });
  }

  private detach(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    this.supervisor = undefined;
  }

  private update(change: Partial<ServerStatus>): void {
    this.state = { ...this.state, ...change, busy: this.activity.busy };
    this.emitter.fire(this.state);
  }
}

function displayModel(model: string | null): string | null {
  if (!model) return null;
  return basename(model).replace(/\.gguf$/i, '');
}
