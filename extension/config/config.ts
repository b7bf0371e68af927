// Reads the strata.* settings into typed values. The only place that knows the setting names.
import * as vscode from 'vscode';
import { isModelFile, parseNumberList, parseStringList, type ModelUse, type ServerSettings, type SplitMode } from './server-settings.js';
import { settingDefault, type SettingName, type SettingValue } from './settings-schema.js';
import { homedir } from 'node:os';
import { expandHome as expandHomeIn } from '../../common/os/paths.js';
import { decodeStoredKey, encodeStoredKey, keyForServer, keyOrigin } from '../client/key-policy.js';

export const SECTION = 'strata';
export const API_KEY_SECRET = 'strata.apiKey';

/** The setting that points a role at its own server (empty: the managed or remote server). */
export const ROLE_URL_SETTING = {
  completion: 'completionServerUrl', chat: 'chatServerUrl', nextEdit: 'nextEditServerUrl', embedding: 'embeddingServerUrl', rerank: 'rerankServerUrl',
} as const satisfies Record<ModelUse, SettingName>;

/** Where a role server's key is kept in SecretStorage (never in settings). */
export const roleKeySecret = (role: ModelUse): string => `strata.apiKey.${role}`;

/** Settings whose change needs a server restart. */
export const SERVER_KEYS: readonly SettingName[] = ['modelPath', 'completionModel', 'chatModel', 'chatModelProjector', 'embeddingModel', 'rerankModel', 'nextEditModel', 'serverMode', 'remoteUrl', 'apiKey', 'allowInsecureRemote', 'port', 'slots', 'contextSize', 'kvType', 'parkMiB', 'cacheMiB', 'devices', 'splitMode', 'tensorSplit', 'replicas', 'rpcServers', 'fit', 'pinCompletionModel'];

function cfg(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

/** A setting's value; its default is package.json's (settings-schema.ts), never restated here. */
export function setting<N extends SettingName>(name: N): SettingValue<N> {
  return cfg().get<SettingValue<N>>(name, settingDefault(name));
}

/**
 * A setting as the user set it (user settings, never a workspace's or a folder's), else its
 * default. For the settings that start programs, choose the server the extension talks to or
 * let the agent act without asking: a cloned repository's .vscode/settings.json must not set them.
 */
export function userSetting<N extends SettingName>(name: N): SettingValue<N> {
  const v = cfg().inspect<SettingValue<N>>(name)?.globalValue;
  return v === undefined ? settingDefault(name) : v;
}

/** A setting's value where the user set one (user, workspace or folder settings), else null. */
export function setValue<N extends SettingName>(name: N): SettingValue<N> | null {
  const i = cfg().inspect<SettingValue<N>>(name);
  return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue ?? null;
}

export function readServerSettings(): ServerSettings {
  const split = setting('splitMode');
  // A list setting may also be written as a JSON array in settings.json.
  const listSetting = (name: 'devices' | 'tensorSplit' | 'rpcServers'): string | string[] => setting(name) as string | string[];
  return {
    modelPath: expandHome(setting('modelPath').trim()),
    // A repository's settings must not choose it: a program it starts there first would get the requests.
    port: userSetting('port'),
    slots: setValue('slots'),
    contextSize: setting('contextSize'),
    kvType: setValue('kvType'),
    // strata.cacheMiB is its old name, read while the new one is unset.
    parkMiB: setValue('parkMiB') ?? setValue('cacheMiB'),
    devices: parseStringList(listSetting('devices')),
    splitMode: (['none', 'layer', 'row'].includes(split) ? split : '') as SplitMode,
    tensorSplit: parseNumberList(listSetting('tensorSplit') as string | number[]),
    replicas: setting('replicas'),
    rpcServers: parseStringList(listSetting('rpcServers')),
    completionModel: expandHome(setting('completionModel').trim()),
    chatModel: expandHome(setting('chatModel').trim()),
    chatModelProjector: expandHome(setting('chatModelProjector').trim()),
    embeddingModel: expandHome(setting('embeddingModel').trim()),
    rerankModel: expandHome(setting('rerankModel').trim()),
    nextEditModel: expandHome(setting('nextEditModel').trim()),
    fit: (['auto', 'on', 'off'].includes(setting('fit')) ? setting('fit') : 'auto') as ServerSettings['fit'],
    pinCompletionModel: setting('pinCompletionModel'),
    roleUrls: roleServerUrls(),
  };
}

export function serverMode(): 'managed' | 'remote' {
  return userSetting('serverMode') === 'remote' ? 'remote' : 'managed';
}

export function remoteUrl(): string {
  return String(userSetting('remoteUrl')).trim();
}

/**
 * The role's own server, from user settings only: a repository's settings must not send a role's
 * requests (the code around the cursor, the chat) to a server of its choosing.
 */
export function roleServerUrl(role: ModelUse): string {
  return String(userSetting(ROLE_URL_SETTING[role])).trim();
}

export function roleServerUrls(): Partial<Record<ModelUse, string>> {
  const out: Partial<Record<ModelUse, string>> = {};
  for (const role of Object.keys(ROLE_URL_SETTING) as ModelUse[]) {
    const url = roleServerUrl(role);
    if (url) out[role] = url;
  }
  return out;
}

/** The model setting of each role. */
export const ROLE_MODEL_SETTING = {
  completion: 'completionModel', chat: 'chatModel', nextEdit: 'nextEditModel', embedding: 'embeddingModel', rerank: 'rerankModel',
} as const satisfies Record<ModelUse, SettingName>;

/** The model a role's own server is asked for: its model setting when that names a served model (a file means nothing there). */
export function roleModelName(role: ModelUse): string | undefined {
  const v = String(setting(ROLE_MODEL_SETTING[role])).trim();
  return v && !isModelFile(v) ? v : undefined;
}

/** A role server's key, from SecretStorage only (Strata: Set Role Server API Key), and only for the server it was entered for. */
export async function roleApiKey(secrets: vscode.SecretStorage, role: ModelUse, url = roleServerUrl(role)): Promise<string | undefined> {
  return boundKey(secrets, roleKeySecret(role), url);
}

/** Whether keys may go over plain http to another machine (user settings only). */
export function allowInsecureRemote(): boolean {
  return userSetting('allowInsecureRemote') === true;
}

/** Stores `key` under `name` for the server `url` names; false when the URL names none. */
export async function storeBoundKey(secrets: vscode.SecretStorage, name: string, key: string, url: string): Promise<boolean> {
  const origin = keyOrigin(url);
  if (origin === null) return false;
  await secrets.store(name, encodeStoredKey(key, origin));
  return true;
}

/** The server (origin) the key under `name` was entered for, null when there is none or it predates binding. */
export async function storedKeyOrigin(secrets: vscode.SecretStorage, name: string): Promise<string | null> {
  const raw = await secrets.get(name);
  return raw ? decodeStoredKey(raw).origin : null;
}

/**
 * The key under `name` when it was entered for the server `url` names. A key kept before keys were
 * bound is bound on its first read to the server in the settings then (activation reads them all,
 * so a URL changed later does not take it along).
 */
export async function boundKey(secrets: vscode.SecretStorage, name: string, url: string): Promise<string | undefined> {
  const raw = await secrets.get(name);
  if (!raw) return undefined;
  const stored = decodeStoredKey(raw);
  if (stored.origin !== null) return keyForServer(stored, url);
  if (!(await storeBoundKey(secrets, name, stored.key, url))) return undefined;
  return stored.key;
}

export function autoStart(): boolean {
  return setting('autoStart');
}

/** The API key: SecretStorage first (when entered for strata.remoteUrl's server), then the (plain-text) setting as a fallback. */
export async function apiKey(secrets: vscode.SecretStorage): Promise<string | undefined> {
  return (await boundKey(secrets, API_KEY_SECRET, remoteUrl())) || String(userSetting('apiKey')).trim() || undefined;
}

export interface CompletionSettings {
  enabled: boolean;
  debounceMs: number;
  maxLines: number;
  /** Candidates asked for in one request (VS Code cycles them with Alt+] / Alt+[). */
  candidates: number;
  /** The codebase index's chunks for the cursor's identifiers go with each request as input_extra. */
  codebaseContext: boolean;
}

export function completionSettings(): CompletionSettings {
  return {
    enabled: setting('inlineCompletion.enabled'),
    debounceMs: Math.max(0, setting('inlineCompletion.debounceMs')),
    maxLines: Math.max(1, setting('inlineCompletion.maxLines')),
    candidates: clampInt(setting('inlineCompletion.candidates'), 1, 8),
    codebaseContext: setting('inlineCompletion.codebaseContext') === true,
  };
}

export interface NextEditSettings {
  enabled: boolean;
  /** Language ids without next-edit suggestions. */
  disabledLanguages: string[];
  /** Lines of the editable region around the last edit. */
  regionLines: number;
  /** Wait after an edit before asking (ms). */
  delayMs: number;
}

export function nextEditSettings(): NextEditSettings {
  return {
    enabled: setting('nextEdit.enabled'),
    disabledLanguages: (setting('nextEdit.disabledLanguages') as unknown[]).filter((l): l is string => typeof l === 'string'),
    regionLines: clampInt(setting('nextEdit.regionLines'), 4, 200),
    delayMs: Math.max(0, setting('nextEdit.delayMs')),
  };
}

/** trusted: the user vouches for the server, so its tools that say they only read may run without asking. */
export interface McpServerConfig { command: string; args: string[]; env: Record<string, string>; trusted: boolean }

export interface AgentConfig {
  maxSteps: number;
  autoApproveReadOnly: boolean;
  allowedCommands: string[];
  maxResultTokens: number;
  /** By name; entries without a command are left out. */
  mcpServers: Record<string, McpServerConfig>;
  /** Rule files beside AGENTS.md, relative to each workspace folder. */
  rulesFiles: string[];
}

export function agentSettings(): AgentConfig {
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, raw] of Object.entries((userSetting('agent.mcpServers') ?? {}) as Record<string, unknown>)) {
    const o = (raw ?? {}) as { command?: unknown; args?: unknown; env?: unknown; trusted?: unknown };
    if (typeof o.command !== 'string' || !o.command.trim()) continue;
    servers[name] = {
      command: o.command,
      args: Array.isArray(o.args) ? o.args.filter((a): a is string => typeof a === 'string') : [],
      env: Object.fromEntries(Object.entries((o.env ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string')),
      trusted: o.trusted === true,
    };
  }
  return {
    maxSteps: clampInt(setting('agent.maxSteps'), 1, 200),
    autoApproveReadOnly: userSetting('agent.autoApproveReadOnly') === true,
    allowedCommands: (Array.isArray(userSetting('agent.allowedCommands')) ? userSetting('agent.allowedCommands') as unknown[] : []).filter((c): c is string => typeof c === 'string'),
    maxResultTokens: clampInt(setting('agent.maxResultTokens'), 100, 1_000_000),
    mcpServers: servers,
    rulesFiles: (setting('agent.rulesFiles') as unknown[]).filter((c): c is string => typeof c === 'string' && c.trim() !== ''),
  };
}

function clampInt(v: number, min: number, max: number): number {
  return Number.isFinite(v) ? Math.max(min, Math.min(max, Math.round(v))) : min;
}

let selfChanges = 0;

/** Sets the model; the caller restarts the server itself, so no "restart?" prompt for this change. */
export function setModelPath(path: string): Promise<void> {
  return setServerSetting('modelPath', path);
}

/** Sets a server setting (a role's model); the caller restarts the server itself, as for setModelPath. */
export async function setServerSetting(name: 'modelPath' | 'completionModel' | 'chatModel' | 'embeddingModel' | 'rerankModel' | 'nextEditModel', value: string): Promise<void> {
  selfChanges++;
  try {
    await cfg().update(name, value, vscode.ConfigurationTarget.Global);
  } finally {
    selfChanges--;
  }
}

/** True while the extension itself is writing a setting. */
export function isSelfChange(): boolean {
  return selfChanges > 0;
}

function expandHome(p: string): string {
  return expandHomeIn(p, homedir());
}
