// Every `strata` subcommand answers --help with its usage on stdout and exit 0, without doing
// its work (bench-engine used to run the whole benchmark); a wrong option is a usage error (2).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseArgs } from '../../backend/args/args.js';
import { commandFor, commands, RENAMED_COMMANDS } from '../../backend/cli/commands.js';

async function run(name: string, ...argv: string[]): Promise<{ code: number | void; out: string; err: string }> {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => { out += String(s); return true; });
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => { err += String(s); return true; });
  try {
    const code = await (await commands[name]!()).run(parseArgs(argv));
    return { code, out, err };
  } finally {
    vi.restoreAllMocks();
  }
}

describe('strata <command> --help', () => {
  afterEach(() => { vi.restoreAllMocks(); });

  it('names every subcommand in the table', () => {
    expect(Object.keys(commands).sort()).toEqual(['bench', 'bench-engine', 'devices', 'gpu', 'launch', 'make-test-model', 'models', 'pull', 'rpc-server', 'serve']);
  });

  for (const name of Object.keys(commands)) {
    it(`${name} --help prints its usage and exits 0`, async () => {
      const r = await run(name, '--help');
      expect(r.code).toBe(0);
      expect(r.err).toBe('');
      expect(r.out).toMatch(new RegExp(`usage: strata ${name}\\b`));
    });
  }

  for (const action of ['list', 'install', 'remove']) {
    it(`gpu ${action} --help prints the usage and exits 0`, async () => {
      const r = await run('gpu', action, '--help');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/usage: strata gpu list/);
    });
  }

  it('an old command name still runs its command and says the new name', async () => {
    const notes: string[] = [];
    expect(commandFor('backend', (l) => notes.push(l))).toBe(commands.gpu);
    expect(notes).toEqual(["strata: 'strata backend' is now 'strata gpu'\n"]);
    expect(Object.values(RENAMED_COMMANDS).every((n) => n in commands)).toBe(true);
    expect(commandFor('gpu', (l) => notes.push(l))).toBe(commands.gpu);
    expect(commandFor('nope', (l) => notes.push(l))).toBeUndefined();
    expect(notes).toHaveLength(1);
  });

  it('bench-engine --workload edit|exact --help print the usage too', async () => {
    for (const w of ['edit', 'exact']) {
      const r = await run('bench-engine', '--workload', w, '--help');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/--workload exact/);
    }
  });

  it('bench-engine rejects an unknown option or workload before running anything', async () => {
    const r = await run('bench-engine', '--tokens', '5');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/strata bench-engine: unknown option --tokens/);
    expect(r.out).toBe('');
    const w = await run('bench-engine', '--workload', 'fast');
    expect(w.code).toBe(2);
    expect(w.err).toMatch(/--workload must be throughput, edit or exact, got 'fast'/);
  });
});
