// A server per role: each role (completion, chat, next edit, embedding, rerank) talks to the main
// server (managed, or strata.remoteUrl) or to its own OpenAI-compatible server. Features get a
// ServerConnection for their role and cannot tell the two apart. A role server is connected when
// the main server is ready or when a feature needs it, its capabilities are read (capabilities.ts),
// and a server without the role's route turns the feature off with one log line. No vscode here:
// the settings and secrets come in through RoleSettings.
import { StrataClient, type ActivitySink } from '../client/client.js';
import type { ModelUse } from '../config/server-settings.js';
import { describeCapabilities, probeRole, ROLE_FEATURE, ROLE_ROUTES, type RoleCapabilities } from './capabilities.js';
import type { ServerConnection, ServerStatus } from './connection.js';
import { waitForRemote } from './remote-wait.js';

export const ROLES: readonly ModelUse[] = ['completion', 'chat', 'nextEdit', 'embedding', 'rerank'];

export interface RoleSettings {
  /** The role's own server; '' = the main server. */
  url(role: ModelUse): string;
  /** The role's key, only when it was entered for the server at `url`. */
  apiKey(role: ModelUse, url: string): Promise<string | undefined>;
  /** Whether the key may go over plain http to another machine (strata.allowInsecureRemote). */
  allowInsecureKey?(): boolean;
  /** The `model` the role's requests name on its own server; undefined = that server's default. */
  model(role: ModelUse): string | undefined;
}

export interface RoleLog { info(m: string): void; warn(m: string): void }

export interface RoleServersDeps {
  main: ServerConnection;
  settings: RoleSettings;
  log: RoleLog;
  activity?: ActivitySink;
  fetch?: typeof fetch;
}

type Listener = (s: ServerStatus) => void;

class Listeners {
  private readonly set = new Set<Listener>();
  add(l: Listener): { dispose(): void } {
    this.set.add(l);
    return { dispose: () => this.set.delete(l) };
  }
  fire(s: ServerStatus): void {
    for (const l of [...this.set]) l(s);
  }
}

const agentOff = (url: string): string => `Agent mode off: the chat template of ${url} takes no tools (its /props chat_template_caps)`;

/** One role's own server: connected on demand, its capabilities read once per connection. */
export class RoleServer {
  private state: ServerStatus;
  private current: StrataClient | undefined;
  private pending: Promise<StrataClient> | undefined;
  private readonly abort = new AbortController();
  /** The role's route is missing there: the feature stays off until the settings change. */
  private off: string | null = null;
  capabilities: RoleCapabilities | null = null;

  constructor(readonly role: ModelUse, readonly url: string, private readonly deps: RoleServersDeps, private readonly changed: Listener) {
    this.state = { state: 'stopped', busy: false, mode: 'remote', model: null, url, message: null };
  }

  get status(): ServerStatus { return this.state; }
  get client(): StrataClient | undefined { return this.state.state === 'ready' ? this.current : undefined; }

  /** Connects (once at a time) and resolves with the client; throws why the role cannot use this server. */
  connect(): Promise<StrataClient> {
    if (this.current && this.state.state === 'ready') return Promise.resolve(this.current);
    if (this.off !== null) return Promise.reject(new Error(this.off));
    this.pending ??= this.connectOnce().finally(() => { this.pending = undefined; });
    return this.pending;
  }

  /** Drops the connection (the main server stopped): the next use connects again. */
  disconnect(): void {
    this.current = undefined;
    this.capabilities = null;
    this.off = null;
    if (this.state.state !== 'stopped') this.update({ state: 'stopped', message: null });
  }

  dispose(): void {
    this.abort.abort();
    this.current = undefined;
  }

  private async connectOnce(): Promise<StrataClient> {
    const { settings, log } = this.deps;
    const apiKey = await settings.apiKey(this.role, this.url);
    const model = settings.model(this.role);
    const base = { baseUrl: this.url, apiKey, allowInsecureKey: settings.allowInsecureKey?.() ?? false, ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}) };
    this.update({ state: 'starting', message: 'connecting' });
    try {
      const probe = new StrataClient({ ...base, timeoutMs: 10_000 });
      await waitForRemote(probe, this.abort.signal);
      const caps = await probeRole(probe, this.role, this.abort.signal);
      if (this.abort.signal.aborted) throw new Error('cancelled');
      this.capabilities = caps;
      if (caps.route === null) {
        this.off = describeCapabilities(probe.baseUrl, caps);
        log.warn(this.off);
        this.update({ state: 'failed', message: `off: no ${ROLE_ROUTES[this.role].join(' or ')} (${caps.refused.join(', ')})` });
        throw new Error(this.off);
      }
      log.info(describeCapabilities(probe.baseUrl, caps));
      if (caps.toolCalls === false) log.warn(agentOff(probe.baseUrl));
      // No model set: the first it lists (a server with one model answers to any name; a router needs one).
      const name = model ?? caps.models[0];
      const client = new StrataClient({
        ...base, ...(this.deps.activity ? { activity: this.deps.activity } : {}),
        models: name !== undefined ? { [this.role]: name } : {},
        ...(this.role === 'completion' ? { infillPath: caps.route as '/v1/infill' | '/infill' } : {}),
      });
      this.current = client;
      this.update({ state: 'ready', model: name ?? null, message: null });
      return client;
    } catch (err) {
      if (this.off === null && !this.abort.signal.aborted) {
        const message = `${ROLE_FEATURE[this.role]}: ${(err as Error).message}`;
        log.warn(`${message} (${this.url})`);
        this.update({ state: 'failed', message: (err as Error).message });
        throw new Error(message);
      }
      throw err;
    }
  }

  private update(change: Partial<ServerStatus>): void {
    this.state = { ...this.state, ...change };
    this.changed(this.state);
  }
}

/** The connection one role's features get: its own server when it has one, else the main server. */
class RoleConnection implements ServerConnection {
  readonly listeners = new Listeners();
  constructor(private readonly owner: RoleServers, private readonly role: ModelUse) {}

  get status(): ServerStatus { return this.owner.serverOf(this.role)?.status ?? this.owner.main.status; }

  get client(): StrataClient | undefined {
    const own = this.owner.serverOf(this.role);
    if (!own) return this.owner.main.client;
    // Features that only look (inline completions) connect it once the main server runs.
    if (own.status.state === 'stopped' && this.owner.main.status.state === 'ready') void own.connect().catch(() => undefined);
    return own.client;
  }

  ensureReady(): Promise<StrataClient> {
    const own = this.owner.serverOf(this.role);
    return own ? own.connect() : this.owner.main.ensureReady();
  }

  onDidChange(listener: Listener): { dispose(): void } {
    return this.listeners.add(listener);
  }
}

export class RoleServers {
  readonly main: ServerConnection;
  private readonly servers = new Map<ModelUse, RoleServer>();
  private readonly connections = new Map<ModelUse, RoleConnection>();
  private readonly subscription: { dispose(): void };

  constructor(private readonly deps: RoleServersDeps) {
    this.main = deps.main;
    for (const role of ROLES) this.connections.set(role, new RoleConnection(this, role));
    this.reload();
    let last = deps.main.status.state;
    this.subscription = deps.main.onDidChange((s) => {
      // Role servers follow the main server's start and stop, not its busy flag.
      const became = s.state !== last ? s.state : null;
      last = s.state;
      for (const role of ROLES) {
        const own = this.servers.get(role);
        if (!own) this.connections.get(role)!.listeners.fire(s);
        else if (became === 'ready') void own.connect().catch(() => undefined);
        else if (became === 'stopped') own.disconnect();
      }
    });
  }

  /** The connection the role's features use. */
  connection(role: ModelUse): ServerConnection {
    return this.connections.get(role)!;
  }

  /** One line per role on its own server (the status bar's tooltip): where it runs and how it is. */
  lines(): string[] {
    return ROLES.flatMap((role) => {
      const own = this.servers.get(role);
      if (!own) return [];
      const s = own.status;
      const state = s.state === 'ready' ? `ready${s.model ? `, ${s.model}` : ''}` : s.state === 'failed' ? s.message ?? 'failed' : s.state;
      return [`${ROLE_FEATURE[role]}: ${own.url} (${state})`];
    });
  }

  /** Why Agent mode cannot run on the chat role's own server (its chat template takes no tools), else null. */
  agentBlocked(): string | null {
    const own = this.servers.get('chat');
    return own?.capabilities?.toolCalls === false ? agentOff(own.url.replace(/\/+$/, '')) : null;
  }

  /** Any role's connection changed. */
  onDidChange(listener: () => void): { dispose(): void } {
    const subs = ROLES.map((r) => this.connections.get(r)!.onDidChange(() => listener()));
    return { dispose: () => { for (const s of subs) s.dispose(); } };
  }

  /** The role's own server, or undefined when it uses the main one. */
  serverOf(role: ModelUse): RoleServer | undefined {
    return this.servers.get(role);
  }

  /**
   * Reads the roles' URLs again (settings changed); `roles` (a key changed) reconnect even with the
   * same URL. A role that now has a server connects at once when the main server is ready.
   */
  reload(roles: readonly ModelUse[] = []): void {
    for (const role of ROLES) {
      const url = this.deps.settings.url(role).trim();
      const old = this.servers.get(role);
      if ((old?.url ?? '') === url && !(old && roles.includes(role))) continue;
      old?.dispose();
      const conn = this.connections.get(role)!;
      if (!url) {
        this.servers.delete(role);
        conn.listeners.fire(this.main.status);
        continue;
      }
      const own = new RoleServer(role, url, this.deps, (s) => { if (this.servers.get(role) === own) conn.listeners.fire(s); });
      this.servers.set(role, own);
      conn.listeners.fire(own.status);
      if (this.main.status.state === 'ready') void own.connect().catch(() => undefined);
    }
  }

  dispose(): void {
    this.subscription.dispose();
    for (const s of this.servers.values()) s.dispose();
  }
}
