// Which models `strata serve` serves: repeated --model FILE (or NAME=FILE), every *.gguf in
// --models-dir, and the config file's "models" section, which adds models or gives one of them
// its own settings (ctx, slots, KV type, devices, replicas, fit, role, pin). Each model is served under a
// name: its alias, else the file's base name without .gguf.
import { basename, join } from 'node:path';
import type { ModelRole } from '../../contract/models.js';
import { isHubModel, parseHubRef } from '../../common/hub/hub-ref.js';
import { ConfigError, convert, placeDevices } from './config-values.js';
import { PER_MODEL_KEYS, SERVE_OPTIONS, flagOf, withRenamedOptions, type PerModelKey, type ServeOption, type ServeOptionValues } from './serve-options.js';
import { samePath } from '../../common/os/paths.js';

/** The serve settings one model may set for itself (serve-options.ts `perModel`); the others are the server's. */
export type ModelSettings = { [K in Exclude<PerModelKey, 'devices'>]?: NonNullable<ServeOptionValues[K]> } & {
  /** From the entry's `devices`, split over its replicas. */
  deviceGroups?: string[][];
};

export interface ModelSpec {
  /** What requests name in `model`. */
  name: string;
  path: string;
  /** What the model is for; null: whatever it is asked (the default model takes what no role claims). */
  role: ModelRole | null;
  /** Never unloaded by LRU or idle time (--pin NAME, or "pin": true in its config entry). */
  pinned?: boolean;
  settings: ModelSettings;
}

const ROLES: readonly ModelRole[] = ['completion', 'chat', 'embedding', 'rerank'];
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const modelNameOf = (path: string): string => basename(path).replace(/\.gguf$/i, '');

export interface ModelSources {
  /** --model values in order ("FILE" or "NAME=FILE"). */
  models: string[];
  modelsDir: string | null;
  /** The config file's "models" value (undefined: none). */
  section: unknown;
  /** Where the section came from, for messages. */
  sectionWhere: string;
  listDir: (dir: string) => string[];
  /** Hears a note for each old option name an entry uses. */
  note?: (line: string) => void;
}

/** hf:ORG/REPO:QUANT is pulled before the engines load (cli/serve.ts); a malformed one is refused here. */
function checkHubModel(path: string, where: string): void {
  if (!isHubModel(path)) return;
  try { parseHubRef(path); } catch (e) { throw new ConfigError(`${where}: ${(e as Error).message}`); }
}

export function resolveModelSpecs(src: ModelSources): ModelSpec[] {
  const specs: ModelSpec[] = [];
  const add = (spec: ModelSpec, where: string): void => {
    if (!NAME.test(spec.name)) throw new ConfigError(`${where}: '${spec.name}' is not a usable model name (letters, digits, . _ : -)`);
    const clash = specs.find((s) => s.name === spec.name);
    if (clash) throw new ConfigError(`${where}: two models are named '${spec.name}' (${clash.path} and ${spec.path}); give one an alias with --model NAME=FILE`);
    specs.push(spec);
  };
  for (const value of src.models) {
    const eq = value.indexOf('=');
    const aliased = eq > 0 && NAME.test(value.slice(0, eq));
    const path = aliased ? value.slice(eq + 1) : value;
    if (path.trim() === '') throw new ConfigError(`--model '${value}' names no file`);
    checkHubModel(path, `--model ${value}`);
    add({ name: aliased ? value.slice(0, eq) : modelNameOf(path), path, role: null, settings: {} }, `--model ${value}`);
  }
  if (src.modelsDir !== null) {
    let files: string[];
    try { files = src.listDir(src.modelsDir); } catch (e) { throw new ConfigError(`--models-dir ${src.modelsDir}: ${(e as Error).message}`); }
    const ggufs = files.filter((f) => /\.gguf$/i.test(f)).sort();
    if (ggufs.length === 0) throw new ConfigError(`--models-dir ${src.modelsDir} holds no .gguf file`);
    for (const f of ggufs) {
      const path = join(src.modelsDir, f);
      if (!specs.some((s) => samePath(s.path, path))) add({ name: modelNameOf(f), path, role: null, settings: {} }, `--models-dir ${src.modelsDir}`);
    }
  }
  if (src.section !== undefined) {
    if (!Array.isArray(src.section)) throw new ConfigError(`${src.sectionWhere}: "models" must be an array of {name?, path?, role?, ctx?, ...}`);
    src.section.forEach((entry: unknown, i) => sectionEntry(specs, add, entry, `${src.sectionWhere}: models[${i}]`, src.note ?? (() => {})));
  }
  return specs;
}

function sectionEntry(
  specs: ModelSpec[], add: (s: ModelSpec, where: string) => void, entry: unknown, where: string, note: (line: string) => void,
): void {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new ConfigError(`${where}: expected an object`);
  const e = Object.fromEntries(withRenamedOptions(new Map(Object.entries(entry as Record<string, unknown>)), note, 'both'));
  const known = new Set(['name', 'path', 'role', 'pin', ...PER_MODEL_KEYS.flatMap((k) => [flagOf(k), k])]);
  for (const k of Object.keys(e)) if (!known.has(k)) throw new ConfigError(`${where}: unknown setting '${k}'`);
  const name = e.name === undefined ? null : convert(e.name, { t: 'string' }, `${where}.name`) as string;
  const path = e.path === undefined ? null : convert(e.path, { t: 'string' }, `${where}.path`) as string;
  const role = e.role === undefined ? null : convert(e.role, { t: 'enum', values: ROLES }, `${where}.role`) as ModelRole;
  const pinned = e.pin === undefined ? null : convert(e.pin, { t: 'bool' }, `${where}.pin`) as boolean;
  const settings: ModelSettings = {};
  let devices: string | null = null;
  for (const key of PER_MODEL_KEYS) {
    const raw = e[flagOf(key)] ?? e[key];
    if (raw === undefined) continue;
    // Checked as the serve option is (its kind in the one table).
    const v = convert(raw, (SERVE_OPTIONS[key] as ServeOption).kind, `${where}.${flagOf(key)}`);
    if (key === 'devices') devices = v as string;
    else (settings as Record<string, unknown>)[key] = v;
  }
  if (devices !== null) {
    const placed = placeDevices(devices, settings.replicas ?? 1, settings.replicas !== undefined, `${where}.devices`, `${where}.replicas`);
    settings.replicas = placed.replicas;
    settings.deviceGroups = placed.groups;
  }
  // An entry naming a model given by flag or folder gives it settings; any other adds one.
  const existing = specs.find((s) => (name !== null && s.name === name) || (path !== null && samePath(s.path, path)));
  if (existing) {
    if (path !== null && !samePath(existing.path, path)) throw new ConfigError(`${where}: model '${existing.name}' is ${existing.path}, not ${path}`);
    if (name !== null && existing.name !== name) existing.name = name;
    existing.role = role ?? existing.role;
    if (pinned !== null) existing.pinned = pinned;
    existing.settings = { ...existing.settings, ...settings };
    return;
  }
  if (path === null) throw new ConfigError(`${where}: no "path", and no --model or --models-dir model is named '${name}'`);
  checkHubModel(path, `${where}.path`);
  add({ name: name ?? modelNameOf(path), path, role, ...(pinned !== null ? { pinned } : {}), settings }, where);
}
