// The table of `strata` subcommands, one module each, loaded on demand (a command that needs the
// addon does not load it for another). cli.ts dispatches through it; a unit test walks it.
import type { ParsedArgs } from '../args/args.js';

export interface Command { summary: string; run: (args: ParsedArgs) => Promise<number | void> }

/** Old names that still run their command, saying the new one first (`strata backend` is `strata gpu`). */
export const RENAMED_COMMANDS: Readonly<Record<string, string>> = { backend: 'gpu' };

/** The command a name runs (an old name's note goes to `note`), or undefined for no command. */
export function commandFor(name: string, note: (line: string) => void): (() => Promise<Command>) | undefined {
  const renamed = Object.hasOwn(RENAMED_COMMANDS, name) ? RENAMED_COMMANDS[name]! : null;
  if (renamed) note(`strata: 'strata ${name}' is now 'strata ${renamed}'\n`);
  const key = renamed ?? name;
  return Object.hasOwn(commands, key) ? commands[key] : undefined;
}

export const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).command,
  'make-test-model': async () => (await import('./make-test-model.js')).command,
  pull: async () => (await import('./pull.js')).command,
  models: async () => (await import('./models.js')).command,
  devices: async () => (await import('./devices.js')).command,
  gpu: async () => (await import('./gpu.js')).command,
  'rpc-server': async () => (await import('./rpc-server.js')).command,
  bench: async () => (await import('./bench.js')).command,
  'bench-engine': async () => (await import('./bench-engine.js')).command,
  launch: async () => (await import('./launch.js')).command,
};
