// Downloads a GGUF model from a Hugging Face URL (only when the user asks): resumes a partial
// download through an HTTP Range request into a .part file, verifies the sha256 that Hugging
// Face reports for LFS files (x-linked-etag), and can be cancelled. Node only, no vscode.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { once } from 'node:events';
import { join } from 'node:path';

export interface DownloadOptions {
  url: string;
  destDir: string;
  signal: AbortSignal;
  onProgress?: (received: number, total: number | null) => void;
  /** Tests only: accept http:// (a local server). */
  allowHttp?: boolean;
}

export interface DownloadResult {
  path: string;
  bytes: number;
  sha256: string | null;
  /** The checksum was known and matched. */
  verified: boolean;
  resumedFrom: number;
  alreadyPresent: boolean;
}

export class DownloadError extends Error {}

/** https://huggingface.co/ORG/REPO/{resolve|blob}/REV/path/file.gguf -> the download URL and file name. */
export function resolveModelUrl(input: string, allowHttp = false): { url: string; filename: string } {
  let u: URL;
  try { u = new URL(input.trim()); } catch { throw new DownloadError(`'${input}' is not a URL`); }
  if (u.protocol !== 'https:' && !(allowHttp && u.protocol === 'http:')) throw new DownloadError('only https:// URLs are downloaded');
  if (u.hostname === 'hf.co') u.hostname = 'huggingface.co';
  if (u.hostname === 'huggingface.co') u.pathname = u.pathname.replace(/^(\/[^/]+\/[^/]+)\/blob\//, '$1/resolve/');
  const filename = decodeURIComponent(u.pathname.split('/').pop() ?? '');
  if (!/\.gguf$/i.test(filename)) throw new DownloadError(`the URL does not name a .gguf file (${filename || 'no file name'})`);
  if (/[\\/]|^\.\.?$/.test(filename)) throw new DownloadError(`bad file name '${filename}'`);
  u.searchParams.set('download', 'true');
  return { url: u.toString(), filename };
}

/** The sha256 in an ETag / x-linked-etag header, when it is one. */
export function sha256FromEtag(v: string | string[] | undefined): string | null {
  const s = Array.isArray(v) ? v[0] : v;
  const m = /^(?:W\/)?"?([0-9a-f]{64})"?$/i.exec((s ?? '').trim());
  return m ? m[1]!.toLowerCase() : null;
}

function get(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(url, { headers: { 'user-agent': 'strata-vscode', ...headers }, signal }, resolve);
    req.on('error', reject);
  });
}

export async function downloadModel(opts: DownloadOptions): Promise<DownloadResult> {
  const { url, filename } = resolveModelUrl(opts.url, opts.allowHttp);
  mkdirSync(opts.destDir, { recursive: true });
  const dest = join(opts.destDir, filename);
  if (existsSync(dest)) return { path: dest, bytes: statSync(dest).size, sha256: null, verified: false, resumedFrom: 0, alreadyPresent: true };
  const part = `${dest}.part`;
  let have = existsSync(part) ? statSync(part).size : 0;
  const resumedFrom = have;

  let expectedSha: string | null = null;
  let expectedSize: number | null = null;
  let res: http.IncomingMessage | undefined;
  let current = url;
  try {
    for (let hop = 0; ; hop++) {
      if (hop > 10) throw new DownloadError('too many redirects');
      res = await get(current, have > 0 ? { range: `bytes=${have}-` } : {}, opts.signal);
      // Hugging Face puts the LFS file's sha256 and size on its redirect to the CDN.
      expectedSha ??= sha256FromEtag(res.headers['x-linked-etag']);
      const linkedSize = Number(res.headers['x-linked-size']);
      if (expectedSize === null && Number.isFinite(linkedSize) && linkedSize > 0) expectedSize = linkedSize;
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        current = new URL(res.headers.location, current).toString();
        continue;
      }
      break;
    }
    const status = res.statusCode ?? 0;
    if (status === 416 && have > 0) {
      // The .part already holds everything (or is longer than the file): verify it below.
      res.resume();
    } else if (status === 200 || status === 206) {
      if (status === 200) have = 0; // server ignored the range: start over
      else {
        const start = Number(/bytes (\d+)-/.exec(String(res.headers['content-range'] ?? ''))?.[1]);
        if (start !== have) throw new DownloadError(`the server resumed at byte ${start}, expected ${have}`);
      }
      expectedSha ??= sha256FromEtag(res.headers.etag);
      const len = Number(res.headers['content-length']);
      if (expectedSize === null && Number.isFinite(len)) expectedSize = have + len;
      let received = have;
      opts.onProgress?.(received, expectedSize);
      const out = createWriteStream(part, { flags: have > 0 ? 'a' : 'w', mode: 0o644 });
      try {
        // Aborting destroys the response (the signal is on the request), which ends this loop.
        for await (const chunk of res as AsyncIterable<Buffer>) {
          if (!out.write(chunk)) await once(out, 'drain');
          received += chunk.length;
          opts.onProgress?.(received, expectedSize);
        }
      } finally {
        // Everything received reaches the .part file, also on cancel, so a resume continues from it.
        await new Promise<void>((resolve) => out.end(resolve));
      }
    } else {
      res.resume();
      const hint = status === 401 || status === 403 ? ' (the model may be gated: download it in a browser and choose the file instead)' : '';
      throw new DownloadError(`the server answered ${status} for ${current}${hint}`);
    }
  } catch (err) {
    res?.destroy();
    if (opts.signal.aborted) throw new DownloadError(`download cancelled; ${existsSync(part) ? statSync(part).size : 0} bytes kept in ${part} to resume later`);
    throw err instanceof DownloadError ? err : new DownloadError(`download failed: ${(err as Error).message}`);
  }

  const size = statSync(part).size;
  if (expectedSize !== null && size !== expectedSize) {
    if (size > expectedSize) unlinkSync(part);
    throw new DownloadError(`download incomplete: ${size} of ${expectedSize} bytes${size > expectedSize ? ' (partial file removed)' : '; run it again to resume'}`);
  }
  const sha = await sha256File(part);
  if (expectedSha && sha !== expectedSha) {
    unlinkSync(part);
    throw new DownloadError(`checksum mismatch: expected sha256 ${expectedSha}, got ${sha}; the file was removed`);
  }
  renameSync(part, dest);
  return { path: dest, bytes: size, sha256: sha, verified: expectedSha !== null, resumedFrom, alreadyPresent: false };
}

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}
