// A stand-in for the Hugging Face Hub on 127.0.0.1, as `strata pull` talks to it: the file list
// (GET /api/models/ORG/REPO/tree/main[/FOLDER][?recursive=true]), and /ORG/REPO/resolve/main/PATH
// answering an LFS file with a redirect to a "CDN" on another port that carries its sha256
// (x-linked-etag) and size, as the Hub does. The CDN serves Range requests and can be told to
// cut a download part-way (the connection destroyed after some bytes), or to hold one part-way
// until released. Every request is recorded.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

export interface HubFileSpec {
  path: string;
  body: Buffer;
  lfs?: boolean;
  /** The size the listing claims, when not the body's (a file listed as huge, never downloaded). */
  listedSize?: number;
}

export interface RecordedRequest { server: 'hub' | 'cdn'; url: string; headers: IncomingHttpHeaders }

export class FakeHub {
  readonly requests: RecordedRequest[] = [];
  /** Cut the next N CDN responses after this many body bytes. */
  cut: { after: number; times: number } | null = null;
  /** A Hub that ignores ?recursive (lists one folder level per request). */
  ignoreRecursive = false;
  /** The next CDN response stops after `after` body bytes until released (a download under way, held still). */
  private hold: { after: number; reached: () => void; release: Promise<void> } | null = null;
  /** Files whose published sha256 (listing and x-linked-etag) is wrong. */
  readonly wrongSha = new Set<string>();
  /** Status answered for a repository's listing and files (401, 404, …) instead of its content. */
  readonly statusOf = new Map<string, number>();
  private readonly repos = new Map<string, HubFileSpec[]>();
  private hub!: Server;
  private cdn!: Server;
  endpoint = '';
  private cdnBase = '';

  static async start(): Promise<FakeHub> {
    const h = new FakeHub();
    h.hub = createServer((req, res) => h.onHub(req.url ?? '/', req.headers, res));
    h.cdn = createServer((req, res) => h.onCdn(req.url ?? '/', req.headers, res));
    h.endpoint = await listen(h.hub);
    h.cdnBase = await listen(h.cdn);
    return h;
  }

  addRepo(repo: string, files: HubFileSpec[]): void { this.repos.set(repo, files); }

  /** Holds the next download after `after` bytes: `reached` resolves once they are sent, `release()` sends the rest. */
  holdNext(after: number): { reached: Promise<void>; release(): void } {
    let reached!: () => void;
    let release!: () => void;
    const out = { reached: new Promise<void>((r) => { reached = r; }), release: () => release() };
    this.hold = { after, reached, release: new Promise<void>((r) => { release = r; }) };
    return out;
  }

  /** The Range headers the CDN was asked with, in order. */
  rangesAsked(): string[] { return this.requests.filter((r) => r.server === 'cdn' && r.headers.range).map((r) => String(r.headers.range)); }

  async close(): Promise<void> {
    for (const s of [this.hub, this.cdn]) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }

  private sha(f: HubFileSpec): string {
    return this.wrongSha.has(f.path) ? 'f'.repeat(64) : createHash('sha256').update(f.body).digest('hex');
  }

  private onHub(url: string, headers: IncomingHttpHeaders, res: ServerResponse): void {
    this.requests.push({ server: 'hub', url, headers });
    const u = new URL(url, 'http://x');
    const tree = /^\/api\/models\/([^/]+\/[^/]+)\/tree\/main(?:\/(.*))?$/.exec(u.pathname);
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/main\/(.+)$/.exec(u.pathname);
    const repo = tree?.[1] ?? resolve?.[1];
    const files = repo ? this.repos.get(repo) : undefined;
    const status = repo ? this.statusOf.get(repo) : undefined;
    if (status) { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `status ${status}` })); return; }
    if (!files) { res.writeHead(404).end(JSON.stringify({ error: 'Repository not found' })); return; }
    if (tree) {
      const folder = tree[2] ? decodeURIComponent(tree[2]) : '';
      const recursive = u.searchParams.get('recursive') === 'true' && !this.ignoreRecursive;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.listing(files, folder, recursive)));
      return;
    }
    const path = decodeURIComponent(resolve![2]!);
    const f = files.find((x) => x.path === path);
    if (!f) { res.writeHead(404).end('Entry not found'); return; }
    if (f.lfs === false) { this.send(f, headers, res, 'hub'); return; }
    res.writeHead(302, {
      location: `${this.cdnBase}/cdn/${repo}/${encodeURIComponent(path)}`,
      'x-linked-etag': `"${this.sha(f)}"`, 'x-linked-size': String(f.body.length),
    }).end();
  }

  private listing(files: HubFileSpec[], folder: string, recursive: boolean): unknown[] {
    const prefix = folder ? `${folder}/` : '';
    const out: unknown[] = [];
    const dirs = new Set<string>();
    for (const f of files) {
      if (!f.path.startsWith(prefix)) continue;
      const rest = f.path.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash >= 0) {
        dirs.add(prefix + rest.slice(0, slash));
        if (!recursive) continue;
      }
      out.push({
        type: 'file', path: f.path, size: f.listedSize ?? f.body.length, oid: createHash('sha1').update(f.body).digest('hex'),
        ...(f.lfs === false ? {} : { lfs: { oid: this.sha(f), size: f.listedSize ?? f.body.length, pointerSize: 134 } }),
      });
    }
    return [...[...dirs].map((d) => ({ type: 'directory', path: d, oid: '0'.repeat(40), size: 0 })), ...out];
  }

  private onCdn(url: string, headers: IncomingHttpHeaders, res: ServerResponse): void {
    this.requests.push({ server: 'cdn', url, headers });
    const m = /^\/cdn\/([^/]+\/[^/]+)\/(.+)$/.exec(url);
    const f = m ? this.repos.get(m[1]!)?.find((x) => x.path === decodeURIComponent(m[2]!)) : undefined;
    if (!f) { res.writeHead(404).end(); return; }
    this.send(f, headers, res, 'cdn');
  }

  private send(f: HubFileSpec, headers: IncomingHttpHeaders, res: ServerResponse, server: 'hub' | 'cdn'): void {
    const range = /^bytes=(\d+)-$/.exec(String(headers.range ?? ''));
    const start = range ? Number(range[1]) : 0;
    if (start >= f.body.length && range) { res.writeHead(416).end(); return; }
    res.writeHead(range ? 206 : 200, {
      'content-length': String(f.body.length - start),
      ...(range ? { 'content-range': `bytes ${start}-${f.body.length - 1}/${f.body.length}` } : {}),
      ...(server === 'hub' ? { etag: `"${createHash('sha1').update(f.body).digest('hex')}"` } : {}),
    });
    const rest = f.body.subarray(start);
    if (this.cut && this.cut.times > 0 && server === 'cdn') {
      this.cut.times--;
      // Part of the body, then the connection dies: the client sees a transfer broken off.
      res.write(rest.subarray(0, this.cut.after), () => res.socket?.destroy());
      return;
    }
    const hold = server === 'cdn' ? this.hold : null;
    if (hold) {
      this.hold = null;
      res.write(rest.subarray(0, hold.after), () => hold.reached());
      void hold.release.then(() => res.end(rest.subarray(hold.after)));
      return;
    }
    res.end(rest);
  }
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    resolve(`http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`);
  }));
}
