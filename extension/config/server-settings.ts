// Server settings as the extension reads them, and the `strata serve` arguments they become.
// Pure: extension/config/config.ts reads VS Code's configuration into ServerSettings.
import { isHubModel } from '../../common/hub/hub-ref.js';
import { KV_TYPES } from '../../contract/kv-types.js';
import { settingDefault, settingRange, type SettingName } from './settings-schema.js';
import { samePath } from '../../common/os/paths.js';

export type SplitMode = 'none' | 'layer' | 'row' | '';

export interface ServerSettings {
  /** Path of a GGUF file; '' = the generated demo model. */
  modelPath: string;
  /** 0 = pick a free port. */
  port: number;
  // slots, kvType and parkMiB: null when the user did not set them; the server then applies its
  // own defaults (the settings' defaults in package.json say what those are).
  slots: number | null;
  /** Context tokens per slot; AUTO_CONTEXT (0): the server's shared context, chosen for the work (contextPlan). */
  contextSize: number;
  kvType: string | null;
  /** The park's budget (--park-mib). */
  parkMiB: number | null;
  devices: string[];
  splitMode: SplitMode;
  tensorSplit: number[];
  replicas: number;
  rpcServers: string[];
  /** Inline completions' model: a GGUF path or a served name; '' = the modelPath model. */
  completionModel: string;
  /** Chat's model (panel, @strata, inline edits, the language model provider). */
  chatModel: string;
  /** The chat model's projector (mmproj GGUF) for images; '' = chat reads text only. */
  chatModelProjector: string;
  embeddingModel: string;
  /** A reranker (pooling rank) for codebase search, served at /v1/rerank. */
  rerankModel: string;
  /** Next-edit suggestions' model, a GGUF path or a served name; '' = the completion model. */
  nextEditModel: string;
  /** Fit models to free device memory (the server's --fit; auto: when a model goes to a GPU). */
  fit: 'auto' | 'on' | 'off';
  /** Keep the completion model loaded whatever else loads (the server's --pin), so completions never wait for a reload. */
  pinCompletionModel: boolean;
  /** Roles served by their own server (strata.*ServerUrl): the managed server leaves their models out. */
  roleUrls: Partial<Record<ModelUse, string>>;
}

/** The settings as package.json's defaults make them (settings-schema.ts), the user having set none. */
export const DEFAULT_SETTINGS: ServerSettings = {
  modelPath: settingDefault('modelPath'), port: settingDefault('port'), slots: null,
  contextSize: settingDefault('contextSize'), kvType: null, parkMiB: null,
  devices: parseStringList(settingDefault('devices')), splitMode: settingDefault('splitMode') as SplitMode,
  tensorSplit: parseNumberList(settingDefault('tensorSplit')), replicas: settingDefault('replicas'),
  rpcServers: parseStringList(settingDefault('rpcServers')),
  completionModel: settingDefault('completionModel'), chatModel: settingDefault('chatModel'), chatModelProjector: settingDefault('chatModelProjector'), embeddingModel: settingDefault('embeddingModel'),
  rerankModel: settingDefault('rerankModel'), nextEditModel: settingDefault('nextEditModel'),
  fit: settingDefault('fit') as ServerSettings['fit'], pinCompletionModel: settingDefault('pinCompletionModel'),
  roleUrls: {},
};

export type ModelUse = 'completion' | 'chat' | 'embedding' | 'rerank' | 'nextEdit';
/** In this order: next edit falls back to the completion model, so that comes first. */
const USES: readonly ModelUse[] = ['completion', 'chat', 'embedding', 'rerank', 'nextEdit'];
const settingOf = (s: ServerSettings, use: ModelUse): string =>
  ({ completion: s.completionModel, chat: s.chatModel, embedding: s.embeddingModel, rerank: s.rerankModel, nextEdit: s.nextEditModel })[use].trim();

/** A model setting that names a file or a Hub model (`hf:ORG/REPO[:QUANT]`), else a model the server serves. */
export const isModelFile = (v: string): boolean => isHubModel(v.trim()) || /\.gguf$/i.test(v) || /[\\/]/.test(v);

const baseName = (path: string): string => (path.split(/[\\/]/).pop() ?? path).replace(/\.gguf$/i, '');

/** The managed server's models (the modelPath model first) and the name each use sends as `model`. */
export interface ServedModels {
  models: Array<{ name: string; path: string }>;
  /** undefined: the server's default model (a single model answers whatever name is sent). */
  names: Record<ModelUse, string | undefined>;
}

export function servedModels(s: ServerSettings): ServedModels {
  const models: ServedModels['models'] = [];
  const add = (path: string, use: ModelUse | null): string => {
    const known = models.find((m) => samePath(m.path, path));
    if (known) return known.name;
    const base = baseName(path);
    // Two files with one base name: the later one is served under its use's name.
    const name = models.some((m) => m.name === base) && use ? `${use === 'nextEdit' ? 'next-edit' : use}-${base}` : base;
    models.push({ name, path });
    return name;
  };
  const main = s.modelPath ? add(s.modelPath, null) : undefined;
  const names = {} as ServedModels['names'];
  for (const use of USES) {
    // A role on its own server: its model is that server's business.
    if (s.roleUrls[use]) { names[use] = undefined; continue; }
    const v = settingOf(s, use);
    // A reranker is never the main model (a text or embedding model cannot rerank); next edit falls back to completion's.
    const fallback = use === 'rerank' ? undefined : use === 'nextEdit' && !s.roleUrls.completion ? names.completion : main;
    names[use] = v === '' ? fallback : isModelFile(v) ? add(v, use) : v;
  }
  return { models, names };
}

/** Problems a user must fix in settings before the server can start (empty = fine). */
export function settingsProblems(s: ServerSettings): string[] {
  const out: string[] = [];
  const int = (v: number, name: SettingName, least?: number): void => {
    const range = settingRange(name);
    const { min, max } = { ...range, min: least ?? range.min };
    if (!Number.isInteger(v) || v < min || v > max) out.push(`strata.${name} must be a whole number from ${min} to ${max} (is ${v})`);
  };
  int(s.port, 'port');
  if (s.slots !== null) int(s.slots, 'slots');
  if (s.contextSize !== AUTO_CONTEXT) int(s.contextSize, 'contextSize', MIN_CONTEXT);
  if (s.parkMiB !== null) int(s.parkMiB, 'parkMiB');
  if (s.kvType !== null && !(KV_TYPES as readonly string[]).includes(s.kvType)) out.push(`strata.kvType must be one of ${KV_TYPES.join(', ')} (is '${s.kvType}')`);
  int(s.replicas, 'replicas');
  if (s.tensorSplit.some((v) => !Number.isFinite(v) || v < 0)) out.push('strata.tensorSplit must be non-negative numbers, e.g. "3,1"');
  for (const r of s.rpcServers) if (!/^[\w.\-[\]:]+:\d{1,5}$/.test(r)) out.push(`strata.rpcServers entry '${r}' is not host:port`);
  return out;
}

/** Parses "3,1" or "3, 1" into numbers; an entry that is not a number stays NaN (caught by settingsProblems). */
export function parseNumberList(v: string | number[] | undefined): number[] {
  if (Array.isArray(v)) return v.map(Number);
  return (v ?? '').split(',').map((x) => x.trim()).filter(Boolean).map(Number);
}

export function parseStringList(v: string | string[] | undefined): string[] {
  if (Array.isArray(v)) return v.map((x) => String(x).trim()).filter(Boolean);
  return (v ?? '').split(',').map((x) => x.trim()).filter(Boolean);
}

/**
 * The `model` each use sends: the managed server's names for its models; for a remote server,
 * the settings that name a served model (files mean nothing to it). Absent: the server's default.
 */
export function requestModels(s: ServerSettings, mode: 'managed' | 'remote'): Partial<Record<ModelUse, string>> {
  const out: Partial<Record<ModelUse, string>> = {};
  if (mode === 'managed') {
    const { names } = servedModels(s);
    for (const use of USES) if (names[use] !== undefined) out[use] = names[use];
    return out;
  }
  for (const use of USES) {
    const v = settingOf(s, use);
    if (v && !isModelFile(v)) out[use] = v;
  }
  if (out.nextEdit === undefined && !settingOf(s, 'nextEdit') && out.completion !== undefined) out.nextEdit = out.completion;
  return out;
}

/** strata.contextSize 0: the context is chosen for the work (contextPlan). */
export const AUTO_CONTEXT = 0;
/** The least context a slot may have (the server's --ctx minimum; test/unit/settings-table.test.ts checks it). */
export const MIN_CONTEXT = 16;
/** On the CPU, automatic: the context per slot of the models other than the chat model (completions' short prompts). */
export const COMPLETION_CTX = 4096;

/** The per-model settings of the --config file's "models" section (entries name --model models). */
export interface ModelsSection { models: Array<{ name: string; ctx?: number; slots?: number; mmproj?: string }> }

/**
 * The context the managed server gets: the user's strata.contextSize per slot for every model;
 * automatic: no --ctx, so the chat model's slots share the server's default context (the training
 * context where memory allows: an agent's long conversation beside short requests). Where the fit
 * places models on a GPU (strata.fit on, strata.devices naming one) every model has it; on the CPU
 * the other models (completions, embeddings) keep a small context per slot (`section`).
 */
export function contextPlan(s: ServerSettings): { ctx: number | null; section: ModelsSection | null } {
  if (s.contextSize !== AUTO_CONTEXT) return { ctx: s.contextSize, section: null };
  const gpu = s.fit === 'on' || s.devices.some((d) => !/^cpu/i.test(d));
  if (gpu) return { ctx: null, section: null };
  const { models, names } = servedModels(s);
  const others = models.filter((m) => m.name !== names.chat);
  return { ctx: null, section: others.length > 0 ? { models: others.map((m) => ({ name: m.name, ctx: COMPLETION_CTX })) } : null };
}

/**
 * The --config file's "models" section the managed server gets: contextPlan's, with the chat
 * model's projector (strata.chatModelProjector) in the chat model's entry when the managed server
 * serves that model from a file. null: no section.
 */
export function modelsSection(s: ServerSettings): ModelsSection | null {
  const { section } = contextPlan(s);
  const projector = s.chatModelProjector.trim();
  const { models, names } = servedModels(s);
  const chat = names.chat ?? models[0]?.name;
  if (projector === '' || chat === undefined || !models.some((m) => m.name === chat)) return section;
  const entries = section?.models ?? [];
  const own = entries.find((e) => e.name === chat);
  return { models: own ? entries.map((e) => (e === own ? { ...e, mmproj: projector } : e)) : [...entries, { name: chat, mmproj: projector }] };
}

/** Arguments after the CLI path: `serve --host 127.0.0.1 --port P ...`; `configFile`: where modelsSection's section was written. */
export function buildServeArgs(s: ServerSettings, port: number, configFile?: string): string[] {
  const a = ['serve', '--host', '127.0.0.1', '--port', String(port)];
  const { models } = servedModels(s);
  for (const m of models) a.push('--model', m.name === baseName(m.path) ? m.path : `${m.name}=${m.path}`);
  // Several models stay warm together: no load between a chat and the next inline completion; the
  // completion model is pinned, so nothing a chat loads unloads it (LRU or VRAM).
  if (models.length > 1) a.push('--preload', 'all');
  const completion = servedModels(s).names.completion;
  if (models.length > 1 && s.pinCompletionModel && completion !== undefined && models.some((m) => m.name === completion)) a.push('--pin', completion);
  if (s.fit !== 'auto') a.push('--fit', s.fit);
  const plan = contextPlan(s);
  // Only what the user set: the server's defaults (and its fit) choose the rest.
  if (s.slots !== null) a.push('--slots', String(s.slots));
  if (plan.ctx !== null) a.push('--ctx', String(plan.ctx));
  if (s.kvType !== null) a.push('--kv-type', s.kvType);
  if (s.parkMiB !== null) a.push('--park-mib', String(s.parkMiB));
  if (modelsSection(s) && configFile) a.push('--config', configFile);
  if (s.replicas !== 1) a.push('--replicas', String(s.replicas));
  if (s.devices.length) a.push('--devices', s.devices.join(','));
  if (s.splitMode) a.push('--split-mode', s.splitMode);
  if (s.tensorSplit.length) a.push('--tensor-split', s.tensorSplit.join(','));
  if (s.rpcServers.length) a.push('--rpc', s.rpcServers.join(','));
  return a;
}
