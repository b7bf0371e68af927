// Fetching one exact package version from an npm registry: its published dist (integrity and
// tarball URL), then the tarball, with `npm pack` where npm exists (npm checks the integrity it
// publishes) or over HTTP(S) with node's fetch (the extension host has no npm). Either way the
// caller checks the file against the registry's integrity and the pin before using it.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export const DEFAULT_REGISTRY = 'https://registry.npmjs.org';

/** The registry npm itself would use here (npm_config_registry), else the public one. */
export function registryUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.npm_config_registry || env.NPM_CONFIG_REGISTRY || DEFAULT_REGISTRY).replace(/\/+$/, '');
}

export interface PackageDist {
  integrity: string;
  tarball: string;
}

/** GET <registry>/<name>/<version>: the version's document; its dist says what was published. */
export async function fetchDist(registry: string, name: string, version: string, signal?: AbortSignal): Promise<PackageDist> {
  const url = `${registry}/${name.replace('/', '%2f')}/${encodeURIComponent(version)}`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: signal ?? null });
  } catch (err) {
    if (signal?.aborted) throw new Error('cancelled');
    throw new Error(`cannot reach the npm registry at ${registry} for ${name}@${version}: ${causeOf(err)}`);
  }
  if (!res.ok) throw new Error(`the npm registry answered ${res.status} for ${name}@${version} (${url})`);
  const doc = await res.json().catch(() => null) as { version?: unknown; dist?: { integrity?: unknown; tarball?: unknown } } | null;
  const integrity = doc?.dist?.integrity;
  const tarball = doc?.dist?.tarball;
  if (doc?.version !== version || typeof integrity !== 'string' || typeof tarball !== 'string') {
    throw new Error(`the npm registry's document for ${name}@${version} has no dist.integrity / dist.tarball`);
  }
  return { integrity, tarball };
}

/** Downloads `url` to `dest`, reporting bytes; rejects with 'cancelled' when `signal` aborts. */
export async function downloadFile(url: string, dest: string, opts: {
  signal?: AbortSignal; onProgress?: (received: number, total: number | null) => void;
} = {}): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { signal: opts.signal ?? null, redirect: 'follow' });
  } catch (err) {
    if (opts.signal?.aborted) throw new Error('cancelled');
    throw new Error(`cannot download ${url}: ${causeOf(err)}`);
  }
  if (!res.ok || !res.body) throw new Error(`download of ${url} failed: HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length')) || null;
  let received = 0;
  const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
  body.on('data', (chunk: Buffer) => {
    received += chunk.length;
    opts.onProgress?.(received, total);
  });
  try {
    await pipeline(body, createWriteStream(dest, { mode: 0o600 }), { signal: opts.signal });
  } catch (err) {
    if (opts.signal?.aborted) throw new Error('cancelled');
    throw new Error(`download of ${url} failed: ${causeOf(err)}`);
  }
}

/** `npm pack name@version` into `destDir`; resolves with the tarball's path. */
export function npmPack(name: string, version: string, destDir: string, opts: {
  registry: string; npm?: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal;
}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(opts.npm ?? 'npm', ['pack', `${name}@${version}`, '--pack-destination', destDir, '--registry', opts.registry, '--silent'], {
      cwd: destDir, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => { err = (err + d).slice(-2000); });
    const onAbort = (): void => { child.kill('SIGTERM'); };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => reject(new Error(`cannot run npm: ${e.message}`)));
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) { reject(new Error('cancelled')); return; }
      const tgz = readdirSync(destDir).find((f) => f.endsWith('.tgz'));
      if (code === 0 && tgz) resolve(join(destDir, tgz));
      else reject(new Error(`npm pack ${name}@${version} failed (exit ${code}): ${err.trim().split('\n').slice(-3).join(' ') || 'no output'}`));
    });
  });
}

/** The Subresource Integrity string (sha512, base64) of a file, as npm publishes it. */
export async function sriOf(path: string): Promise<string> {
  return `sha512-${await digestOf(path, 'sha512', 'base64')}`;
}

export function sha256Of(path: string): Promise<string> {
  return digestOf(path, 'sha256', 'hex');
}

async function digestOf(path: string, algorithm: string, encoding: 'hex' | 'base64'): Promise<string> {
  const h = createHash(algorithm);
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest(encoding);
}

function causeOf(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string; code?: string } };
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
