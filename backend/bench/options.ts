// Command-line options that tune the scenarios, shared by `strata bench` and bench:compare.
import { optInt, optList, UsageError, type ParsedArgs } from '../cli/args.js';
import { defaultSettings, type BenchSettings } from './types.js';

export const settingsUsage = `scenario options:
  --gen N               single: output tokens (default ${defaultSettings.singleGen})
  --prefill-sizes A,B   prefill: prompt sizes in tokens (default ${defaultSettings.prefillSizes.join(',')})
  --clients A,B         concurrent: client counts (default ${defaultSettings.concurrentClients.join(',')})
  --concurrent-gen N    concurrent: output tokens per client (default ${defaultSettings.concurrentGen})
  --repeat-tokens N     repeat: conversation size (default ${defaultSettings.repeatTokens})
  --mixed-tokens N      mixed: long prompt size (default ${defaultSettings.mixedLongTokens})
  --mixed-shorts N      mixed: short requests per run (default ${defaultSettings.mixedShorts})
  --infill-requests N   infill: measured requests per run (default ${defaultSettings.infillRequests})
  --edit-lines N        edit: lines of code the answer rewrites (default ${defaultSettings.editLines})
  --timeout S           per request, seconds (default ${defaultSettings.requestTimeoutMs / 1000})`;

/** The flags settingsFromArgs reads (for rejecting unknown ones). */
export const settingsOptionNames = [
  'gen', 'prefill-sizes', 'clients', 'concurrent-gen', 'repeat-tokens', 'mixed-tokens', 'mixed-shorts', 'infill-requests', 'edit-lines', 'timeout',
] as const;

function intList(args: ParsedArgs, name: string, min: number, max: number): number[] | undefined {
  const list = optList(args, name);
  if (list === undefined) return undefined;
  if (list.length === 0) throw new UsageError(`--${name} needs at least one number`);
  return list.map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name}: '${s}' is not an integer in [${min}, ${max}]`);
    return n;
  });
}

export function settingsFromArgs(args: ParsedArgs): BenchSettings {
  const d = defaultSettings;
  const timeout = optInt(args, 'timeout', 1, 86_400);
  return {
    ...d,
    singleGen: optInt(args, 'gen', 2, 65_536) ?? d.singleGen,
    prefillSizes: intList(args, 'prefill-sizes', 1, 1 << 20) ?? d.prefillSizes,
    concurrentClients: intList(args, 'clients', 1, 256) ?? d.concurrentClients,
    concurrentGen: optInt(args, 'concurrent-gen', 1, 65_536) ?? d.concurrentGen,
    repeatTokens: optInt(args, 'repeat-tokens', 64, 1 << 20) ?? d.repeatTokens,
    mixedLongTokens: optInt(args, 'mixed-tokens', 64, 1 << 20) ?? d.mixedLongTokens,
    mixedShorts: optInt(args, 'mixed-shorts', 1, 256) ?? d.mixedShorts,
    infillRequests: optInt(args, 'infill-requests', 1, 1000) ?? d.infillRequests,
    editLines: optInt(args, 'edit-lines', 1, 10_000) ?? d.editLines,
    requestTimeoutMs: timeout !== undefined ? timeout * 1000 : d.requestTimeoutMs,
  };
}
