// A local npm registry (real HTTP server) serving one generated package shaped like
// @node-llama-cpp/linux-x64-vulkan@3.21.1: its version document, its packument (for npm pack)
// and its tarball, with switches to lie about the integrity or to stall mid-download. The pin
// that matches it is returned beside it, so installer tests never touch the network.
import { mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { c as tarCreate } from 'tar';
import { PIN, type Pin } from '../../backend/gpu-backends/pin.js';

export interface FakeRegistry {
  url: string;
  /** PIN with the vulkan entry matching the served package. */
  pin: Pin;
  /** The served library's bytes. */
  library: Buffer;
  /** Paths requested, in order. */
  requests: string[];
  /** What the version document claims as dist.integrity (default: the tarball's real one). */
  claimIntegrity: string;
  /** Serve only this many tarball bytes, then hold the connection open (default: all). */
  stallAfter: number | null;
  /** Serve these bytes instead of the tarball (same length or not). */
  replaceTarball: Buffer | null;
  /** Resolves when the next stalled download has sent its bytes. */
  nextStall(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeRegistry(): Promise<FakeRegistry> {
  const entry = PIN.gpuBackends.vulkan;
  const work = mkdtempSync(join(tmpdir(), 'strata-fake-registry-'));
  const library = randomBytes(256 * 1024);
  mkdirSync(join(work, dirname(entry.file)), { recursive: true });
  writeFileSync(join(work, entry.file), library);
  writeFileSync(join(work, 'package', 'package.json'), JSON.stringify({ name: entry.package, version: entry.version }));
  const tgzPath = join(work, 'pkg.tgz');
  await tarCreate({ gzip: true, file: tgzPath, cwd: work, portable: true }, ['package']);
  const tgz = readFileSync(tgzPath);
  rmSync(work, { recursive: true, force: true });
  const integrity = `sha512-${createHash('sha512').update(tgz).digest('base64')}`;
  const pin: Pin = JSON.parse(JSON.stringify(PIN)) as Pin;
  pin.gpuBackends.vulkan = { ...entry, integrity, tarballBytes: tgz.length, sha256: createHash('sha256').update(library).digest('hex') };

  const stallWaiters: Array<() => void> = [];
  const markStalled = (): void => { for (const w of stallWaiters.splice(0)) w(); };
  const reg: FakeRegistry = {
    url: '', pin, library, requests: [], claimIntegrity: integrity, stallAfter: null, replaceTarball: null,
    nextStall: () => new Promise<void>((r) => { stallWaiters.push(r); }),
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
  const name = entry.package.replace('/', '%2f');
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    reg.requests.push(path);
    const tarball = `${reg.url}/tarballs/linux-x64-vulkan-${entry.version}.tgz`;
    const versionDoc = () => ({
      name: entry.package, version: entry.version,
      dist: { integrity: reg.claimIntegrity, tarball, shasum: createHash('sha1').update(tgz).digest('hex') },
    });
    if (path === `/${name}/${entry.version}`) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(versionDoc()));
    } else if (path === `/${name}`) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ name: entry.package, 'dist-tags': { latest: entry.version }, versions: { [entry.version]: versionDoc() } }));
    } else if (path.startsWith('/tarballs/')) {
      const body = reg.replaceTarball ?? tgz;
      res.setHeader('content-type', 'application/octet-stream');
      res.setHeader('content-length', String(body.length));
      if (reg.stallAfter === null) { res.end(body); return; }
      res.write(body.subarray(0, reg.stallAfter), () => markStalled());
    } else {
      res.statusCode = 404;
      res.end('{"error":"not found"}');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  reg.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return reg;
}
