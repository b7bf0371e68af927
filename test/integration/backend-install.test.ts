// Installing a prebuilt GPU backend from a registry (a real local HTTP registry, both through
// `npm pack` and over HTTP without npm): only the library is unpacked, into the store of the
// pinned commit; every integrity check refuses a mismatch and leaves nothing behind; a cancelled
// download leaves nothing behind; the CLI reports errors and progress as JSON lines.
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  backendStoreDir, installBackend, installedBackend, installedBackendDirs, listInstalled, removeBackend, type InstallProgress,
} from '../../backend/gpu-backends/install.js';
import { packageRoot } from '../../backend/addon/loader.js';
import { startFakeRegistry, type FakeRegistry } from '../helpers/fake-registry.js';
import { tempDir } from './server-helpers.js';

let reg: FakeRegistry;
let cache: { dir: string; remove(): void };
let npmCache: { dir: string; remove(): void };

beforeAll(async () => { reg = await startFakeRegistry(); });
afterAll(async () => { await reg.close(); });
beforeEach(() => {
  cache = tempDir('strata-backends-');
  npmCache = tempDir('strata-npm-cache-');
  reg.requests.length = 0;
});
afterEach(() => { cache.remove(); npmCache.remove(); });

const opts = () => ({
  cacheRoot: cache.dir, pin: reg.pin, registry: reg.url,
  // npm must not keep the fake package in the user's cache.
  env: { ...process.env, npm_config_cache: npmCache.dir, npm_config_update_notifier: 'false' },
});

/** Nothing in the store but finished installs: no temp folders, no locks. */
function leftovers(): string[] {
  const store = backendStoreDir({ cacheRoot: cache.dir, pin: reg.pin });
  return existsSync(store) ? readdirSync(store).filter((f) => f.startsWith('.')) : [];
}

describe('installBackend', () => {
  it('over HTTP: checks the integrity, unpacks only the library and records what it installed', async () => {
    const phases: InstallProgress['phase'][] = [];
    const b = await installBackend('vulkan', { ...opts(), via: 'https', onProgress: (p) => { if (phases.at(-1) !== p.phase) phases.push(p.phase); } });
    expect(phases).toEqual(['resolve', 'download', 'verify', 'unpack', 'done']);
    const store = backendStoreDir({ cacheRoot: cache.dir, pin: reg.pin });
    expect(b).toMatchObject({
      kind: 'vulkan', package: '@node-llama-cpp/linux-x64-vulkan', version: '3.21.1', library: 'libggml-vulkan.so',
      sha256: reg.pin.gpuBackends.vulkan.sha256, integrity: reg.pin.gpuBackends.vulkan.integrity, via: 'https',
      dir: join(store, 'vulkan'), bytes: reg.library.length,
    });
    expect(store).toBe(join(cache.dir, 'backends', reg.pin.llamaCommit.slice(0, 12)));
    expect(readdirSync(b.dir).sort()).toEqual(['libggml-vulkan.so', 'manifest.json']);
    expect(readFileSync(b.path).equals(reg.library)).toBe(true);
    expect(listInstalled({ cacheRoot: cache.dir, pin: reg.pin }).map((x) => x.kind)).toEqual(['vulkan']);
    expect(installedBackendDirs({ cacheRoot: cache.dir, pin: reg.pin })).toEqual([b.dir]);
    expect(leftovers()).toEqual([]);
    expect(reg.requests).toEqual(['/@node-llama-cpp%2flinux-x64-vulkan/3.21.1', '/tarballs/linux-x64-vulkan-3.21.1.tgz']);

    // Installed already: nothing is fetched again.
    reg.requests.length = 0;
    const again = await installBackend('vulkan', { ...opts(), via: 'https' });
    expect(again.installedAt).toBe(b.installedAt);
    expect(reg.requests).toEqual([]);
  });

  it('through npm pack where npm runs', async () => {
    const b = await installBackend('vulkan', { ...opts(), via: 'npm' });
    expect(b.via).toBe('npm');
    expect(readFileSync(b.path).equals(reg.library)).toBe(true);
    expect(reg.requests).toContain('/tarballs/linux-x64-vulkan-3.21.1.tgz');
    expect(leftovers()).toEqual([]);
  });

  it('refuses a package whose published integrity is not the pinned one', async () => {
    reg.claimIntegrity = `sha512-${Buffer.alloc(64, 7).toString('base64')}`;
    try {
      await expect(installBackend('vulkan', { ...opts(), via: 'https' }))
        .rejects.toThrow(/publishes @node-llama-cpp\/linux-x64-vulkan@3\.21\.1 with integrity sha512-BwcH.*but native\/pin\.json records sha512-.*refusing to install it/);
    } finally {
      reg.claimIntegrity = reg.pin.gpuBackends.vulkan.integrity;
    }
    expect(installedBackend('vulkan', { cacheRoot: cache.dir, pin: reg.pin })).toBeNull();
    expect(reg.requests.some((r) => r.startsWith('/tarballs/'))).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it('refuses a tarball whose bytes do not match the integrity', async () => {
    reg.replaceTarball = Buffer.from('not the published tarball');
    try {
      await expect(installBackend('vulkan', { ...opts(), via: 'https' })).rejects.toThrow(/tarball has integrity sha512-.*the registry and the pin say/);
    } finally {
      reg.replaceTarball = null;
    }
    expect(existsSync(join(backendStoreDir({ cacheRoot: cache.dir, pin: reg.pin }), 'vulkan'))).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it('refuses a library whose sha256 is not the pinned one', async () => {
    const pin = JSON.parse(JSON.stringify(reg.pin)) as typeof reg.pin;
    pin.gpuBackends.vulkan.sha256 = '0'.repeat(64);
    await expect(installBackend('vulkan', { ...opts(), pin, via: 'https' })).rejects.toThrow(/libggml-vulkan\.so of .* has sha256 [0-9a-f]{64}, native\/pin\.json records 0{64}/);
    expect(installedBackend('vulkan', { cacheRoot: cache.dir, pin })).toBeNull();
    expect(leftovers()).toEqual([]);
  });

  it('stops a cancelled download and leaves nothing behind', async () => {
    reg.stallAfter = 4096;
    const ac = new AbortController();
    try {
      const run = installBackend('vulkan', {
        ...opts(), via: 'https', signal: ac.signal,
        onProgress: (p) => { if (p.phase === 'download' && (p.received ?? 0) >= 4096) ac.abort(); },
      });
      await expect(run).rejects.toThrow('cancelled');
    } finally {
      reg.stallAfter = null;
    }
    expect(installedBackend('vulkan', { cacheRoot: cache.dir, pin: reg.pin })).toBeNull();
    expect(leftovers()).toEqual([]);
  });

  it('does not list a damaged install, replaces it on the next install, and removes one', async () => {
    const b = await installBackend('vulkan', { ...opts(), via: 'https' });
    truncateSync(b.path, 100);
    expect(installedBackend('vulkan', { cacheRoot: cache.dir, pin: reg.pin })).toBeNull();
    expect(installedBackendDirs({ cacheRoot: cache.dir, pin: reg.pin })).toEqual([]);
    const again = await installBackend('vulkan', { ...opts(), via: 'https' });
    expect(readFileSync(again.path).equals(reg.library)).toBe(true);
    expect(removeBackend('vulkan', { cacheRoot: cache.dir, pin: reg.pin })).toBe(true);
    expect(existsSync(again.dir)).toBe(false);
    expect(removeBackend('vulkan', { cacheRoot: cache.dir, pin: reg.pin })).toBe(false);
  });
});

describe('strata gpu', () => {
  const cli = join(packageRoot, 'dist', 'strata.mjs');
  const env = () => ({ ...process.env, STRATA_CACHE_DIR: cache.dir, npm_config_cache: npmCache.dir });

  it('install: the real pin refuses a registry that serves something else, as a JSON error line', async () => {
    const r = await promisify(execFile)(process.execPath, [cli, 'gpu', 'install', 'vulkan', '--registry', reg.url, '--via', 'https', '--json'], { env: env() })
      .then(() => null, (e: { code: number; stdout: string }) => e);
    expect(r?.code).toBe(1);
    const lines = r!.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; message?: string; phase?: string });
    expect(lines[0]).toMatchObject({ type: 'progress', phase: 'resolve' });
    expect(lines.at(-1)).toMatchObject({ type: 'error', message: expect.stringContaining('refusing to install it'), cancelled: false });
    expect(existsSync(join(cache.dir, 'backends'))).toBe(true);
    expect(readdirSync(join(cache.dir, 'backends', reg.pin.llamaCommit.slice(0, 12)))).toEqual([]);
  });

  it('install: SIGTERM during the download cancels it and leaves nothing behind', async () => {
    // The registry claims the real pinned integrity and stalls: the CLI is mid-download when stopped.
    reg.claimIntegrity = (await import('../../backend/gpu-backends/pin.js')).PIN.gpuBackends.vulkan.integrity;
    reg.stallAfter = 1024;
    try {
      const stalled = reg.nextStall();
      const child = spawn(process.execPath, [cli, 'gpu', 'install', 'vulkan', '--registry', reg.url, '--via', 'https', '--json'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
      await stalled;
      const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(130);
      const last = JSON.parse(out.trim().split('\n').at(-1)!) as { type: string; cancelled: boolean };
      expect(last).toMatchObject({ type: 'error', cancelled: true });
      expect(readdirSync(join(cache.dir, 'backends', reg.pin.llamaCommit.slice(0, 12)))).toEqual([]);
    } finally {
      reg.stallAfter = null;
      reg.claimIntegrity = reg.pin.gpuBackends.vulkan.integrity;
    }
  });

  it('list --json: the pin, nothing installed, the machine, and the devices the engine sees', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'gpu', 'list', '--json'], { env: env() });
    const r = JSON.parse(stdout) as { type: string; llamaCommit: string; installed: unknown[]; readiness: Array<{ kind: string }>; devices: Array<{ name: string }>; machine: { libraries: Record<string, unknown> } };
    expect(r.type).toBe('list');
    expect(r.llamaCommit).toBe(reg.pin.llamaCommit);
    expect(r.installed).toEqual([]);
    expect(r.readiness.map((x) => x.kind)).toEqual(['vulkan', 'cuda', 'cuda-ext']);
    expect(r.devices.map((d) => d.name)).toContain('CPU');
    expect(Object.keys(r.machine.libraries)).toEqual(['libvulkan.so.1', 'libcudart.so.13', 'libcublas.so.13', 'libcuda.so.1', 'libcudart.so.12', 'libcublas.so.12']);
  });

  it('usage errors name what is wrong', async () => {
    const run = (args: string[]) => promisify(execFile)(process.execPath, [cli, 'gpu', ...args], { env: env() }).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(await run(['install'])).toMatchObject({ code: 2, stderr: expect.stringContaining('install needs a backend: vulkan, cuda, cuda-ext') });
    expect(await run(['install', 'rocm'])).toMatchObject({ code: 2, stderr: expect.stringContaining("(got 'rocm')") });
    expect(await run(['install', 'vulkan', '--registry', 'ftp://x'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--registry must be an http(s) URL') });
    expect(await run(['frobnicate'])).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown action 'frobnicate'") });
    expect(await run(['list', '--registry', 'http://x'])).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown option --registry') });
  });
});
