// Installs a pinned prebuilt GPU backend (pin.ts) into the user cache:
// <cache>/backends/<llama commit>/<kind>/<library> + manifest.json. The tarball must match the
// registry's published integrity and the pin's, and the library the pin's sha256; only that one
// file is unpacked. A cancelled or failed install leaves nothing behind; an install is published
// by one rename, so engines never see half of one. Installed folders are what the server passes
// to its engines (EngineOptions.backendDirs) and `strata devices` loads.
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { x as untar } from 'tar';
import { strataCacheDir } from '../../common/hub/cache-dir.js';
import { checkPin, GPU_BACKEND_KINDS, PIN, type GpuBackendKind, type Pin } from './pin.js';
import { downloadFile, fetchDist, npmPack, registryUrl, sha256Of, sriOf } from './registry.js';
import { processExists } from '../../common/os/process.js';

export interface InstalledBackend {
  kind: GpuBackendKind;
  package: string;
  version: string;
  llamaCommit: string;
  library: string;
  sha256: string;
  integrity: string;
  bytes: number;
  /** Folder holding the library (an EngineOptions.backendDirs entry). */
  dir: string;
  path: string;
  installedAt: string;
  /** How the tarball was fetched. */
  via: 'npm' | 'https';
}

export type InstallPhase = 'resolve' | 'download' | 'verify' | 'unpack' | 'done';
export interface InstallProgress {
  phase: InstallPhase;
  message: string;
  /** Bytes downloaded so far and in all (download phase; total null when unknown). */
  received?: number;
  total?: number | null;
}

export interface BackendStoreOptions {
  /** Default: strataCacheDir(). */
  cacheRoot?: string;
  pin?: Pin;
}

export interface InstallOptions extends BackendStoreOptions {
  /** Default: npm's configured registry, else registry.npmjs.org. */
  registry?: string;
  /** 'auto': npm pack when npm runs here, else HTTPS. */
  via?: 'auto' | 'npm' | 'https';
  /** npm binary (default "npm" on PATH). */
  npm?: string;
  /** Environment for npm (tests point its cache elsewhere). */
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  onProgress?: (p: InstallProgress) => void;
  /** Default: this machine's. The pinned packages are Linux builds (libggml-<name>.so). */
  platform?: NodeJS.Platform;
}

/** Load order of installed backends: CUDA 13 before its CUDA 12 fallback (same file name: the first that loads wins), then Vulkan. */
const LOAD_ORDER: readonly GpuBackendKind[] = ['cuda', 'cuda-ext', 'vulkan'];

/** <cache>/backends/<first 12 of the pinned llama.cpp commit>: a new pin starts an empty store. */
export function backendStoreDir(opts: BackendStoreOptions = {}): string {
  const pin = opts.pin ?? PIN;
  return join(opts.cacheRoot ?? strataCacheDir(), 'backends', pin.llamaCommit.slice(0, 12));
}

function readManifest(dir: string): InstalledBackend | null {
  try {
    return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as InstalledBackend;
  } catch {
    return null;
  }
}

/**
 * The installed backend of `kind` when its manifest matches the pin (same package, version,
 * commit, sha256) and its library is there with the recorded size; null otherwise.
 */
export function installedBackend(kind: GpuBackendKind, opts: BackendStoreOptions = {}): InstalledBackend | null {
  const pin = opts.pin ?? PIN;
  const entry = pin.gpuBackends[kind];
  const dir = join(backendStoreDir(opts), kind);
  const m = readManifest(dir);
  if (!m || m.kind !== kind || m.package !== entry.package || m.version !== entry.version ||
      m.llamaCommit !== pin.llamaCommit || m.sha256 !== entry.sha256 || m.library !== entry.library) {
    return null;
  }
  const path = join(dir, entry.library);
  try {
    if (statSync(path).size !== m.bytes) return null;
  } catch {
    return null;
  }
  return { ...m, dir, path };
}

export function listInstalled(opts: BackendStoreOptions = {}): InstalledBackend[] {
  return GPU_BACKEND_KINDS.map((k) => installedBackend(k, opts)).filter((b): b is InstalledBackend => b !== null);
}

/** Folders of the installed backends in the order the engine should try them. */
export function installedBackendDirs(opts: BackendStoreOptions = {}): string[] {
  return LOAD_ORDER.map((k) => installedBackend(k, opts)?.dir).filter((d): d is string => d !== undefined);
}

export function removeBackend(kind: GpuBackendKind, opts: BackendStoreOptions = {}): boolean {
  const dir = join(backendStoreDir(opts), kind);
  if (!existsSync(dir)) return false;
  rmSync(dir, { recursive: true, force: true });
  return true;
}

function npmRuns(npm: string, env: NodeJS.ProcessEnv): boolean {
  try {
    execFileSync(npm, ['--version'], { stdio: 'ignore', env, timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

/** One installer per kind at a time (a folder lock; a lock whose process died is taken over). */
function lock(path: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(path);
      writeFileSync(join(path, 'pid'), String(process.pid));
      return () => rmSync(path, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSafe(join(path, 'pid')));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processExists(pid)) {
        throw new Error(`another install of this backend is running (pid ${pid}); wait for it or end it`);
      }
      rmSync(path, { recursive: true, force: true });
    }
  }
  throw new Error(`cannot take the install lock ${path}`);
}

function readFileSafe(p: string): string {
  try { return readFileSync(p, 'utf8'); } catch { return ''; }
}

/** Fetches, verifies and installs `kind`; resolves with what was installed (or was already). */
export async function installBackend(kind: GpuBackendKind, opts: InstallOptions = {}): Promise<InstalledBackend> {
  const pin = checkPin(opts.pin ?? PIN);
  const entry = pin.gpuBackends[kind];
  const platform = opts.platform ?? process.platform;
  if (platform !== 'linux') {
    throw new Error(`${entry.package} is a Linux build (${entry.library}); there is no prebuilt ${kind} backend for ${platform}: the engine runs on the CPU there`);
  }
  const report = opts.onProgress ?? (() => {});
  const present = installedBackend(kind, opts);
  if (present) {
    report({ phase: 'done', message: `${entry.package}@${entry.version} is already installed in ${present.dir}` });
    return present;
  }
  const store = backendStoreDir(opts);
  mkdirSync(store, { recursive: true });
  const unlock = lock(join(store, `.${kind}.lock`));
  const work = join(store, `.tmp-${kind}-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(work, { recursive: true });
    const registry = (opts.registry ?? registryUrl(opts.env)).replace(/\/+$/, '');
    report({ phase: 'resolve', message: `looking up ${entry.package}@${entry.version} on ${registry}` });
    const dist = await fetchDist(registry, entry.package, entry.version, opts.signal);
    if (dist.integrity !== entry.integrity) {
      throw new Error(`${registry} publishes ${entry.package}@${entry.version} with integrity ${dist.integrity}, ` +
        `but native/pin.json records ${entry.integrity}; refusing to install it`);
    }

    const env = opts.env ?? process.env;
    const npm = opts.npm ?? 'npm';
    const viaNpm = opts.via === 'npm' || (opts.via !== 'https' && npmRuns(npm, env));
    let tgz: string;
    if (viaNpm) {
      report({ phase: 'download', message: `npm pack ${entry.package}@${entry.version} (${mib(entry.tarballBytes)})`, received: 0, total: entry.tarballBytes });
      const packDir = join(work, 'pack');
      mkdirSync(packDir);
      tgz = await npmPack(entry.package, entry.version, packDir, { registry, npm, env, ...(opts.signal ? { signal: opts.signal } : {}) });
    } else {
      tgz = join(work, 'package.tgz');
      report({ phase: 'download', message: `downloading ${dist.tarball}`, received: 0, total: entry.tarballBytes });
      await downloadFile(dist.tarball, tgz, {
        ...(opts.signal ? { signal: opts.signal } : {}),
        onProgress: (received, total) => report({ phase: 'download', message: 'downloading', received, total: total ?? entry.tarballBytes }),
      });
    }

    report({ phase: 'verify', message: 'checking the tarball against the published integrity' });
    const sri = await sriOf(tgz);
    if (sri !== dist.integrity) {
      throw new Error(`the downloaded ${entry.package}@${entry.version} tarball has integrity ${sri}, the registry and the pin say ${dist.integrity}`);
    }
    if (opts.signal?.aborted) throw new Error('cancelled');

    report({ phase: 'unpack', message: `unpacking ${entry.file}` });
    const out = join(work, 'out');
    mkdirSync(out);
    await untar({ file: tgz, cwd: work, strict: true, filter: (p) => p === entry.file });
    const unpacked = join(work, entry.file);
    if (!existsSync(unpacked)) throw new Error(`${entry.package}@${entry.version} has no ${entry.file}`);
    const sha256 = await sha256Of(unpacked);
    if (sha256 !== entry.sha256) {
      throw new Error(`${entry.file} of ${entry.package}@${entry.version} has sha256 ${sha256}, native/pin.json records ${entry.sha256}`);
    }
    renameSync(unpacked, join(out, entry.library));
    const dir = join(store, kind);
    const installed: InstalledBackend = {
      kind, package: entry.package, version: entry.version, llamaCommit: pin.llamaCommit, library: entry.library,
      sha256, integrity: sri, bytes: statSync(join(out, entry.library)).size, dir, path: join(dir, entry.library),
      installedAt: new Date().toISOString(), via: viaNpm ? 'npm' : 'https',
    };
    writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(installed, null, 2)}\n`);
    if (opts.signal?.aborted) throw new Error('cancelled');
    // Publish: the old folder (a damaged install) goes first; engines map the library they loaded, so removing it is safe.
    rmSync(dir, { recursive: true, force: true });
    renameSync(out, dir);
    report({ phase: 'done', message: `installed ${entry.library} (${entry.package}@${entry.version}, sha256 ${sha256.slice(0, 12)}…) in ${dir}` });
    return installed;
  } finally {
    rmSync(work, { recursive: true, force: true });
    unlock();
    for (const f of readdirSafe(store)) {
      // Leftovers of installs that were killed (their process is gone).
      const m = /^\.tmp-[a-z-]+-(\d+)-/.exec(f);
      if (m && !processExists(Number(m[1]))) rmSync(join(store, f), { recursive: true, force: true });
    }
  }
}

function readdirSafe(dir: string): string[] {
  try { return readdirSync(dir); } catch { return []; }
}

function mib(bytes: number): string {
  return `${Math.round(bytes / 2 ** 20)} MiB`;
}
