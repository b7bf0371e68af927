#!/usr/bin/env node
// `strata` command line: one file per subcommand under cli/.
import { parseArgs } from './args/args.js';
import { commandFor, commands } from './cli/commands.js';
import { stopOnChannelClose } from './cli/stop-channel.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const lines = ['usage: strata <command> [options]', '', 'commands:'];
    for (const [n, load] of Object.entries(commands)) {
      try { lines.push(`  ${n.padEnd(16)} ${(await load()).summary}`); } catch { /* not built in */ }
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return name ? 0 : 2;
  }
  const load = commandFor(name, (line) => process.stderr.write(line));
  if (!load) {
    process.stderr.write(`strata: unknown command '${name}' (see strata --help)\n`);
    return 2;
  }
  const cmd = await load();
  const code = await cmd.run(parseArgs(rest));
  return typeof code === 'number' ? code : 0;
}

stopOnChannelClose();
main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    process.stderr.write(`strata: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
