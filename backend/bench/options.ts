// Command-line options that tune the scenarios, shared by `strata bench` and bench:compare.
import { optInt, optList, UsageError, type ParsedArgs } from '../args/args.js';
import { defaultSettings } from './types.js';
import type { BenchSettings } from '../../contract/bench.js';

export const settingsUsage = `scenario options:
  --gen N               single: output tokens (default ${defaultSettings.singleGen})
  --prefill-sizes A,B   prefill: prompt sizes in tokens (default ${defaultSettings.prefillSizes.join(',')})
  --clients A,B         concurrent: client counts (default ${defaultSettings.concurrentClients.join(',')})
  --concurrent-gen N    concurrent: output tokens per client (default ${defaultSettings.concurrentGen})
  --repeat-tokens N     repeat: conversation size (default ${defaultSettings.repeatTokens})
  --mixed-tokens N      mixed: long prompt size (default ${defaultSettings.mixedLongTokens})
  --mixed-shorts N      mixed: short requests per run (default ${defaultSettings.mixedShorts})
  --side-tokens N       side: the main request's prompt size (default ${defaultSettings.sideMainTokens})
  --infill-requests N   infill: measured requests per run (default ${defaultSettings.infillRequests})
  --keystrokes N        typing: keystrokes per burst (default ${defaultSettings.typingKeystrokes})
  --keystroke-ms N      typing: ms between keystrokes (default ${defaultSettings.typingIntervalMs})
  --file-lines N        typing: lines of the file typed into (default ${defaultSettings.typingFileLines})
  --session-tokens N    session: conversation size (default ${defaultSettings.sessionTokens})
  --session-rounds N    session: saves and restores per run (default ${defaultSettings.sessionRounds})
  --users N             conversations: users (default ${defaultSettings.convUsers})
  --turns N             conversations: turns per user (default ${defaultSettings.convTurns})
  --in-flight N         conversations: requests at a time (default ${defaultSettings.convInFlight})
  --file-tokens N       conversations: size of the file each user pastes (default ${defaultSettings.convFileTokens})
  --edit-lines N        edit: lines of code the answer rewrites (default ${defaultSettings.editLines})
  --timeout S           per request, seconds (default ${defaultSettings.requestTimeoutMs / 1000})`;

/** The flags settingsFromArgs reads (for rejecting unknown ones). */
export const settingsOptionNames = [
  'gen', 'prefill-sizes', 'clients', 'concurrent-gen', 'repeat-tokens', 'mixed-tokens', 'mixed-shorts', 'side-tokens', 'infill-requests', 'timeout',
  'keystrokes', 'keystroke-ms', 'file-lines', 'session-tokens', 'session-rounds', 'users', 'turns', 'in-flight', 'file-tokens',
  'edit-lines',
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
    sideMainTokens: optInt(args, 'side-tokens', 64, 1 << 20) ?? d.sideMainTokens,
    infillRequests: optInt(args, 'infill-requests', 1, 1000) ?? d.infillRequests,
    typingKeystrokes: optInt(args, 'keystrokes', 1, 10_000) ?? d.typingKeystrokes,
    typingIntervalMs: optInt(args, 'keystroke-ms', 0, 60_000) ?? d.typingIntervalMs,
    typingFileLines: optInt(args, 'file-lines', 1, 1_000_000) ?? d.typingFileLines,
    sessionTokens: optInt(args, 'session-tokens', 16, 1 << 20) ?? d.sessionTokens,
    sessionRounds: optInt(args, 'session-rounds', 1, 1000) ?? d.sessionRounds,
    convUsers: optInt(args, 'users', 1, 1000) ?? d.convUsers,
    convTurns: optInt(args, 'turns', 1, 1000) ?? d.convTurns,
    convInFlight: optInt(args, 'in-flight', 1, 256) ?? d.convInFlight,
    convFileTokens: optInt(args, 'file-tokens', 1, 1 << 20) ?? d.convFileTokens,
    editLines: optInt(args, 'edit-lines', 1, 10_000) ?? d.editLines,
    requestTimeoutMs: timeout !== undefined ? timeout * 1000 : d.requestTimeoutMs,
  };
}
