// `strata serve` settings: one table of options read from flags, STRATA_* environment
// variables and a JSON config file, in that order of precedence (flags > env > config >
// defaults). A bad value is refused with a message naming where it came from.
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { isLoopbackHost } from '../http/security.js';
import { ConfigError, convert, placeDevices, type Kind } from './config-values.js';
import { resolveModelSpecs, type ModelSpec } from './model-specs.js';

export { ConfigError } from './config-values.js';

export type LogFormat = 'text' | 'json';

export interface ServerConfig {
  /** The default (first) model's file; null: the demo model. */
  model: string | null;
  /** Every model served, the default first (empty: the demo model alone). */
  models: ModelSpec[];
  modelsDir: string | null;
  /** Models loaded at start: names, 'all' or 'none' (null: the default model). */
  preload: string[] | null;
  /** Models loaded at most at once (null: no count limit). */
  modelsMax: number | null;
  /** Host RAM budget for loaded models, MiB (null: 80% of the RAM free at start). */
  modelsRamMib: number | null;
  /** Idle models unload after this many seconds (0 = never). */
  modelIdleS: number;
  /** Models never unloaded by LRU or idle time (their config entries' "pin": true too). */
  pin: string[] | null;
  /** Fit each model to free device memory (llama.cpp's fitter): auto = when it goes to a GPU or RPC device. */
  fit: 'auto' | 'on' | 'off';
  /** Memory the fit keeps free per device, MiB. */
  fitMarginMib: number;
  /** The least context per slot the fit may choose when --ctx is not given. */
  fitCtx: number;
  host: string;
  port: number;
  slots: number;
  ctx: number | null;
  batch: number | null;
  /** Prompt tokens per step beside decoding sequences (null: engine auto, 64 on CPU, the batch with offload). */
  decodePromptBudget: number | null;
  threads: number | null;
  kvType: 'f16' | 'q8_0' | 'q4_0' | null;
  flashAttn: 'auto' | 'on' | 'off' | null;
  cacheMib: number | null;
  replicas: number;
  /** Device names per replica (null: the engine's default placement). */
  deviceGroups: string[][] | null;
  splitMode: 'none' | 'layer' | 'row' | null;
  tensorSplit: number[] | null;
  rpc: string[] | null;
  gpuLayers: number | null;
  /** ggml CPU variant ('auto': the best one that passes its probe). */
  cpuVariant: string;
  /** Weight repacking into ggml's extra CPU buffer types (AMX, wider SIMD): on, off, or auto (probed). */
  cpuRepack: 'auto' | 'on' | 'off';
  /** ggml's op offload with partial GPU offload (null: the engine default, on). */
  opOffload: 'on' | 'off' | null;
  apiKey: string | null;
  sessionsDir: string;
  logFormat: LogFormat;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  bodyLimitMib: number;
  writeStallMs: number;
  /** A streaming client whose oldest unread output is older than this is disconnected (0 = off). */
  slowReaderMs: number;
  keepAliveMs: number;
  maxQueued: number;
  /** Infill with a supersede_key arriving this soon after the previous one of its key waits this long (0 = off). */
  infillDelayMs: number;
  /** FIM prompt order: auto (SPM where the model family was trained with it), psm, spm. */
  fimOrder: 'auto' | 'psm' | 'spm';
  engineReadyTimeoutMs: number;
  engineSilenceTimeoutMs: number;
  configFile: string | null;
  /** Exit when this process ends (the extension passes its own pid, so a killed VS Code leaves no server). */
  parentPid: number | null;
  /** Speculative decoding: prompt-lookup (n-gram) drafts. */
  specNgram: boolean;
  /** Speculative decoding: a draft model with the model's vocabulary. */
  draftModel: string | null;
  /** Draft tokens per sequence per step; null = the engine's default (8). */
  draftMax: number | null;
  draftMin: number | null;
  /** The draft model's least probability for a draft token; null = the engine's default (0.5). */
  draftPMin: number | null;
  /** Embeddings: auto (the GGUF says), on, off. */
  embeddings: 'auto' | 'on' | 'off';
}

interface Option {
  /** Flag name without dashes; env is STRATA_<NAME_UPPER>; config keys: flag name or camelCase. */
  flag: string;
  key: keyof ServerConfig | 'devices';
  kind: Kind;
  help: string;
}

const int = (min: number, max: number): Kind => ({ t: 'int', min, max });

export const serveOptions: readonly Option[] = [
  { flag: 'model', key: 'model', kind: { t: 'string' }, help: 'GGUF model file, or NAME=FILE to serve it as NAME; repeat to serve several (the first is the default; default: a random-weight demo model)' },
  { flag: 'models-dir', key: 'modelsDir', kind: { t: 'string' }, help: 'serve every *.gguf in this folder too (each under its base name)' },
  { flag: 'preload', key: 'preload', kind: { t: 'list' }, help: 'models loaded at start: names, all or none (default: the first model); the others load on first use' },
  { flag: 'models-max', key: 'modelsMax', kind: int(1, 1024), help: 'models loaded at most at once; the least recently used idle one unloads first (default: no limit)' },
  { flag: 'models-ram-mib', key: 'modelsRamMib', kind: int(1, 1 << 30), help: 'host RAM for loaded models, MiB (file size + KV for ctx x slots each; default: 80% of the RAM free at start)' },
  { flag: 'model-idle-s', key: 'modelIdleS', kind: int(0, 31_536_000), help: 'unload a model idle this many seconds (default 0 = never)' },
  { flag: 'pin', key: 'pin', kind: { t: 'list' }, help: 'models never unloaded by LRU or idle time, e.g. the completion model (names; a config entry\'s "pin": true too)' },
  { flag: 'fit', key: 'fit', kind: { t: 'enum', values: ['auto', 'on', 'off'] }, help: 'fit each model to free device memory with llama.cpp\'s fitter: GPU layers unless --gpu-layers, the context per slot unless --ctx; a model that cannot fit says what would (auto: when it goes to a GPU or RPC device)' },
  { flag: 'fit-margin-mib', key: 'fitMarginMib', kind: int(0, 1 << 20), help: 'memory the fit leaves free on every device, MiB (default 1024)' },
  { flag: 'fit-ctx', key: 'fitCtx', kind: int(256, 1 << 24), help: 'the least context per slot the fit chooses when --ctx is not given (default 4096)' },
  { flag: 'host', key: 'host', kind: { t: 'string' }, help: 'address to listen on (default 127.0.0.1; others need --api-key)' },
  { flag: 'port', key: 'port', kind: int(0, 65535), help: 'port (default 8080; 0 = any free port)' },
  { flag: 'slots', key: 'slots', kind: int(1, 256), help: 'concurrent requests per engine (default 4)' },
  { flag: 'ctx', key: 'ctx', kind: int(16, 1 << 24), help: 'context tokens per slot (default: engine default)' },
  { flag: 'batch', key: 'batch', kind: int(1, 1 << 16), help: 'token budget per engine step (default 512)' },
  { flag: 'decode-prompt-budget', key: 'decodePromptBudget', kind: int(1, 1 << 16), help: 'prompt tokens per step while others decode (default: 64 on CPU, the whole batch with GPU offload)' },
  { flag: 'threads', key: 'threads', kind: int(1, 1024), help: 'CPU threads per engine' },
  { flag: 'kv-type', key: 'kvType', kind: { t: 'enum', values: ['f16', 'q8_0', 'q4_0'] }, help: 'KV cache type' },
  { flag: 'flash-attn', key: 'flashAttn', kind: { t: 'enum', values: ['auto', 'on', 'off'] }, help: 'flash attention' },
  { flag: 'cache-mib', key: 'cacheMib', kind: int(0, 1 << 24), help: 'host RAM for parked conversations, MiB (0 = off)' },
  { flag: 'replicas', key: 'replicas', kind: int(1, 64), help: 'engine processes (default: one per device group)' },
  { flag: 'devices', key: 'devices', kind: { t: 'string' }, help: 'devices, comma-separated; "/" separates replicas (CUDA0,CUDA1/CUDA2,CUDA3)' },
  { flag: 'split-mode', key: 'splitMode', kind: { t: 'enum', values: ['none', 'layer', 'row'] }, help: 'multi-device split' },
  { flag: 'tensor-split', key: 'tensorSplit', kind: { t: 'numlist' }, help: 'proportions per device (3,1)' },
  { flag: 'rpc', key: 'rpc', kind: { t: 'list' }, help: 'ggml RPC servers host:port,... (trusted networks only)' },
  { flag: 'gpu-layers', key: 'gpuLayers', kind: int(-1, 100000), help: 'layers on GPU devices (-1 = all)' },
  { flag: 'cpu-variant', key: 'cpuVariant', kind: { t: 'string' }, help: 'ggml CPU variant: auto (best that passes its probe) or a name from `strata devices` (haswell, zen4, …)' },
  { flag: 'cpu-repack', key: 'cpuRepack', kind: { t: 'enum', values: ['auto', 'on', 'off'] }, help: 'repack weights for AMX / wider SIMD kernels (auto: on unless its probe fails)' },
  { flag: 'op-offload', key: 'opOffload', kind: { t: 'enum', values: ['on', 'off'] }, help: 'with layers left on the CPU, run their matmuls on the GPU for 32+ token steps (default on; off: batched == solo exactly)' },
  { flag: 'api-key', key: 'apiKey', kind: { t: 'string' }, help: 'API key clients must send (also STRATA_API_KEY)' },
  { flag: 'sessions-dir', key: 'sessionsDir', kind: { t: 'string' }, help: 'folder for saved sessions' },
  { flag: 'log-format', key: 'logFormat', kind: { t: 'enum', values: ['text', 'json'] }, help: 'log line format' },
  { flag: 'log-level', key: 'logLevel', kind: { t: 'enum', values: ['debug', 'info', 'warn', 'error'] }, help: 'least level logged' },
  { flag: 'body-limit-mib', key: 'bodyLimitMib', kind: int(1, 4096), help: 'largest request body, MiB (default 32)' },
  { flag: 'write-stall-ms', key: 'writeStallMs', kind: int(0, 3_600_000), help: 'a client that reads nothing this long is disconnected (default 30000)' },
  { flag: 'slow-reader-ms', key: 'slowReaderMs', kind: int(0, 3_600_000), help: 'a streaming client this far behind (age of its oldest unread output) is disconnected and its slot freed (default 10000; 0 = off)' },
  { flag: 'keep-alive-ms', key: 'keepAliveMs', kind: int(0, 3_600_000), help: 'SSE keep-alive period while waiting (default 10000)' },
  { flag: 'max-queued', key: 'maxQueued', kind: int(1, 1_000_000), help: 'requests allowed to wait (default 512)' },
  { flag: 'infill-delay-ms', key: 'infillDelayMs', kind: int(0, 10_000), help: 'an infill arriving less than this after the previous one of its supersede_key (a keystroke burst) waits this long before admission, so the next keystroke can replace it for free (default 200; 0 = off)' },
  { flag: 'fim-order', key: 'fimOrder', kind: { t: 'enum', values: ['auto', 'psm', 'spm'] }, help: 'infill prompt order: spm puts the suffix first so keystrokes reuse its KV (auto: spm for StarCoder, CodeLlama and CodeGemma models, trained with it; psm otherwise)' },
  { flag: 'engine-ready-timeout-ms', key: 'engineReadyTimeoutMs', kind: int(1000, 86_400_000), help: 'model load limit (default 900000)' },
  { flag: 'parent-pid', key: 'parentPid', kind: int(1, 2 ** 31 - 1), help: 'exit when the process with this pid ends' },
  { flag: 'engine-silence-timeout-ms', key: 'engineSilenceTimeoutMs', kind: int(1000, 86_400_000), help: 'an engine silent this long while busy is restarted (default 300000)' },
  { flag: 'spec-ngram', key: 'specNgram', kind: { t: 'bool' }, help: 'speculative decoding from the sequence\'s own n-grams (prompt lookup): true/false' },
  { flag: 'draft-model', key: 'draftModel', kind: { t: 'string' }, help: 'speculative decoding with this GGUF as draft model (same vocabulary)' },
  { flag: 'draft-max', key: 'draftMax', kind: int(1, 256), help: 'draft tokens per sequence per step (default 8)' },
  { flag: 'draft-min', key: 'draftMin', kind: int(1, 256), help: 'no shorter draft than this (default 1)' },
  { flag: 'draft-p-min', key: 'draftPMin', kind: { t: 'number', min: 0, max: 1 }, help: 'draft model: stop a draft at a token below this probability (default 0.5)' },
  { flag: 'embeddings', key: 'embeddings', kind: { t: 'enum', values: ['auto', 'on', 'off'] }, help: 'serve embeddings: auto (when the GGUF declares pooling or is an encoder), on, off' },
];

export function defaultSessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, 'strata', 'sessions');
  const base = env.XDG_DATA_HOME && env.XDG_DATA_HOME.length > 0 ? env.XDG_DATA_HOME : join(homedir(), '.local', 'share');
  return join(base, 'strata', 'sessions');
}

export function defaultConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  return {
    model: null, models: [], modelsDir: null, preload: null, modelsMax: null, modelsRamMib: null, modelIdleS: 0,
    pin: null, fit: 'auto', fitMarginMib: 1024, fitCtx: 4096, host: '127.0.0.1', port: 8080, slots: 4, ctx: null, batch: null, decodePromptBudget: null, threads: null, kvType: null,
    flashAttn: null, cacheMib: null, replicas: 1, deviceGroups: null, splitMode: null, tensorSplit: null, rpc: null,
    gpuLayers: null, cpuVariant: 'auto', cpuRepack: 'auto', opOffload: null, apiKey: null, sessionsDir: defaultSessionsDir(env), logFormat: 'text', logLevel: 'info',
    bodyLimitMib: 32, writeStallMs: 30_000, slowReaderMs: 10_000, keepAliveMs: 10_000, maxQueued: 512, infillDelayMs: 200, fimOrder: 'auto',
    engineReadyTimeoutMs: 900_000, engineSilenceTimeoutMs: 300_000, configFile: null, parentPid: null,
    specNgram: false, draftModel: null, draftMax: null, draftMin: null, draftPMin: null, embeddings: 'auto',
  };
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
}

const envName = (flag: string) => `STRATA_${flag.toUpperCase().replace(/-/g, '_')}`;
const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export function resolveConfig(src: ConfigSources): ServerConfig {
  const known = new Set([...serveOptions.map((o) => o.flag), 'config', 'help']);
  for (const name of src.flags.keys()) {
    if (!known.has(name)) throw new ConfigError(`unknown option --${name} (see strata serve --help)`);
  }
  const cfg = defaultConfig(src.env);
  const configPath = src.flags.get('config') ?? src.env.STRATA_CONFIG ?? null;
  let fileValues: Record<string, unknown> = {};
  if (configPath) {
    let text: string;
    try { text = src.readFile(configPath); } catch (e) { throw new ConfigError(`cannot read config file ${configPath}: ${(e as Error).message}`); }
    let parsed: unknown;
    try { parsed = JSON.parse(text); } catch (e) { throw new ConfigError(`config file ${configPath} is not valid JSON: ${(e as Error).message}`); }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`config file ${configPath} must hold a JSON object`);
    fileValues = parsed as Record<string, unknown>;
    const keys = new Set([...serveOptions.flatMap((o) => [o.flag, camel(o.flag)]), 'models']);
    for (const k of Object.keys(fileValues)) {
      if (!keys.has(k)) throw new ConfigError(`config file ${configPath}: unknown setting '${k}'`);
    }
    cfg.configFile = configPath;
  }

  let devices: string | null = null;
  let replicasGiven = false;
  for (const opt of serveOptions) {
    let raw: unknown;
    let where: string;
    if (src.flags.has(opt.flag)) { raw = src.flags.get(opt.flag); where = `--${opt.flag}`; }
    else if (src.env[envName(opt.flag)] !== undefined && src.env[envName(opt.flag)] !== '') { raw = src.env[envName(opt.flag)]; where = envName(opt.flag); }
    else if (opt.flag in fileValues || camel(opt.flag) in fileValues) {
      raw = fileValues[opt.flag] ?? fileValues[camel(opt.flag)];
      where = `config file ${configPath}: ${opt.flag}`;
    } else continue;
    if (opt.key === 'model') continue; // with the other model sources, below
    const value = convert(raw, opt.kind, where);
    if (opt.key === 'devices') { devices = value as string; continue; }
    if (opt.key === 'replicas') replicasGiven = true;
    (cfg as unknown as Record<string, unknown>)[opt.key] = value;
  }

  if (devices !== null) {
    const placed = placeDevices(devices, cfg.replicas, replicasGiven, '--devices', '--replicas');
    cfg.replicas = placed.replicas;
    cfg.deviceGroups = placed.groups;
  }
  resolveModels(cfg, src, fileValues, configPath);
  if (cfg.draftModel !== null && cfg.draftModel.trim() === '') throw new ConfigError('--draft-model is empty');
  if (cfg.draftMin !== null && cfg.draftMin > (cfg.draftMax ?? 8)) throw new ConfigError(`--draft-min ${cfg.draftMin} is above --draft-max ${cfg.draftMax ?? 8}`);
  if (!/^[a-z0-9_.]+$/.test(cfg.cpuVariant)) throw new ConfigError(`--cpu-variant '${cfg.cpuVariant}' is not a variant name (auto, haswell, zen4, …)`);
  if (cfg.apiKey !== null && cfg.apiKey.trim() === '') cfg.apiKey = null;
  if (!isLoopbackHost(cfg.host) && cfg.apiKey === null) {
    throw new ConfigError(`refusing to listen on ${cfg.host} without an API key: anyone who can reach it could use the model. Set --api-key KEY (or STRATA_API_KEY), or keep --host 127.0.0.1`);
  }
  return cfg;
}

/** The served models: --model (every value; else STRATA_MODEL, else the config's "model"), --models-dir, the config's "models". */
function resolveModels(cfg: ServerConfig, src: ConfigSources, fileValues: Record<string, unknown>, configPath: string | null): void {
  let given = src.repeated?.get('model') ?? (src.flags.has('model') ? [src.flags.get('model')!] : []);
  if (given.length === 0 && src.env.STRATA_MODEL) given = [src.env.STRATA_MODEL];
  if (given.length === 0 && fileValues.model !== undefined) given = [convert(fileValues.model, { t: 'string' }, `config file ${configPath}: model`) as string];
  for (const m of given) if (m.trim() === '' || m === 'true') throw new ConfigError('--model is empty');
  cfg.models = resolveModelSpecs({
    models: given, modelsDir: cfg.modelsDir, section: fileValues.models, sectionWhere: `config file ${configPath}`,
    listDir: src.listDir ?? ((dir) => readdirSync(dir)),
    kindOf: (flag) => serveOptions.find((o) => o.flag === flag)!.kind,
  });
  cfg.model = cfg.models[0]?.path ?? null;
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

export function serveHelp(): string {
  const lines = ['usage: strata serve [options]', '', 'options (also STRATA_<NAME> env vars and a JSON --config FILE; flags > env > config):'];
  for (const o of serveOptions) {
    // Enum options show what they accept, so nobody has to guess (or read the source).
    const values = o.kind.t === 'enum' ? ` (one of: ${o.kind.values.join(', ')})` : '';
    lines.push(`  --${o.flag.padEnd(26)} ${o.help}${values}`);
  }
  lines.push(`  --${'config'.padEnd(26)} JSON file with any of the settings above (also STRATA_CONFIG)`);
  return lines.join('\n');
}
