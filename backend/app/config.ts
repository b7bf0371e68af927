// `strata serve` settings: the options of serve-options.ts read from flags, STRATA_* environment
// variables and a JSON config file, in that order of precedence (flags > env > config >
// defaults). A bad value is refused with a message naming where it came from.
import { readdirSync } from 'node:fs';
import { isLoopbackHost } from '../../common/net/loopback.js';
import { ConfigError, convert, placeDevices } from './config-values.js';
import { resolveModelSpecs, type ModelSpec } from './model-specs.js';
import {
  CONFIG_OPTION, RENAMED_OPTIONS, SERVE_OPTIONS, SERVE_OPTION_KEYS, defaultOf, envOf, flagOf, withRenamedOptions, type ServeOption, type ServeOptionValues,
} from './serve-options.js';

export { ConfigError } from './config-values.js';
export { defaultSessionsDir, serveHelp } from './serve-options.js';

export type LogFormat = ServerConfig['logFormat'];

/** Every option's value (serve-options.ts), with --devices resolved into replicas and device groups. */
export interface ServerConfig extends Omit<ServeOptionValues, 'devices'> {
  /** Every model served, the default first (empty: the demo model alone). */
  models: ModelSpec[];
  /** Device names per replica (null: the engine's default placement). */
  deviceGroups: string[][] | null;
  configFile: string | null;
}

export function defaultConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const cfg: Record<string, unknown> = { models: [], deviceGroups: null, configFile: null };
  for (const key of SERVE_OPTION_KEYS) if (key !== 'devices') cfg[key] = defaultOf(key, env);
  return cfg as unknown as ServerConfig;
}

export interface ConfigSources {
  /** --name value pairs from the command line. */
  flags: Map<string, string>;
  env: NodeJS.ProcessEnv;
  /** Reads the config file (tests pass their own). */
  readFile: (path: string) => string;
  /** Every value of repeated flags (--model A --model B). */
  repeated?: Map<string, string[]>;
  /** Lists --models-dir (default: the file system). */
  listDir?: (dir: string) => string[];
  /** Hears a note for each old option name used (`--cache-mib is now --park-mib`). */
  note?: (line: string) => void;
}

export function resolveConfig(given: ConfigSources): ServerConfig {
  const note = given.note ?? (() => {});
  const env = { ...given.env };
  for (const [old, now] of Object.entries(RENAMED_OPTIONS)) {
    if (env[envOf(old)] === undefined) continue;
    note(`${envOf(old)} is now ${envOf(now)}`);
    env[envOf(now)] ??= env[envOf(old)];
    delete env[envOf(old)];
  }
  const src: ConfigSources = { ...given, env, flags: withRenamedOptions(given.flags, note, 'flag') };
  const known = new Set([...SERVE_OPTION_KEYS.map(flagOf), CONFIG_OPTION.flag, 'help']);
  for (const name of src.flags.keys()) {
    if (!known.has(name)) throw new ConfigError(`unknown option --${name} (see strata serve --help)`);
  }
  const cfg = defaultConfig(src.env);
  const configPath = src.flags.get(CONFIG_OPTION.flag) ?? src.env[CONFIG_OPTION.env] ?? null;
  let fileValues: Record<string, unknown> = {};
  if (configPath) {
    let text: string;
    try { text = src.readFile(configPath); } catch (e) { throw new ConfigError(`cannot read config file ${configPath}: ${(e as Error).message}`); }
    let parsed: unknown;
    try { parsed = JSON.parse(text); } catch (e) { throw new ConfigError(`config file ${configPath} is not valid JSON: ${(e as Error).message}`); }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`config file ${configPath} must hold a JSON object`);
    fileValues = Object.fromEntries(withRenamedOptions(new Map(Object.entries(parsed as Record<string, unknown>)), note, 'both'));
    const keys = new Set([...SERVE_OPTION_KEYS.flatMap((k) => [flagOf(k), k]), 'models']);
    for (const k of Object.keys(fileValues)) {
      if (!keys.has(k)) throw new ConfigError(`config file ${configPath}: unknown setting '${k}'`);
    }
    cfg.configFile = configPath;
  }

  let devices: string | null = null;
  let replicasGiven = false;
  for (const key of SERVE_OPTION_KEYS) {
    const flag = flagOf(key);
    const env = envOf(key);
    let raw: unknown;
    let where: string;
    if (src.flags.has(flag)) { raw = src.flags.get(flag); where = `--${flag}`; }
    else if (src.env[env] !== undefined && src.env[env] !== '') { raw = src.env[env]; where = env; }
    else if (flag in fileValues || key in fileValues) {
      raw = fileValues[flag] ?? fileValues[key];
      where = `config file ${configPath}: ${flag}`;
    } else continue;
    if (key === 'model') continue; // with the other model sources, below
    const value = convert(raw, (SERVE_OPTIONS[key] as ServeOption).kind, where);
    if (key === 'devices') { devices = value as string; continue; }
    if (key === 'replicas') replicasGiven = true;
    (cfg as unknown as Record<string, unknown>)[key] = value;
  }

  if (devices !== null) {
    const placed = placeDevices(devices, cfg.replicas, replicasGiven, '--devices', '--replicas');
    cfg.replicas = placed.replicas;
    cfg.deviceGroups = placed.groups;
  }
  if (cfg.draftModel !== null && cfg.draftModel.trim() === '') throw new ConfigError('--draft-model is empty');
  resolveModels(cfg, src, fileValues, configPath, note);
  // Each model's speculation as it will run: the server's options with its own laid over them.
  if (cfg.models.length === 0) checkSpec(cfg, '');
  for (const m of cfg.models) checkSpec({ ...cfg, ...m.settings }, `model '${m.name}': `);
  const budgets = cfg.reasoningEffortBudgets;
  if (budgets.length !== 3 || budgets.some((n) => !Number.isInteger(n))) {
    throw new ConfigError(`--reasoning-effort-budgets: expected three whole numbers of tokens (low,medium,high), got ${budgets.join(',')}`);
  }
  if (!/^[a-z0-9_.]+$/.test(cfg.cpuVariant)) throw new ConfigError(`--cpu-variant '${cfg.cpuVariant}' is not a variant name (auto, haswell, zen4, …)`);
  if (cfg.apiKey !== null && cfg.apiKey.trim() === '') cfg.apiKey = null;
  if (!isLoopbackHost(cfg.host) && cfg.apiKey === null) {
    throw new ConfigError(`refusing to listen on ${cfg.host} without an API key: anyone who can reach it could use the model. Set --api-key KEY (or STRATA_API_KEY), or keep --host 127.0.0.1`);
  }
  return cfg;
}

/** The served models: --model (every value; else STRATA_MODEL, else the config's "model"), --models-dir, the config's "models". */
function resolveModels(cfg: ServerConfig, src: ConfigSources, fileValues: Record<string, unknown>, configPath: string | null, note: (line: string) => void): void {
  let given = src.repeated?.get('model') ?? (src.flags.has('model') ? [src.flags.get('model')!] : []);
  if (given.length === 0 && src.env[envOf('model')]) given = [src.env[envOf('model')]!];
  if (given.length === 0 && fileValues.model !== undefined) given = [convert(fileValues.model, { t: 'string' }, `config file ${configPath}: model`) as string];
  for (const m of given) if (m.trim() === '' || m === 'true') throw new ConfigError('--model is empty');
  cfg.models = resolveModelSpecs({
    models: given, modelsDir: cfg.modelsDir, section: fileValues.models, sectionWhere: `config file ${configPath}`, note,
    listDir: src.listDir ?? ((dir) => readdirSync(dir)),
  });
  cfg.model = cfg.models[0]?.path ?? null;
  // --mmproj is the first model's projector; other models name theirs in their config entry.
  if (cfg.mmproj !== null) {
    if (cfg.mmproj.trim() === '') throw new ConfigError('--mmproj is empty');
    const first = cfg.models[0];
    if (!first) throw new ConfigError('--mmproj needs a --model it was made for (the demo model reads text only)');
    if (first.settings.mmproj === undefined) first.settings.mmproj = cfg.mmproj;
    cfg.mmproj = null;
  }
  // --draft-model drafts for the first model too (a draft shares its model's vocabulary); other
  // models name theirs in their config entry. Without --model it is the demo model's.
  const first = cfg.models[0];
  if (cfg.draftModel !== null && first) {
    if (first.settings.draftModel === undefined) first.settings.draftModel = cfg.draftModel;
    cfg.draftModel = null;
  }
  const names = cfg.models.map((m) => m.name);
  for (const p of cfg.preload ?? []) {
    if (p !== 'all' && p !== 'none' && !names.includes(p)) throw new ConfigError(`--preload: no model is named '${p}' (served: ${names.join(', ') || 'the demo model'})`);
  }
  for (const p of cfg.pin ?? []) {
    const spec = cfg.models.find((m) => m.name === p);
    if (!spec) throw new ConfigError(`--pin: no model is named '${p}' (served: ${names.join(', ') || 'the demo model'})`);
    spec.pinned = true;
  }
}

/**
 * --spec against the other speculative options (the server's, or one model's with `where` naming
 * it): each mode takes its drafts from one source.
 */
function checkSpec(cfg: Pick<ServerConfig, 'spec' | 'draftModel' | 'specNgram' | 'specNgramKind' | 'draftMin' | 'draftMax'>, where: string): void {
  const { spec, draftModel, specNgram, specNgramKind } = cfg;
  if (spec === 'draft' && draftModel === null) throw new ConfigError(`${where}--spec draft needs --draft-model`);
  if (draftModel !== null && (spec === 'none' || spec === 'mtp' || spec === 'ngram')) {
    throw new ConfigError(`${where}--spec ${spec} takes no --draft-model (--spec draft or auto drafts with it)`);
  }
  if (specNgram && (spec === 'none' || spec === 'mtp' || spec === 'draft')) {
    throw new ConfigError(`${where}--spec ${spec} and --spec-ngram contradict each other (--spec ngram or auto drafts from n-grams)`);
  }
  if (specNgramKind !== 'lookup' && (spec === 'none' || spec === 'mtp' || spec === 'draft')) {
    throw new ConfigError(`${where}--spec ${spec} and --spec-ngram-kind ${specNgramKind} contradict each other (--spec ngram or auto drafts from n-grams)`);
  }
  // Only when both are given: against the engine's default draft max, the engine's own check says so at load.
  if (cfg.draftMin !== null && cfg.draftMax !== null && cfg.draftMin > cfg.draftMax) throw new ConfigError(`${where}--draft-min ${cfg.draftMin} is above --draft-max ${cfg.draftMax}`);
}
