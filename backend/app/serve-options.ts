// The one table of `strata serve` options. Each entry is one setting: its name (the key in
// ServerConfig; --kebab-name on the command line, STRATA_KEBAB_NAME in the environment, either
// spelling in the --config file), its kind (type and range), its default and its help. Parsing
// (config.ts), --help, the config file's keys, the per-model keys of the config's "models"
// section (model-specs.ts) and the option table of docs/server.md (npm run docs:tables, checked by
// test/unit/docs-tables.test.ts) are all read from it.
import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';
import { KV_TYPES } from '../../contract/kv-types.js';
import { BODY_READ_TIMEOUT_MS } from '../validation/limits.js';
import type { Kind } from './config-values.js';

/** The value a kind converts to (config-values.ts convert). */
export type KindValue<K extends Kind> =
  K extends { t: 'int' | 'number' } ? number
  : K extends { t: 'enum'; values: readonly (infer V)[] } ? V
  : K extends { t: 'string' } ? string
  : K extends { t: 'list' } ? string[]
  : K extends { t: 'numlist' } ? number[]
  : K extends { t: 'bool' } ? boolean
  : never;

export interface ServeOption<K extends Kind = Kind, D = unknown> {
  kind: K;
  /** null: unset, the engine (or the named code) decides; a function: computed from the environment. */
  default: D | ((env: NodeJS.ProcessEnv) => D);
  help: string;
  /** What the default means where its value does not say it (null defaults, computed ones). */
  defaultText?: string;
  /** Also a key of one model's entry in the config's "models" section (its value for that model alone). */
  perModel?: true;
}

/** One entry; its type keeps `perModel` so that PerModelKey can pick the per-model keys. */
function option<K extends Kind, D extends KindValue<K> | null, M extends { defaultText?: string; perModel?: true } = object>(
  kind: K, dflt: D | ((env: NodeJS.ProcessEnv) => D), help: string, more?: M,
): ServeOption<K, D> & M {
  return { kind, default: dflt, help, ...more } as ServeOption<K, D> & M;
}

const int = (min: number, max: number) => ({ t: 'int', min, max }) as const;
const num = (min: number, max: number) => ({ t: 'number', min, max }) as const;
const oneOf = <const V extends readonly string[]>(...values: V) => ({ t: 'enum', values }) as const;
const str = { t: 'string' } as const;
const list = { t: 'list' } as const;
const numlist = { t: 'numlist' } as const;
const bool = { t: 'bool' } as const;
const ENGINE = { defaultText: "the engine's" };

/**
 * A folder of the server's data: $XDG_DATA_HOME/strata/<name> (~/.local/share/strata/<name>);
 * on Windows %LOCALAPPDATA%\strata\<name> (the profile's AppData\Local without it), a folder
 * only its user (with administrators and the system) may open.
 */
function dataDir(name: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA || win32.join(env.USERPROFILE || homedir(), 'AppData', 'Local');
    return win32.join(local, 'strata', name);
  }
  const base = env.XDG_DATA_HOME && env.XDG_DATA_HOME.length > 0 ? env.XDG_DATA_HOME : posix.join(homedir(), '.local', 'share');
  return posix.join(base, 'strata', name);
}

export function defaultSessionsDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string { return dataDir('sessions', env, platform); }
export function defaultResponsesDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string { return dataDir('responses', env, platform); }
export function defaultPrefixCacheDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string { return dataDir('prefix-cache', env, platform); }

/** Every `strata serve` option, in --help order. */
export const SERVE_OPTIONS = {
  /** The default (first) model's file; null: the demo model. Every value of a repeated --model is a model (config.ts). */
  model: option(str, null, 'GGUF model file, or NAME=FILE to serve it as NAME; repeat to serve several (the first is the default)', { defaultText: 'a random-weight demo model' }),
  modelsDir: option(str, null, 'serve every *.gguf in this folder too (each under its base name)'),
  /** Models loaded at start: names, 'all' or 'none' (null: the default model). */
  preload: option(list, null, 'models loaded at start: names, all or none; the others load on first use', { defaultText: 'the first model' }),
  /** Models loaded at most at once (null: no count limit). */
  modelsMax: option(int(1, 1024), null, 'models loaded at most at once; the least recently used idle one unloads first', { defaultText: 'no limit' }),
  /** Host RAM budget for loaded models, MiB (null: 80% of the RAM free at start). */
  modelsRamMib: option(int(1, 1 << 30), null, 'host RAM for loaded models, MiB (file size + KV for ctx x slots each, or the least shared context without --ctx)', { defaultText: '80% of the RAM free at start' }),
  /** Idle models unload after this many seconds (0 = never). */
  modelIdleS: option(int(0, 31_536_000), 0, 'unload a model idle this many seconds (0 = never)'),
  /** Models never unloaded by LRU or idle time (a config entry's "pin": true too). */
  pin: option(list, null, 'models never unloaded by LRU (count, RAM, a device\'s memory) or idle time, e.g. the completion model; a config entry\'s "pin": true too', { defaultText: 'none' }),
  /** Fit each model to free device memory with llama.cpp's fitter: auto = when it goes to a GPU or RPC device. */
  fit: option(oneOf('auto', 'on', 'off'), 'auto', 'fit each model to free device memory with llama.cpp\'s fitter: GPU layers unless --gpu-layers, the shared context unless --ctx; a plan that cannot fit is refused naming what would (auto: when the model goes to a GPU or RPC device, and on the CPU to size the shared context, where a plan that cannot fit loads with the least; on: always, refusing on the CPU too)', { perModel: true }),
  fitMarginMib: option(int(0, 1 << 20), 1024, 'memory the fit leaves free on every device, MiB (llama.cpp\'s --fit-target)'),
  fitCtx: option(int(256, 1 << 24), 4096, 'the least context per slot the fit chooses when --ctx is not given: the shared context holds at least this x --slots, at most the training context (llama.cpp\'s --fit-ctx)'),
  host: option(str, '127.0.0.1', 'address to listen on (others than loopback need --api-key)'),
  port: option(int(0, 65535), 8080, 'port (0 = any free port)'),
  slots: option(int(1, 256), 4, 'concurrent requests per engine', { perModel: true }),
  /** Context per slot; null: one KV pool the slots share, the training context fitted to memory (text models). */
  ctx: option(int(16, 1 << 24), null, 'context tokens per slot, each slot its own KV; without it a text model\'s slots share one context, all of which one request may use', { defaultText: 'the training context where memory allows, shared by the slots (embedding models: 4096 per slot)', perModel: true }),
  batch: option(int(1, 1 << 16), null, 'token budget per engine step', { ...ENGINE, perModel: true }),
  /** Prompt tokens per step beside decoding sequences (null: the engine's, 64 on CPU, the batch with offload). */
  decodePromptBudget: option(int(1, 1 << 16), null, 'prompt tokens per step when a short request joins or every slot is taken', { defaultText: "the engine's: 64 on CPU, the whole batch with GPU offload" }),
  /** How long an idle engine gathers a burst of requests before its first step (null: the engine's). */
  admitWindowMs: option(int(0, 1000), null, 'ms an idle engine waits for more requests before its first step, so requests sent together are read together', { defaultText: "the engine's: 8 on CPU, 0 with GPU offload" }),
  threads: option(int(1, 1024), null, 'CPU threads per engine', { ...ENGINE, perModel: true }),
  kvType: option(oneOf(...KV_TYPES), null, 'KV cache type', { ...ENGINE, perModel: true }),
  flashAttn: option(oneOf('auto', 'on', 'off'), null, 'flash attention', { ...ENGINE, perModel: true }),
  /** The park's budget (EngineOptions.parkBudgetMiB); once spelt --cache-mib. */
  parkMib: option(int(0, 1 << 24), null, 'host RAM for parked conversations, MiB (0 = off)', { ...ENGINE, perModel: true }),
  replicas: option(int(1, 64), 1, 'engine processes (with --devices groups: one per group)', { perModel: true }),
  /** Device names, comma-separated, "/" between replicas; resolved into replicas and ServerConfig.deviceGroups. */
  devices: option(str, null, 'devices, comma-separated; "/" separates replicas (CUDA0,CUDA1/CUDA2,CUDA3)', { defaultText: "the engine's placement", perModel: true }),
  splitMode: option(oneOf('none', 'layer', 'row'), null, 'multi-device split', ENGINE),
  tensorSplit: option(numlist, null, 'proportions per device (3,1)', ENGINE),
  rpc: option(list, null, 'ggml RPC servers host:port,... (trusted networks only)', { defaultText: 'none' }),
  gpuLayers: option(int(-1, 100000), null, 'layers on GPU devices (-1 = all)', { ...ENGINE, perModel: true }),
  /** ggml CPU variant ('auto': the best one that passes its probe). */
  cpuVariant: option(str, 'auto', 'ggml CPU variant: auto (best that passes its probe) or a name from `strata devices` (haswell, zen4, …)'),
  /** Weight repacking into ggml's extra CPU buffer types (AMX, wider SIMD): on, off, or auto (probed). */
  cpuRepack: option(oneOf('auto', 'on', 'off'), 'auto', 'repack weights for AMX / wider SIMD kernels (auto: on unless its probe fails)'),
  /** ggml's op offload with partial GPU offload (null: the engine's, on). */
  opOffload: option(oneOf('on', 'off'), null, 'with layers left on the CPU, run their matmuls on the GPU for 32+ token steps (off: batched == solo exactly)', { defaultText: "the engine's (on)" }),
  /** Batch-invariant CPU math (EngineOptions.deterministic; docs/benchmarks.md has its cost). */
  deterministic: option(bool, false, 'batch-invariant CPU math: greedy output the same whatever shares the step, how the prompt is chunked, how many threads (its cost: docs/benchmarks.md)', { perModel: true }),
  /** Required on every route but /health when set (Bearer or x-api-key). */
  apiKey: option(str, null, 'API key clients must send', { defaultText: 'none' }),
  sessionsDir: option(str, defaultSessionsDir, 'folder for saved sessions', { defaultText: '$XDG_DATA_HOME/strata/sessions (~/.local/share/…)' }),
  /** Stored Responses API responses (store: true), which previous_response_id continues. */
  responsesDir: option(str, defaultResponsesDir, 'folder for stored /v1/responses responses (previous_response_id continues them)', { defaultText: '$XDG_DATA_HOME/strata/responses (~/.local/share/…)' }),
  responsesMax: option(int(1, 10_000_000), 10_000, 'stored responses kept at most; the least recently used goes first'),
  responsesMib: option(int(1, 1 << 20), 1024, 'disk for stored responses at most, MiB; the least recently used goes first'),
  responsesKvMib: option(int(0, 1 << 24), 4096, 'disk for the KV of stored responses at most, MiB (a chain keeps one file, its newest response\'s; the least recently used goes first); 0: none written, so a chain continued after an engine restart reads its prompt again'),
  responsesTtlH: option(int(1, 87_600), 720, 'a stored response unused this many hours expires'),
  /** The KV of long prompts on disk (prefix-cache/), so a new session reuses an agent's system prompt and tools after a restart. */
  prefixCacheDir: option(str, defaultPrefixCacheDir, 'folder for the prefix cache: the KV of long prompts (a coding agent\'s system prompt and tools), which a new session with the same start loads instead of reading it again, after a restart too', { defaultText: '$XDG_DATA_HOME/strata/prefix-cache (~/.local/share/…)' }),
  prefixCacheMib: option(int(0, 1 << 24), 2048, 'disk for the prefix cache at most, MiB; the least recently used file goes first; 0: off (nothing saved or loaded)'),
  logFormat: option(oneOf('text', 'json'), 'text', 'log line format'),
  logLevel: option(oneOf('debug', 'info', 'warn', 'error'), 'info', 'least level logged'),
  bodyLimitMib: option(int(1, 4096), 32, 'largest request body, MiB (bodies being read at once hold at most 4 times this)'),
  /** A request whose body has not arrived this long after the server started reading it is answered 408. */
  bodyTimeoutMs: option(int(0, 3_600_000), BODY_READ_TIMEOUT_MS, 'a request body must arrive within this long, ms (0 = no limit)'),
  /** Headers must arrive this soon after a request starts; the whole request within this plus --body-timeout-ms. */
  headersTimeoutMs: option(int(0, 3_600_000), 30_000, 'request headers must arrive within this long, ms, and the whole request (headers and body) within this plus --body-timeout-ms, else the connection is closed; answering takes as long as it takes (0 = no limit)'),
  /** Client connections open at once; Node closes one past it as soon as it is accepted. */
  maxConnections: option(int(1, 1_000_000), 1024, 'client connections open at once; one more is closed as soon as it connects'),
  writeStallMs: option(int(0, 3_600_000), 30_000, 'a client that reads nothing this long is disconnected'),
  /** A streaming client whose oldest unread output is older than this is disconnected (0 = off). */
  slowReaderMs: option(int(0, 3_600_000), 10_000, 'a streaming client this far behind (age of its oldest unread output) is disconnected and its slot freed (0 = off)'),
  keepAliveMs: option(int(0, 3_600_000), 10_000, 'SSE keep-alive period while waiting'),
  maxQueued: option(int(1, 1_000_000), 512, 'requests allowed to wait'),
  /** Infill with a supersede_key arriving this soon after the previous one of its key waits this long (0 = off). */
  infillDelayMs: option(int(0, 10_000), 200, 'an infill arriving less than this after the previous one of its supersede_key (a keystroke burst) waits this long before admission, so the next keystroke can replace it for free (0 = off)'),
  /** Background requests (embedding, rerank) wait this long at most while interactive ones are queued or running (scheduler/interactive-gate.ts). */
  backgroundWaitMs: option(int(0, 3_600_000), 2000, 'an embedding or rerank request waits while a chat, completion, infill or edit request is queued or running on any model, at most this long, ms (0 = never waits)'),
  /** FIM prompt order: auto (SPM where the model family was trained with it), psm, spm. */
  fimOrder: option(oneOf('auto', 'psm', 'spm'), 'auto', 'infill prompt order: spm puts the suffix first so keystrokes reuse its KV (auto: spm for StarCoder, CodeLlama and CodeGemma models, trained with it; psm otherwise)'),
  /** The one model-load limit: every engine client gets it, /health reports it while loading (the extension waits that long). */
  engineReadyTimeoutMs: option(int(1000, 86_400_000), 900_000, 'model load limit per engine start, ms'),
  /** Exit when this process ends (the extension passes its own pid, so a killed VS Code leaves no server). */
  parentPid: option(int(1, 2 ** 31 - 1), null, 'exit when the process with this pid ends', { defaultText: 'none' }),
  engineSilenceTimeoutMs: option(int(1000, 86_400_000), 300_000, 'an engine silent this long while busy is restarted, ms'),
  /** Speculative decoding: where drafts come from (auto: the model's MTP head when it has one, else --spec-ngram / --draft-model; infill's own n-grams too). */
  spec: option(oneOf('auto', 'none', 'mtp', 'ngram', 'draft'), 'auto', "speculative decoding: auto (the model's own MTP head when it has one, else as --spec-ngram and --draft-model say; infill requests also draft from their own n-grams), none, mtp (the model's MTP head; a model without one fails to load), ngram (prompt lookup), draft (--draft-model)", { perModel: true }),
  /** Speculative decoding: prompt-lookup (n-gram) drafts. */
  specNgram: option(bool, false, "speculative decoding from the sequence's own n-grams (prompt lookup): true/false", { perModel: true }),
  /** Which n-gram drafter: Strata's prompt lookup or one of llama.cpp's (llama-server's --spec-type ngram-*). */
  specNgramKind: option(oneOf('lookup', 'simple', 'map-k', 'map-k4v', 'mod', 'cache'), 'lookup', "n-gram drafter: lookup (the latest earlier occurrence of the last 2-4 tokens), or llama.cpp's own (its key sizes, m-grams of --draft-max tokens): simple, map-k, map-k4v, mod, cache (llama-server's --spec-type ngram-*); another than lookup turns n-gram drafts on", { perModel: true }),
  /** Speculative decoding: a draft model with the model's vocabulary. */
  draftModel: option(str, null, 'speculative decoding with this GGUF as draft model (same vocabulary), or an EAGLE-3 / DFlash drafter made for the model (recognised from the file); on the command line the first model\'s', { defaultText: 'none', perModel: true }),
  /** A projector GGUF (llama.cpp's mmproj) for images: the first model's, or per model in the config's "models" section. */
  mmproj: option(str, null, 'a projector GGUF (llama.cpp\'s mmproj) made for the model: it reads images (image_url, image blocks, input_image); on the command line the first model\'s', { defaultText: 'none (text only)', perModel: true }),
  draftMax: option(int(1, 256), null, 'draft tokens per sequence per step', { ...ENGINE, perModel: true }),
  draftMin: option(int(1, 256), null, 'no shorter draft than this', { ...ENGINE, perModel: true }),
  draftPMin: option(num(0, 1), null, 'draft model and MTP head: stop a draft at a token below this probability', { ...ENGINE, perModel: true }),
  /** Thinking of reasoning models by default: auto (the template's), on, off (enable_thinking; a block the template opens is closed at once). */
  reasoning: option(oneOf('auto', 'on', 'off'), 'auto', "reasoning models' thinking when a request does not say: auto (the chat template's default), on, off (the template's enable_thinking switch; a think block the template opens anyway is closed at once)", { perModel: true }),
  /** Tokens a reasoning model may think before the engine ends its thinking (-1: no limit). */
  reasoningBudget: option(int(-1, 1 << 24), -1, 'tokens a reasoning model may think before the server ends the thinking (the family\'s </think>) and the answer goes on; -1: no limit (a request\'s thinking.budget_tokens wins)', { perModel: true }),
  /** Tokens a request may generate when it sets no max_tokens (null: the room left in the context). */
  maxOutputTokens: option(int(1, 1 << 24), null, 'tokens an answer may have when the request sets no max_tokens (llama-server\'s -n); a request\'s own max_tokens wins; either stops where the context is full', { defaultText: 'the room left in the context', perModel: true }),
  /** The thinking budgets of reasoning_effort / reasoning.effort low, medium and high (minimal and none turn thinking off). */
  reasoningEffortBudgets: option(numlist, [1024, 4096, 16384], 'thinking budgets in tokens of the efforts low,medium,high (reasoning_effort, reasoning.effort; minimal and none turn thinking off)', { defaultText: '1024,4096,16384' }),
  /** Embeddings: auto (the GGUF says), on, off. */
  embeddings: option(oneOf('auto', 'on', 'off'), 'auto', 'serve embeddings: auto (when the GGUF declares pooling or is an encoder), on, off', { perModel: true }),
  /** For tests with random-weight models, which never choose a call themselves (http/chat-turn/run.ts). */
  firstToolCall: option(oneOf('auto', 'required'), 'auto', 'for tests with random-weight models: required turns tool_choice auto into required while a conversation offers tools and holds no tool result yet, so its first answer is a call; auto leaves tool_choice as sent'),
};

export type ServeOptionKey = keyof typeof SERVE_OPTIONS;

/** Each option's value: its kind's type, or null where its default is null (unset). */
export type ServeOptionValues = {
  -readonly [K in ServeOptionKey]: (typeof SERVE_OPTIONS)[K] extends ServeOption<infer Kd, infer D>
    ? KindValue<Kd> | (null extends D ? null : never) : never;
};

/** The options one model's entry in the config's "models" section may set. */
export type PerModelKey = {
  [K in ServeOptionKey]: (typeof SERVE_OPTIONS)[K] extends { perModel: true } ? K : never;
}[ServeOptionKey];

export const SERVE_OPTION_KEYS = Object.keys(SERVE_OPTIONS) as ServeOptionKey[];

/**
 * Old names of renamed options: still read as a flag, a STRATA_ variable or a config key (also a
 * model entry's), each time with a note naming the new one.
 */
export const RENAMED_OPTIONS: Readonly<Record<string, ServeOptionKey>> = { cacheMib: 'parkMib' };

/**
 * `values` (flags by --name, or config keys in either spelling) with each old name moved to its
 * new one; `note` hears `--old is now --new` once per old name found. A new name given too wins.
 */
export function withRenamedOptions<V>(values: ReadonlyMap<string, V>, note: (line: string) => void, spellings: 'flag' | 'both'): Map<string, V> {
  const out = new Map(values);
  for (const [old, now] of Object.entries(RENAMED_OPTIONS)) {
    for (const [from, to] of spellings === 'flag' ? [[flagOf(old), flagOf(now)]] : [[flagOf(old), flagOf(now)], [old, now]]) {
      if (!out.has(from!)) continue;
      note(`--${flagOf(old)} is now --${flagOf(now)}`);
      if (!out.has(to!) && !(spellings === 'both' && (out.has(flagOf(now)) || out.has(now)))) out.set(to!, out.get(from!)!);
      out.delete(from!);
    }
  }
  return out;
}
export const PER_MODEL_KEYS = SERVE_OPTION_KEYS.filter((k) => (SERVE_OPTIONS[k] as ServeOption).perModel) as PerModelKey[];

/** --flag-name of a key (modelsRamMib -> models-ram-mib). */
export const flagOf = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
/** STRATA_FLAG_NAME of a key. */
export const envOf = (key: string): string => `STRATA_${flagOf(key).toUpperCase().replace(/-/g, '_')}`;

/** An option's default value in this environment. */
export function defaultOf<K extends ServeOptionKey>(key: K, env: NodeJS.ProcessEnv = process.env): ServeOptionValues[K] {
  const d = (SERVE_OPTIONS[key] as ServeOption).default;
  return (typeof d === 'function' ? d(env) : d) as ServeOptionValues[K];
}

/** --config: read before the others (from the flag or STRATA_CONFIG, never from the file itself). */
export const CONFIG_OPTION = { flag: 'config', env: 'STRATA_CONFIG', help: 'JSON file with any of the settings above (keys: flag names or camelCase)' };

/** How the default reads in --help and docs/server.md. */
export function defaultText(key: ServeOptionKey): string {
  const o = SERVE_OPTIONS[key] as ServeOption;
  if (o.defaultText !== undefined) return o.defaultText;
  return typeof o.default === 'function' || o.default === null ? 'none' : String(o.default);
}

function kindText(kind: Kind): string {
  switch (kind.t) {
    case 'int': return `integer ${kind.min}..${kind.max}`;
    case 'number': return `number ${kind.min}..${kind.max}`;
    case 'enum': return kind.values.join(' | ');
    case 'string': return 'text';
    case 'list': return 'comma-separated list';
    case 'numlist': return 'comma-separated numbers';
    case 'bool': return 'true or false';
  }
}

/** `strata serve --help`. */
export function serveHelp(): string {
  const lines = ['usage: strata serve [options]', '', 'options (also STRATA_<NAME> env vars and a JSON --config FILE; flags > env > config > defaults):'];
  for (const key of SERVE_OPTION_KEYS) {
    const o = SERVE_OPTIONS[key] as ServeOption;
    // Enum options show what they accept, so nobody has to guess (or read the source).
    const values = o.kind.t === 'enum' ? ` (one of: ${o.kind.values.join(', ')})` : '';
    lines.push(`  --${flagOf(key).padEnd(26)} ${o.help}; default: ${defaultText(key)}${values}`);
  }
  lines.push(`  --${CONFIG_OPTION.flag.padEnd(26)} ${CONFIG_OPTION.help} (also ${CONFIG_OPTION.env})`);
  return lines.join('\n');
}

/** The option table of docs/server.md (scripts/docs-tables.ts places it, a test checks it). */
export function serveOptionsMarkdown(): string {
  const cell = (s: string): string => s.replace(/\|/g, '\\|');
  const rows = ['| flag | environment | config key | value | default | meaning |', '|---|---|---|---|---|---|'];
  for (const key of SERVE_OPTION_KEYS) {
    const o = SERVE_OPTIONS[key] as ServeOption;
    const keys = flagOf(key) === key ? `\`${key}\`` : `\`${flagOf(key)}\`, \`${key}\``;
    const meaning = o.perModel ? `${o.help} (also per model)` : o.help;
    rows.push(`| \`--${flagOf(key)}\` | \`${envOf(key)}\` | ${keys} | ${cell(kindText(o.kind))} | ${cell(defaultText(key))} | ${cell(meaning)} |`);
  }
  rows.push(`| \`--${CONFIG_OPTION.flag}\` | \`${CONFIG_OPTION.env}\` | | file path | none | ${CONFIG_OPTION.help} |`);
  return rows.join('\n');
}
