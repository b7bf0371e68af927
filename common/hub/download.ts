// Downloads one file over HTTP(S) into place, the way model files need it: into a .part file that
// a later call resumes with a Range request, checked against the sha256 the Hugging Face Hub
// publishes for LFS files (the listing's LFS oid, or the x-linked-etag on its redirect), and
// renamed to its final name only once it is complete and verified. Cancellable through an
// AbortSignal. Node only: `strata pull`, `strata serve --model hf:…` and the extension share it.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { once } from 'node:events';
import { basename, dirname, join } from 'node:path';

export interface FileDownloadOptions {
  url: string;
  /** The final path; the download goes to `${dest}.part` until it is complete and verified. */
  dest: string;
  signal: AbortSignal;
  /** Sent with the first request only: a redirect to another origin (the Hub's CDN) does not get them. */
  headers?: Record<string, string>;
  /** From a listing (the Hub's LFS oid and size); else taken from the response headers when they carry one. */
  expectedSha256?: string | null;
  expectedSize?: number | null;
  onProgress?: (received: number, total: number | null) => void;
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

export class DownloadError extends Error {
  /** The transfer broke off (network): the .part file holds what arrived, and a retry resumes it. */
  constructor(message: string, readonly resumable = false) { super(message); }
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

/** Follows redirects; the caller's headers go to the first origin only (a token must not reach a CDN). */
async function fetchFollowing(url: string, headers: Record<string, string>, range: number, signal: AbortSignal): Promise<{ res: http.IncomingMessage; url: string; linkedSha: string | null; linkedSize: number | null }> {
  const origin = new URL(url).origin;
  let current = url;
  let linkedSha: string | null = null;
  let linkedSize: number | null = null;
  for (let hop = 0; hop <= 10; hop++) {
    const sameOrigin = new URL(current).origin === origin;
    const res = await get(current, { ...(sameOrigin ? headers : {}), ...(range > 0 ? { range: `bytes=${range}-` } : {}) }, signal);
    // The Hub puts the LFS file's sha256 and size on its redirect to the CDN.
    linkedSha ??= sha256FromEtag(res.headers['x-linked-etag']);
    const size = Number(res.headers['x-linked-size']);
    if (linkedSize === null && Number.isFinite(size) && size > 0) linkedSize = size;
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      current = new URL(res.headers.location, current).toString();
      continue;
    }
    return { res, url: current, linkedSha, linkedSize };
  }
  throw new DownloadError('too many redirects');
}

export async function downloadFile(opts: FileDownloadOptions): Promise<DownloadResult> {
  const { dest } = opts;
  mkdirSync(dirname(dest), { recursive: true });
  if (existsSync(dest)) return { path: dest, bytes: statSync(dest).size, sha256: null, verified: false, resumedFrom: 0, alreadyPresent: true };
  const part = `${dest}.part`;
  let have = existsSync(part) ? statSync(part).size : 0;
  const resumedFrom = have;

  let expectedSha = opts.expectedSha256?.toLowerCase() ?? null;
  let expectedSize = opts.expectedSize ?? null;
  let res: http.IncomingMessage | undefined;
  let tooLong = false;
  try {
    const got = await fetchFollowing(opts.url, opts.headers ?? {}, have, opts.signal);
    res = got.res;
    expectedSha ??= got.linkedSha;
    expectedSize ??= got.linkedSize;
    const status = res.statusCode ?? 0;
    if (status === 416 && have > 0) {
      // The .part already holds everything (or is longer than the file): verified below.
      res.resume();
    } else if (status === 200 || status === 206) {
      if (status === 200) have = 0; // the server ignored the range: start over
      else {
        const start = Number(/bytes (\d+)-/.exec(String(res.headers['content-range'] ?? ''))?.[1]);
        if (start !== have) throw new DownloadError(`the server resumed at byte ${start}, expected ${have}`);
      }
      expectedSha ??= sha256FromEtag(res.headers.etag);
      const len = Number(res.headers['content-length']);
      if (expectedSize === null && res.headers['content-length'] !== undefined && Number.isFinite(len)) expectedSize = have + len;
      let received = have;
      opts.onProgress?.(received, expectedSize);
      const out = createWriteStream(part, { flags: have > 0 ? 'a' : 'w', mode: 0o644 });
      try {
        // Aborting destroys the response (the signal is on the request), which ends this loop.
        for await (const chunk of res as AsyncIterable<Buffer>) {
          // A server sending more than the listing said is cut at once, not written to the end.
          if (expectedSize !== null && received + chunk.length > expectedSize) {
            tooLong = true;
            throw new DownloadError(longerThanExpected(dest, received + chunk.length, expectedSize, 'at least '));
          }
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
      throw new DownloadError(statusMessage(status, got.url));
    }
  } catch (err) {
    res?.destroy();
    if (tooLong && existsSync(part)) unlinkSync(part);
    const kept = existsSync(part) ? statSync(part).size : 0;
    if (opts.signal.aborted) throw new DownloadError(`download cancelled; ${kept} bytes kept in ${part} to resume later`);
    if (err instanceof DownloadError) throw err;
    throw new DownloadError(`download failed: ${(err as Error).message}; ${kept} bytes kept in ${part}, run it again to resume`, true);
  }

  const size = statSync(part).size;
  if (expectedSize !== null && size !== expectedSize) {
    if (size > expectedSize) {
      unlinkSync(part);
      throw new DownloadError(longerThanExpected(dest, size, expectedSize, ''));
    }
    throw new DownloadError(`download incomplete: ${size} of ${expectedSize} bytes; run it again to resume`, true);
  }
  const sha = await sha256File(part);
  if (expectedSha && sha !== expectedSha) {
    unlinkSync(part);
    throw new DownloadError(`checksum mismatch: expected sha256 ${expectedSha}, got ${sha}; the file was removed`);
  }
  renameSync(part, dest);
  return { path: dest, bytes: size, sha256: sha, verified: expectedSha !== null, resumedFrom, alreadyPresent: false };
}

function longerThanExpected(dest: string, got: number, expected: number, atLeast: string): string {
  return `download longer than expected: ${basename(dest)} came to ${atLeast}${got} bytes, more than the ${expected} bytes expected (partial file removed)`;
}

function statusMessage(status: number, url: string): string {
  if (status === 401 || status === 403) return `the server answered ${status} for ${url}: the model is gated or private; set HF_TOKEN to a token with access (or download it in a browser and choose the file)`;
  if (status === 404) return `the server answered 404 for ${url}: no such file`;
  return `the server answered ${status} for ${url}`;
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

// --- a model from a pasted Hub URL (the extension's "Download from a Hugging Face URL…") -------

export interface DownloadOptions {
  url: string;
  destDir: string;
  signal: AbortSignal;
  onProgress?: (received: number, total: number | null) => void;
  /** Tests only: accept http:// (a local server). */
  allowHttp?: boolean;
}

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

export function downloadModel(opts: DownloadOptions): Promise<DownloadResult> {
  const { url, filename } = resolveModelUrl(opts.url, opts.allowHttp);
  return downloadFile({ url, dest: join(opts.destDir, filename), signal: opts.signal, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
}
