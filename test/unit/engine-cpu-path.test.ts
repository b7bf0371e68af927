// The CPU path choice over a scripted probe child (a stand-in for dist/cpu-probe.mjs that speaks
// its protocol): candidate order, fallback past a variant that dies, repack off as the last
// resort, verdicts cached per machine and build, and the refusal when nothing survives. The real
// probe child with the real engine: test/integration/cpu-path.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveCpuPath, type CpuPathOptions } from '../../backend/engine/cpu-path.js';

// Variants and which paths die are read from env; every run appends its argument to a log file,
// so a test can see which probes ran.
const SCRIPTED_PROBE = String.raw`
const fs = require('node:fs');
const arg = JSON.parse(process.argv[2]);
fs.appendFileSync(process.env.PROBE_LOG, JSON.stringify(arg) + '\n');
const variants = JSON.parse(process.env.PROBE_VARIANTS);
if (arg.list) { console.log(JSON.stringify({ kind: 'variants', variants })); console.log('{"kind":"ok"}'); process.exit(0); }
const dies = (process.env.PROBE_DIES || '').split(',');
if (dies.includes(arg.variant + ':' + (arg.repack ? 'on' : 'off'))) process.kill(process.pid, 'SIGSEGV');
if (dies.includes(arg.variant + ':exit')) { console.error('GGML_ASSERT failed in the kernel'); process.exit(3); }
console.log(JSON.stringify({ kind: 'ok' }));
`;

let dir = '';
let logs: string[] = [];
const env = { ...process.env };

function options(): CpuPathOptions {
  return { log: (line) => logs.push(line), probeScript: join(dir, 'probe.cjs'), cacheDir: join(dir, 'cache'), timeoutMs: 20_000 };
}

function probesRun(): Array<{ list?: boolean; variant?: string; repack?: boolean }> {
  try {
    return readFileSync(join(dir, 'probes.log'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-cpu-path-'));
  writeFileSync(join(dir, 'probe.cjs'), SCRIPTED_PROBE);
  logs = [];
  process.env.PROBE_LOG = join(dir, 'probes.log');
  process.env.PROBE_VARIANTS = JSON.stringify([
    { name: 'sapphirerapids', score: 4032, amx: true }, { name: 'zen4', score: 1984, amx: false },
    { name: 'haswell', score: 64, amx: false }, { name: 'armv9', score: 0, amx: false },
  ]);
  process.env.PROBE_DIES = '';
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const k of ['PROBE_LOG', 'PROBE_VARIANTS', 'PROBE_DIES']) {
    if (env[k] === undefined) delete process.env[k];
    else process.env[k] = env[k];
  }
});

describe('cpu path', () => {
  it('uses the best variant with repacking when its probe passes, and says nothing more', async () => {
    const path = await resolveCpuPath({ variant: 'auto', repack: 'auto' }, options());
    expect(path).toMatchObject({ variant: 'sapphirerapids', repack: true, note: null });
    expect(path.probes.map((p) => [p.variant, p.repack, p.ok])).toEqual([['sapphirerapids', true, true]]);
    expect(probesRun()).toEqual([{ list: true }, { variant: 'sapphirerapids', repack: true }]);
    expect(logs.filter((l) => l.includes('failed its probe'))).toEqual([]);
  });

  it('falls back to the next variant when the best one dies, with one log line naming both', async () => {
    process.env.PROBE_DIES = 'sapphirerapids:on';
    const path = await resolveCpuPath({ variant: 'auto', repack: 'auto' }, options());
    expect(path).toMatchObject({ variant: 'zen4', repack: true });
    expect(path.probes[0]).toMatchObject({ variant: 'sapphirerapids', ok: false, reason: 'signal SIGSEGV' });
    expect(path.note).toBe('sapphirerapids (repack on) failed its probe (signal SIGSEGV); using zen4 (repack on)');
    expect(logs.filter((l) => l.includes('failed its probe'))).toEqual([`cpu path: ${path.note}`]);
  });

  it('turns repacking off only when every variant dies with it on', async () => {
    process.env.PROBE_DIES = 'sapphirerapids:on,zen4:on,haswell:on';
    const path = await resolveCpuPath({ variant: 'auto', repack: 'auto' }, options());
    expect(path).toMatchObject({ variant: 'sapphirerapids', repack: false });
    // The variant that does not suit this CPU (score 0) is never tried.
    expect(probesRun().map((a) => a.variant).filter(Boolean)).toEqual(['sapphirerapids', 'zen4', 'haswell', 'sapphirerapids']);
  });

  it('keeps verdicts per machine and build: a second resolution runs no probe', async () => {
    process.env.PROBE_DIES = 'sapphirerapids:on';
    await resolveCpuPath({ variant: 'auto', repack: 'auto' }, options());
    const before = probesRun().length;
    logs = [];
    const again = await resolveCpuPath({ variant: 'auto', repack: 'auto' }, options());
    expect(again).toMatchObject({ variant: 'zen4', repack: true });
    expect(probesRun().length).toBe(before);
    // The fallback is still said once per start, from the cached verdicts.
    expect(logs.filter((l) => l.includes('failed its probe'))).toHaveLength(1);
  });

  it('narrows the candidates to what the user set', async () => {
    process.env.PROBE_DIES = 'zen4:on';
    expect(await resolveCpuPath({ variant: 'zen4', repack: 'auto' }, options())).toMatchObject({ variant: 'zen4', repack: false });
    expect(await resolveCpuPath({ variant: 'auto', repack: 'off' }, options())).toMatchObject({ variant: 'sapphirerapids', repack: false });
    const set = await resolveCpuPath({ variant: 'haswell', repack: 'on' }, options());
    expect(set).toMatchObject({ variant: 'haswell', repack: true, probes: [] });
    expect(set.note).toMatch(/not probed/);
  });

  it('refuses with every candidate and its reason when nothing survives', async () => {
    process.env.PROBE_DIES = 'zen4:on,zen4:exit';
    await expect(resolveCpuPath({ variant: 'zen4', repack: 'auto' }, options())).rejects.toThrow(
      'cpu path: every candidate failed its probe: zen4 (repack on): signal SIGSEGV; zen4 (repack off): exit code 3: GGML_ASSERT failed in the kernel',
    );
  });
});
