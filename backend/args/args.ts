// Minimal `--name value` / `--flag` parser shared by the subcommands.
export interface ParsedArgs {
  /** --name value pairs; a flag without a value is "true". Repeated names keep the last. */
  options: Map<string, string>;
  /** Every value of each name, in order (repeatable options such as serve's --model). */
  repeated?: Map<string, string[]>;
  positional: string[];
  /** What follows a bare `--`, untouched (`strata launch claude -- -p hi` passes them to the client). */
  rest?: string[];
}

export function parseArgs(argv: string[]): ParsedArgs {
  const options = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  const positional: string[] = [];
  const set = (name: string, value: string): void => {
    options.set(name, value);
    repeated.set(name, [...(repeated.get(name) ?? []), value]);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return { options, repeated, positional, rest: argv.slice(i + 1) };
    if (!a.startsWith('--')) { positional.push(a); continue; }
    const eq = a.indexOf('=');
    if (eq > 0) { set(a.slice(2, eq), a.slice(eq + 1)); continue; }
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('--')) { set(a.slice(2), next); i++; } else set(a.slice(2), 'true');
  }
  return { options, repeated, positional };
}

export class UsageError extends Error {}

export function optString(args: ParsedArgs, name: string): string | undefined {
  return args.options.get(name);
}

export function optInt(args: ParsedArgs, name: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = args.options.get(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer in [${min}, ${max}], got '${v}'`);
  return n;
}

export function optList(args: ParsedArgs, name: string): string[] | undefined {
  const v = args.options.get(name);
  return v === undefined ? undefined : v.split(',').map((s) => s.trim()).filter(Boolean);
}
