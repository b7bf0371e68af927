// Renamed `strata serve` options: the old spelling (flag, STRATA_ variable, config key, a model
// entry's key) still sets the new option, and says the new name; the new one wins over the old.
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../backend/args/args.js';
import { resolveConfig, type ConfigSources } from '../../backend/app/config.js';
import { RENAMED_OPTIONS, SERVE_OPTIONS } from '../../backend/app/serve-options.js';

function resolve(argv: string[], extra: Partial<ConfigSources> = {}) {
  const notes: string[] = [];
  const args = parseArgs(argv);
  const cfg = resolveConfig({ flags: args.options, repeated: args.repeated!, env: {}, readFile: () => { throw new Error('no file'); }, note: (l) => notes.push(l), ...extra });
  return { cfg, notes };
}

describe('renamed serve options', () => {
  it('each old name points at an option of the table that it is not itself', () => {
    for (const [old, now] of Object.entries(RENAMED_OPTIONS)) {
      expect(Object.hasOwn(SERVE_OPTIONS, now), now).toBe(true);
      expect(Object.hasOwn(SERVE_OPTIONS, old), old).toBe(false);
    }
  });

  it('--cache-mib sets --park-mib and says so; --park-mib alone says nothing', () => {
    expect(resolve(['--cache-mib', '512'])).toEqual({ cfg: expect.objectContaining({ parkMib: 512 }), notes: ['--cache-mib is now --park-mib'] });
    expect(resolve(['--park-mib', '256'])).toEqual({ cfg: expect.objectContaining({ parkMib: 256 }), notes: [] });
    // Both given: the new name wins.
    expect(resolve(['--cache-mib', '512', '--park-mib', '256']).cfg.parkMib).toBe(256);
    // A bad value is refused under the name the user can find in --help.
    expect(() => resolve(['--cache-mib', '-1'])).toThrowError(/--park-mib/);
  });

  it('STRATA_CACHE_MIB and a config file\'s cache-mib (top level and a model\'s) set the park budget too', () => {
    const env = resolve([], { env: { STRATA_CACHE_MIB: '128' } });
    expect([env.cfg.parkMib, env.notes]).toEqual([128, ['STRATA_CACHE_MIB is now STRATA_PARK_MIB']]);
    const file = JSON.stringify({ cacheMib: 64, models: [{ name: 'a', path: '/m/a.gguf', 'cache-mib': 32 }] });
    const r = resolve(['--config', '/c.json'], { readFile: () => file });
    expect(r.cfg.parkMib).toBe(64);
    expect(r.cfg.models[0]!.settings).toEqual({ parkMib: 32 });
    expect(r.notes).toEqual(['--cache-mib is now --park-mib', '--cache-mib is now --park-mib']);
  });
});
