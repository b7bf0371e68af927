// The table of `strata` subcommands, one module each, loaded on demand (a command that needs the
// addon does not load it for another). cli.ts dispatches through it; a unit test walks it.
import type { ParsedArgs } from '../args/args.js';

export interface Command { summary: string; run: (args: ParsedArgs) => Promise<number | void> }

export const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).command,
  'make-test-model': async () => (await import('./make-test-model.js')).command,
  pull: async () => (await import('./pull.js')).command,
  models: async () => (await import('./models.js')).command,
  devices: async () => (await import('./devices.js')).command,
  backend: async () => (await import('./backend.js')).command,
  'rpc-server': async () => (await import('./rpc-server.js')).command,
  bench: async () => (await import('./bench.js')).command,
  'bench-engine': async () => (await import('./bench-engine.js')).command,
};
