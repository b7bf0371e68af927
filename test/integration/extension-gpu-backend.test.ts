// The extension's GPU backend runner (extension/server/gpu-backend-cli.ts) against the real bundled
// CLI and a local registry: the list report, an install that the pin refuses, and a cancel in
// the middle of a download that leaves nothing behind.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PIN } from '../../backend/gpu-backends/pin.js';
import { packageRoot } from '../../backend/addon/loader.js';
import { installGpuBackend, listGpuBackends, parseCliLine, type InstallProgressEvent, type SpawnScript } from '../../extension/server/gpu-backend-cli.js';
import { spawnNodeScript } from '../../extension/server/node-process.js';
import { startFakeRegistry, type FakeRegistry } from '../helpers/fake-registry.js';
import { tempDir } from './server-helpers.js';

const cli = join(packageRoot, 'dist', 'strata.mjs');
let reg: FakeRegistry;
let cache: { dir: string; remove(): void };
let spawn: SpawnScript;

beforeAll(async () => { reg = await startFakeRegistry(); });
afterAll(async () => { await reg.close(); });
beforeEach(() => {
  cache = tempDir('strata-ext-backends-');
  spawn = (script, args) => spawnNodeScript(script, args, { STRATA_CACHE_DIR: cache.dir });
});
afterEach(() => cache.remove());

const store = (): string => join(cache.dir, 'backends', PIN.llamaCommit.slice(0, 12));

describe('gpu backend runner', () => {
  it('reads the CLI JSON lines and ignores anything else it prints', () => {
    expect(parseCliLine('load_backend: loaded CPU backend from /x/libggml-cpu-haswell.so')).toBeNull();
    expect(parseCliLine('{"type":"progress","phase":"resolve","message":"m"}')).toEqual({ type: 'progress', phase: 'resolve', message: 'm' });
    expect(parseCliLine('{"no":"type"}')).toBeNull();
    expect(parseCliLine('{broken')).toBeNull();
  });

  it('lists what is installed and what the machine can run', async () => {
    const r = await listGpuBackends(cli, spawn);
    expect(r.installed).toEqual([]);
    expect(r.readiness.map((x) => x.kind)).toEqual(['vulkan', 'cuda', 'cuda-ext']);
    expect(r.devices.map((d) => d.name)).toContain('CPU');
  });

  it('reports an install the pin refuses as an error, not a cancel', async () => {
    const events: InstallProgressEvent[] = [];
    const run = installGpuBackend(cli, 'vulkan', (e) => events.push(e), { spawn, extraArgs: ['--registry', reg.url, '--via', 'https'] });
    const outcome = await run.done;
    expect(outcome).toMatchObject({ kind: 'error', cancelled: false, message: expect.stringContaining('refusing to install it') });
    expect(events[0]).toMatchObject({ phase: 'resolve' });
  });

  it('cancels in the middle of the download; nothing is left in the store', async () => {
    reg.claimIntegrity = PIN.gpuBackends.vulkan.integrity;
    reg.stallAfter = 2048;
    try {
      const stalled = reg.nextStall();
      const phases: string[] = [];
      const run = installGpuBackend(cli, 'vulkan', (e) => phases.push(e.phase), { spawn, extraArgs: ['--registry', reg.url, '--via', 'https'] });
      await stalled;
      run.cancel();
      expect(await run.done).toMatchObject({ kind: 'error', cancelled: true });
      expect(phases).toContain('download');
      expect(existsSync(store()) ? readdirSync(store()) : []).toEqual([]);
    } finally {
      reg.stallAfter = null;
      reg.claimIntegrity = reg.pin.gpuBackends.vulkan.integrity;
    }
  });
});
