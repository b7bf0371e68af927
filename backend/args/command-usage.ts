// Shared by the tool subcommands (make-test-model, devices, rpc-server) and the npm run bench:*
// scripts: unknown options and stray arguments are usage errors; usage errors exit 2 with the
// usage text, failures exit 1.
import { UsageError, type ParsedArgs } from './args.js';

export function rejectUnknownOptions(args: ParsedArgs, allowed: readonly string[]): void {
  for (const name of args.options.keys()) {
    if (!allowed.includes(name)) throw new UsageError(`unknown option --${name}`);
  }
  if (args.positional.length > 0) throw new UsageError(`unexpected argument '${args.positional[0]}'`);
}

/** A boolean flag: absent, bare (`--json`) or `--json=true|false`. */
export function optFlag(args: ParsedArgs, name: string): boolean {
  const v = args.options.get(name);
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  throw new UsageError(`--${name} takes no value, got '${v}'`);
}

/** Runs a command body; a UsageError prints "strata <name>: message" and the usage, exit 2. */
export async function runCommand(name: string, usage: string, args: ParsedArgs, body: () => Promise<number>): Promise<number> {
  if (args.options.has('help')) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`strata ${name}: ${e.message}\n${usage}\n`);
      return 2;
    }
    process.stderr.write(`strata ${name}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

/**
 * A benchmark script's main (npm run bench:NAME): a UsageError prints "bench:NAME: message" and the
 * usage, exit 2; any other error propagates to the script runner, with its stack.
 */
export async function runBench(name: string, usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench:${name}: ${err.message}\n\n${usage}`);
    return 2;
  }
}
