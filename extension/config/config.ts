// Reads the strata.* settings into typed values. The only place that knows the setting names.
import * as vscode from 'vscode';
import { parseNumberList, parseStringList, type ServerSettings, type SplitMode } from './server-settings.js';

export const SECTION = 'strata';
export const API_KEY_SECRET = 'strata.apiKey';

/** Settings whose change needs a server restart. */
export const SERVER_KEYS = ['modelPath', 'completionModel', 'chatModel', 'embeddingModel', 'nextEditModel', 'serverMode', 'remoteUrl', 'apiKey', 'port', 'slots', 'contextSize', 'kvType', 'cacheMiB', 'devices', 'splitMode', 'tensorSplit', 'replicas', 'rpcServers'];

function cfg(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

export function readServerSettings(): ServerSettings {
  const c = cfg();
  const split = c.get<string>('splitMode', '');
  return {
    modelPath: expandHome(c.get<string>('modelPath', '').trim()),
    port: c.get<number>('port', 0),
    slots: c.get<number>('slots', 4),
    contextSize: c.get<number>('contextSize', 4096),
    kvType: c.get<string>('kvType', 'f16'),
    cacheMiB: c.get<number>('cacheMiB', 2048),
    devices: parseStringList(c.get<string | string[]>('devices', '')),
    splitMode: (['none', 'layer', 'row'].includes(split) ? split : '') as SplitMode,
    tensorSplit: parseNumberList(c.get<string | number[]>('tensorSplit', '')),
    replicas: c.get<number>('replicas', 1),
    rpcServers: parseStringList(c.get<string | string[]>('rpcServers', '')),
    completionModel: expandHome(c.get<string>('completionModel', '').trim()),
    chatModel: expandHome(c.get<string>('chatModel', '').trim()),
    embeddingModel: expandHome(c.get<string>('embeddingModel', '').trim()),
    nextEditModel: expandHome(c.get<string>('nextEditModel', '').trim()),
  };
}

export function serverMode(): 'managed' | 'remote' {
  return cfg().get<string>('serverMode', 'managed') === 'remote' ? 'remote' : 'managed';
}

export function remoteUrl(): string {
  return cfg().get<string>('remoteUrl', '').trim();
}

export function autoStart(): boolean {
  return cfg().get<boolean>('autoStart', false);
}

/** The API key: SecretStorage first, then the (plain-text) setting as a fallback. */
export async function apiKey(secrets: vscode.SecretStorage): Promise<string | undefined> {
  return (await secrets.get(API_KEY_SECRET)) || cfg().get<string>('apiKey', '').trim() || undefined;
}

export interface CompletionSettings {
  enabled: boolean;
  debounceMs: number;
  maxLines: number;
  /** Candidates asked for in one request (VS Code cycles them with Alt+] / Alt+[). */
  candidates: number;
}

export function completionSettings(): CompletionSettings {
  const c = cfg();
  return {
    enabled: c.get<boolean>('inlineCompletion.enabled', true),
    debounceMs: Math.max(0, c.get<number>('inlineCompletion.debounceMs', 150)),
    maxLines: Math.max(1, c.get<number>('inlineCompletion.maxLines', 8)),
    candidates: clampInt(c.get<number>('inlineCompletion.candidates', 1), 1, 8),
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
  const c = cfg();
  return {
    enabled: c.get<boolean>('nextEdit.enabled', false),
    disabledLanguages: c.get<string[]>('nextEdit.disabledLanguages', []).filter((l) => typeof l === 'string'),
    regionLines: clampInt(c.get<number>('nextEdit.regionLines', 24), 4, 200),
    delayMs: Math.max(0, c.get<number>('nextEdit.delayMs', 300)),
  };
}

function clampInt(v: number, min: number, max: number): number {
  return Number.isFinite(v) ? Math.max(min, Math.min(max, Math.round(v))) : min;
}

let selfChanges = 0;

/** Sets the model; the caller restarts the server itself, so no "restart?" prompt for this change. */
export async function setModelPath(path: string): Promise<void> {
  selfChanges++;
  try {
    await cfg().update('modelPath', path, vscode.ConfigurationTarget.Global);
  } finally {
    selfChanges--;
  }
}

/** True while the extension itself is writing a setting. */
export function isSelfChange(): boolean {
  return selfChanges > 0;
}

function expandHome(p: string): string {
  if (p === '~' || p.startsWith('~/')) return (process.env.HOME ?? '') + p.slice(1);
  return p;
}
