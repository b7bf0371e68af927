import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadFile, downloadModel, resolveModelUrl, sha256FromEtag } from '../../common/hub/download.js';

const body = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7) % 251));
const sha = createHash('sha256').update(body).digest('hex');

/** Like Hugging Face: /resolve/ redirects to a "CDN" path, with the LFS sha256 on the redirect. */
let server: Server;
let base = '';
const seen: IncomingHttpHeaders[] = [];
let stallAfter: number | null = null;
let badSha = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    if (req.url!.startsWith('/endless/')) { endless(res); return; }
    if (req.url!.includes('/resolve/')) {
      res.writeHead(302, { location: '/cdn/model.gguf', 'x-linked-etag': `"${badSha ? '0'.repeat(64) : sha}"`, 'x-linked-size': String(body.length) });
      res.end();
      return;
    }
    const m = /bytes=(\d+)-/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    if (start >= body.length) { res.writeHead(416); res.end(); return; }
    res.writeHead(m ? 206 : 200, {
      'content-length': String(body.length - start),
      ...(m ? { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } : {}),
    });
    if (stallAfter !== null) {
      res.write(body.subarray(start, start + stallAfter)); // then hang: the test cancels
      return;
    }
    res.end(body.subarray(start));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => { server.closeAllConnections(); server.close(); });

/** A CDN that streams 20 MiB whatever the listing said, a MiB at a time as the client takes it. */
function endless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  const mib = Buffer.alloc(2 ** 20, 7);
  let sent = 0;
  const more = (): void => {
    while (sent < 20 && !res.destroyed) {
      sent++;
      if (sent === 20) { res.end(mib); return; }
      if (!res.write(mib)) { res.once('drain', more); return; }
    }
  };
  more();
}

const url = (): string => `${base}/org/repo/resolve/main/model.gguf`;

describe('resolveModelUrl', () => {
  it('turns a blob page URL into a download URL and refuses non-GGUF or plain http', () => {
    expect(resolveModelUrl('https://huggingface.co/o/r/blob/main/sub/m-Q4.gguf')).toEqual({ url: 'https://huggingface.co/o/r/resolve/main/sub/m-Q4.gguf?download=true', filename: 'm-Q4.gguf' });
    expect(resolveModelUrl('https://hf.co/o/r/resolve/main/x.gguf').url).toBe('https://huggingface.co/o/r/resolve/main/x.gguf?download=true');
    expect(() => resolveModelUrl('https://huggingface.co/o/r/resolve/main/README.md')).toThrow(/does not name a .gguf file/);
    expect(() => resolveModelUrl('http://huggingface.co/o/r/resolve/main/x.gguf')).toThrow(/only https/);
    expect(() => resolveModelUrl('not a url')).toThrow(/is not a URL/);
  });
  it('reads a sha256 from an ETag only when it is one', () => {
    expect(sha256FromEtag(`"${sha}"`)).toBe(sha);
    expect(sha256FromEtag('"abc"')).toBeNull();
  });
});

describe('downloadModel', () => {
  it('downloads through the redirect and verifies the sha256', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-dl-'));
    const progress: number[] = [];
    const r = await downloadModel({ url: url(), destDir: dir, signal: new AbortController().signal, allowHttp: true, onProgress: (n) => progress.push(n) });
    expect(r).toMatchObject({ bytes: body.length, sha256: sha, verified: true, resumedFrom: 0 });
    expect(readFileSync(join(dir, 'model.gguf')).equals(body)).toBe(true);
    expect(existsSync(join(dir, 'model.gguf.part'))).toBe(false);
    expect(progress.at(-1)).toBe(body.length);
    const again = await downloadModel({ url: url(), destDir: dir, signal: new AbortController().signal, allowHttp: true });
    expect(again.alreadyPresent).toBe(true);
  });

  it('resumes a partial download with a Range request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-dl-'));
    writeFileSync(join(dir, 'model.gguf.part'), body.subarray(0, 70_000));
    seen.length = 0;
    const r = await downloadModel({ url: url(), destDir: dir, signal: new AbortController().signal, allowHttp: true });
    expect(r).toMatchObject({ resumedFrom: 70_000, verified: true });
    expect(seen.at(-1)!.range).toBe('bytes=70000-');
    expect(readFileSync(r.path).equals(body)).toBe(true);
  });

  it('cancel keeps the .part file, and a later call finishes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-dl-'));
    const ac = new AbortController();
    stallAfter = 50_000;
    try {
      const p = downloadModel({ url: url(), destDir: dir, signal: ac.signal, allowHttp: true, onProgress: (n) => { if (n >= 50_000) ac.abort(); } });
      await expect(p).rejects.toThrow(/download cancelled; 50000 bytes kept/);
    } finally {
      stallAfter = null;
    }
    expect(statSync(join(dir, 'model.gguf.part')).size).toBe(50_000);
    const r = await downloadModel({ url: url(), destDir: dir, signal: new AbortController().signal, allowHttp: true });
    expect(r).toMatchObject({ resumedFrom: 50_000, verified: true });
  });

  it('a checksum mismatch removes the file and says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-dl-'));
    badSha = true;
    try {
      await expect(downloadModel({ url: url(), destDir: dir, signal: new AbortController().signal, allowHttp: true }))
        .rejects.toThrow(/checksum mismatch: expected sha256 0{64}/);
    } finally {
      badSha = false;
    }
    expect(existsSync(join(dir, 'model.gguf.part'))).toBe(false);
    expect(existsSync(join(dir, 'model.gguf'))).toBe(false);
  });
});

describe('downloadFile', () => {
  it('stops a transfer once it passes the size the listing gave, names the file and both sizes, and keeps nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-dl-'));
    const dest = join(dir, 'model.gguf');
    let most = 0;
    const p = downloadFile({ url: `${base}/endless/model.gguf`, dest, signal: new AbortController().signal, expectedSize: 1004, onProgress: (n) => { most = Math.max(most, n); } });
    await expect(p).rejects.toThrow(/model\.gguf came to at least \d+ bytes, more than the 1004 bytes expected/);
    // Written at most up to the size expected, not the 20 MiB sent.
    expect(most).toBeLessThan(2 * 2 ** 20);
    expect(existsSync(`${dest}.part`)).toBe(false);
    expect(existsSync(dest)).toBe(false);
  });
});
