// A real VS Code server (code-server's lib/vscode, run directly: code-server's own CLI rejects the
// test flags) on Node 24, with its own HOME/XDG and data dirs, in its own process group.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../../common/net/free-port.js';
import type { E2eEnv } from './env.js';
import { RUN_MARKER, stopProcessTree } from './processes.js';

const execFileAsync = promisify(execFile);

export interface ServerOptions {
  /** Label for logs and the temp dir, e.g. 'ui' or 'exthost'. */
  name: string;
  /** VSIX files installed before the server starts. */
  vsixes?: string[];
  /** User settings (settings.json of the user and of the remote machine). */
  settings?: Record<string, unknown>;
  /** Extra environment for the server and everything it starts (extension hosts). */
  env?: Record<string, string>;
  /** Extra server flags, e.g. ['--enable-proposed-api', 'publisher.name']. */
  extraArgs?: string[];
  /** Keep the temp dirs after stop (STRATA_E2E_KEEP=1 does the same). */
  keep?: boolean;
  /**
   * --enable-smoke-test-driver (default on): the extension-host phase needs it for
   * codeAutomationExit, but with it VS Code shows no notification toasts at all, so the UI phase
   * (which checks toasts) runs without it.
   */
  smokeTestDriver?: boolean;
}

export class VsCodeServer {
  readonly runId = randomUUID();
  /** Short temp root: VS Code puts IPC sockets under these dirs and socket paths must stay < 108 bytes. */
  readonly root: string;
  readonly workspace: string;
  readonly userDataDir: string;
  readonly extensionsDir: string;
  readonly serverDataDir: string;
  readonly home: string;
  port = 0;
  private child: ChildProcess | undefined;
  private log: WriteStream | undefined;
  private exited: Promise<void> = Promise.resolve();

  private constructor(private readonly env: E2eEnv, private readonly opts: ServerOptions) {
    this.root = mkdtempSync(join(tmpdir(), `strata-e2e-${opts.name}-`));
    this.workspace = join(this.root, 'workspace');
    this.userDataDir = join(this.root, 'user-data');
    this.extensionsDir = join(this.root, 'extensions');
    this.serverDataDir = join(this.root, 'server-data');
    this.home = join(this.root, 'home');
    for (const d of [this.workspace, this.userDataDir, this.extensionsDir, this.serverDataDir, this.home]) mkdirSync(d, { recursive: true });
    mkdirSync(join(this.root, 'run'), { mode: 0o700 });
  }

  /** Installs the VSIXes, writes settings, starts the server and waits until it listens. */
  static async start(env: E2eEnv, opts: ServerOptions): Promise<VsCodeServer> {
    const server = new VsCodeServer(env, opts);
    try {
      for (const vsix of opts.vsixes ?? []) await server.installExtension(vsix);
      server.writeSettings(opts.settings ?? {});
      await server.launch();
      return server;
    } catch (err) {
      await server.stop();
      throw err;
    }
  }

  get logFile(): string {
    return join(this.env.outDir, `server-${this.opts.name}.log`);
  }

  /** Environment for the server and its children: own HOME/XDG, the run marker, nothing from ours that points elsewhere. */
  private processEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('VSCODE_') || k.startsWith('ELECTRON_') || k.startsWith('npm_')) delete env[k];
    return {
      ...env,
      HOME: this.home,
      XDG_CONFIG_HOME: join(this.home, '.config'),
      XDG_DATA_HOME: join(this.home, '.local', 'share'),
      XDG_CACHE_HOME: join(this.home, '.cache'),
      XDG_RUNTIME_DIR: join(this.root, 'run'),
      [RUN_MARKER]: this.runId,
      ...this.opts.env,
    };
  }

  private commonArgs(): string[] {
    return [
      join(this.env.vscodeDir, 'out', 'server-main.js'),
      '--accept-server-license-terms',
      '--server-data-dir', this.serverDataDir,
      '--user-data-dir', this.userDataDir,
      '--extensions-dir', this.extensionsDir,
    ];
  }

  async installExtension(vsix: string): Promise<void> {
    const { stdout, stderr } = await execFileAsync(this.env.node, [...this.commonArgs(), '--install-extension', vsix, '--force'], {
      env: this.processEnv(), timeout: 120_000, encoding: 'utf8',
    });
    const text = stdout + stderr;
    if (!/successfully installed/i.test(text)) throw new Error(`installing ${vsix} failed:\n${text.trim()}`);
  }

  /** Same settings for the user and the remote machine, so every setting scope sees them. */
  writeSettings(settings: Record<string, unknown>): void {
    const all = {
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'telemetry.telemetryLevel': 'off',
      'update.mode': 'none',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'security.workspace.trust.enabled': false,
      'chat.commandCenter.enabled': false,
      'editor.inlineSuggest.enabled': true,
      'files.autoSave': 'off',
      // Nothing in the workspace needs git; on 2 cores every idle extension host task counts.
      'git.enabled': false,
      'git.autoRepositoryDetection': false,
      'extensions.ignoreRecommendations': true,
      'window.restoreWindows': 'none',
      // The extension's server listens on a local port: no forwarding prompts over the UI.
      'remote.autoForwardPorts': false,
      ...settings,
    };
    for (const dir of [join(this.userDataDir, 'User'), join(this.userDataDir, 'Machine')]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'settings.json'), JSON.stringify(all, null, 2));
    }
  }

  /**
   * Changes user (and remote machine) settings while VS Code runs, as the user would in the
   * Settings editor: the settings a workspace cannot set (the server mode, its URL) change here.
   */
  updateSettings(patch: Record<string, unknown>): void {
    for (const dir of [join(this.userDataDir, 'User'), join(this.userDataDir, 'Machine')]) {
      const path = join(dir, 'settings.json');
      const was = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown> : {};
      writeFileSync(path, JSON.stringify({ ...was, ...patch }, null, 2));
    }
  }

  private async launch(): Promise<void> {
    this.port = await freePort();
    const args = [
      ...this.commonArgs(),
      '--host', '127.0.0.1', '--port', String(this.port),
      '--without-connection-token', ...(this.opts.smokeTestDriver === false ? [] : ['--enable-smoke-test-driver']), '--telemetry-level', 'off',
      '--disable-workspace-trust', ...(this.opts.extraArgs ?? []),
    ];
    this.log = createWriteStream(this.logFile);
    // detached: the server gets its own session and process group (setsid), so stop() can end
    // it together with every extension host it forked, old ones included.
    const child = spawn(this.env.node, args, { env: this.processEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    this.exited = new Promise((r) => child.once('exit', () => r()));
    await new Promise<void>((resolveListen, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`VS Code server did not listen within 60 s; see ${this.logFile}`)), 60_000);
      child.stdout?.on('data', (d: Buffer) => {
        seen = (seen + d.toString()).slice(-4000);
        if (seen.includes(`listening on ${this.port}`)) {
          clearTimeout(timer);
          resolveListen();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`VS Code server exited during start (code ${code}, signal ${signal}); see ${this.logFile}`));
      });
    });
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The workbench URL on the workspace folder; payload entries become the `payload` query (extension tests). */
  workbenchUrl(payload?: [string, string][]): string {
    const q = new URLSearchParams({ folder: this.workspace });
    if (payload) q.set('payload', JSON.stringify(payload));
    return `${this.baseUrl}/?${q.toString()}`;
  }

  /** A path on the server as the workbench's remote URI (for extensionDevelopmentPath and friends). */
  remoteUri(path: string): string {
    return `vscode-remote://127.0.0.1:${this.port}${path}`;
  }

  private stopping: Promise<void> | undefined;

  /** Stops the server, every extension host and anything they started; removes the temp dirs. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    await stopProcessTree(this.child?.pid, this.runId);
    if (this.child) await Promise.race([this.exited, new Promise((r) => setTimeout(r, 2000))]);
    this.log?.end();
    // VS Code's logs (each extension's output channel included, e.g. exthost1/<ext id>/<channel>.log).
    const logs = join(this.userDataDir, 'logs');
    if (existsSync(logs)) cpSync(logs, join(this.env.outDir, `vscode-logs-${this.opts.name}`), { recursive: true });
    if (!this.opts.keep && process.env.STRATA_E2E_KEEP !== '1') rmSync(this.root, { recursive: true, force: true });
  }
}
