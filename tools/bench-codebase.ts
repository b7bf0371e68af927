// npm run bench:codebase [-- options]: the codebase index measured against real servers.
//   1. Indexing a source tree (default: the pinned llama.cpp source npm install fetched) through a
//      real `strata serve` on an embedding model: files, chunks, wall time, chunks/s, store size.
//   2. Strata's /v1/embeddings vs llama-server's on the same model and texts (--vs-llama-server).
//   3. Chat TTFT p50/p95 idle vs while indexing runs, on one server serving both models.
//   4. Search latency p50/p95 at --search-chunks chunks (hybrid + rerank of the top 50), store size.
//   5. Full-text recall@10: queries made of the comment above known C/C++ functions; a hit is the
//      chunk holding the function's first line.
// Random-weight generated models by default (--embedding-model, --rerank-model, --chat-model take
// real GGUFs): their vectors and rerank scores are noise, so only timings, sizes and full-text
// recall mean something with them.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerProcess } from './bench-compare/launch.js';
import { percentile } from '../backend/bench/stats.js';
import { ensureModel } from '../backend/models/stand-in.js';
import { freePort } from '../common/net/free-port.js';
import { DEFAULT_INDEXER, Indexer, type Embedder } from '../extension/codebase/indexer.js';
import { searchIndex } from '../extension/codebase/search.js';
import { IndexStore, type NewChunk } from '../extension/codebase/store.js';
import { SyntaxParsers } from '../extension/codebase/syntax.js';
import { VectorIndex } from '../extension/codebase/vector-index.js';
import { DEFAULT_EXCLUDES, readText, walk } from '../extension/codebase/walker.js';
import { DEFAULT_CHUNK_OPTIONS } from '../extension/codebase/chunker.js';
import { WorkerChunker } from '../extension/codebase/worker-chunker.js';

interface Opts {
  root: string; files: number; embeddingModel: string | null; rerankModel: string | null; chatModel: string | null;
  vsLlamaServer: boolean; llamaServer: string | null; searchChunks: number; queries: number; chatRequests: number; threads: number; embedThreads: number;
  onlyIndexing: boolean; chunking: 'worker' | 'thread'; hold: boolean;
}

const USAGE = `npm run bench:codebase -- [--root DIR] [--files N] [--search-chunks N] [--queries N] [--chat-requests N]
    [--embedding-model M.gguf] [--rerank-model R.gguf] [--chat-model C.gguf] [--threads T] [--embed-threads E] [--vs-llama-server]
    [--only-indexing] [--chunking worker|thread] [--no-hold]
  --root            tree to index (default: the pinned llama.cpp source under ~/.cache/strata/src)
  --files N         index at most N files of it (default all; a smoke run: 60)
  --search-chunks N chunks in the search-latency store (default 50000)
  --llama-server B  the llama-server binary for --vs-llama-server (default: built from the pinned source)
  --threads T       the chat model's CPU threads (default 2); --embed-threads E the embedding and rerank models' (default T)
  --only-indexing   stop after the indexing and chat TTFT figures (1 and 3)
  --chunking C      where files are parsed and written: worker (default, as the extension: dist/codebase-worker.cjs) or thread (the bench's own)
  --no-hold         the worker does not hold between files while a chat is in flight (the extension does)`;

function parse(argv: string[]): Opts {
  const get = (k: string): string | undefined => { const i = argv.indexOf(`--${k}`); return i >= 0 ? argv[i + 1] : undefined; };
  const num = (k: string, d: number): number => { const v = get(k); return v === undefined ? d : Number(v); };
  return {
    root: get('root') ?? pinnedSource(),
    files: num('files', Infinity), searchChunks: num('search-chunks', 50_000), queries: num('queries', 100), chatRequests: num('chat-requests', 20),
    embeddingModel: get('embedding-model') ?? null, rerankModel: get('rerank-model') ?? null, chatModel: get('chat-model') ?? null,
    onlyIndexing: argv.includes('--only-indexing'), hold: !argv.includes('--no-hold'), chunking: get('chunking') === 'thread' ? 'thread' : 'worker',
    vsLlamaServer: argv.includes('--vs-llama-server') || get('llama-server') !== undefined, llamaServer: get('llama-server') ?? null, threads: num('threads', 2), embedThreads: num('embed-threads', num('threads', 2)),
  };
}

/** The llama.cpp tree npm install fetched (~/.cache/strata/src/llama.cpp-<commit>-p<patches>). */
function pinnedSource(): string {
  const src = join(process.env.STRATA_CACHE_DIR ?? join(homedir(), '.cache', 'strata'), 'src');
  const dir = existsSync(src) ? readdirSync(src).find((d) => d.startsWith('llama.cpp-') && existsSync(join(src, d, '.strata-ready'))) : undefined;
  return dir ? join(src, dir) : join(src, 'llama.cpp-(not fetched)');
}

const log = (m: string): void => { process.stderr.write(`[codebase] ${m}\n`); };

// biome-ignore lint/suspicious/noExplicitAny: the benchmark reads the few fields it needs from the server's JSON
async function post(url: string, path: string, body: unknown): Promise<any> {
  const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = await r.json();
  // Shaped like the extension's StrataApiError: the indexer reads status, code and param (a too-long input).
  if (!r.ok) throw Object.assign(new Error(`${path} ${r.status}: ${j?.error?.message ?? JSON.stringify(j).slice(0, 200)}`), { status: r.status, code: j?.error?.code ?? null, param: j?.error?.param ?? null });
  return j;
}

function embedderFor(url: string, model: string): Embedder {
  return {
    identity: model,
    embed: async (texts) => (await post(url, '/v1/embeddings', { model, input: texts })).data.map((d: { embedding: number[] }) => Float32Array.from(d.embedding)),
  };
}

/** One `strata serve` for every model (a config file: each model's role and threads). */
async function serve(name: string, models: Array<{ name: string; path: string; role: string; threads: number }>, dir: string): Promise<{ url: string; proc: ServerProcess }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = join(dir, `${name}.json`);
  writeFileSync(config, JSON.stringify({ models: models.map((m) => ({ name: m.name, path: m.path, role: m.role, threads: m.threads })) }));
  const args = [join(process.cwd(), 'dist', 'strata.mjs'), 'serve', '--port', String(port), '--slots', '4', '--ctx', '512', '--batch', '2048', '--config', config];
  if (models.length > 1) args.push('--preload', 'all');
  const proc = await ServerProcess.start({ name, command: process.execPath, args, url, logFile: join(dir, `${name}.log`) });
  return { url, proc };
}

/** What the extension's ActivityTracker does for the indexer: resolves once no chat is in flight. */
class Foreground {
  private inFlight = 0;
  private waiters: Array<() => void> = [];
  /** ActivityTracker.onChange: the service holds chunking while busy. */
  onChange: (busy: boolean) => void = () => {};
  begin(): void { if (this.inFlight++ === 0) this.onChange(true); }
  end(): void { if (--this.inFlight === 0) { this.onChange(false); for (const w of this.waiters.splice(0)) w(); } }
  idle(): Promise<void> { return this.inFlight === 0 ? Promise.resolve() : new Promise((r) => this.waiters.push(r)); }
}

function ratioLine(label: string, a: number, b: number, unit: string): string {
  return `${label}: ${a.toFixed(1)} vs ${b.toFixed(1)} ${unit} (ratio ${(a / b).toFixed(3)})`;
}

export async function main(argv: string[], repo: string): Promise<number> {
  if (argv.includes('--help')) { process.stdout.write(`${USAGE}\n`); return 0; }
  const o = parse(argv);
  if (!existsSync(o.root)) throw new Error(`--root ${o.root} does not exist (run npm install, or pass --root)`);
  const work = mkdtempSync(join(tmpdir(), 'strata-bench-codebase-'));
  // Each result line goes out when it is known (a later failure keeps the earlier figures).
  const out = { push: (line: string): void => { process.stdout.write(`${line}\n`); } };
  const procs: ServerProcess[] = [];
  try {
    const embedModel = o.embeddingModel ?? await ensureModel({ vocab: 'bert-bge', shape: 'embed-bert', quant: 'q8_0', seed: 1 });
    const rerankModel = o.rerankModel ?? await ensureModel({ vocab: 'bert-bge', shape: 'rerank-bert', quant: 'q8_0', seed: 1 });
    const chatModel = o.chatModel ?? await ensureModel({ vocab: 'qwen2', shape: 'tiny', quant: 'q8_0', seed: 1 });
    const srv = await serve('strata', [
      { name: 'chat', path: chatModel, role: 'chat', threads: o.threads },
      { name: 'embed', path: embedModel, role: 'embedding', threads: o.embedThreads },
      { name: 'rerank', path: rerankModel, role: 'rerank', threads: o.embedThreads },
    ], work);
    procs.push(srv.proc);
    log(`server ${srv.url}: chat ${chatModel} (${o.threads} threads), embeddings ${embedModel}, reranker ${rerankModel} (${o.embedThreads} threads each)`);

    // 1. Index the tree (a copy of its first --files files when limited).
    const store = IndexStore.open(join(work, 'index.sqlite'));
    const vectors = new VectorIndex();
    const parsers = new SyntaxParsers(join(repo, 'node_modules', '@vscode', 'tree-sitter-wasm', 'wasm'));
    const walked = await walk(o.root, { exclude: [...DEFAULT_EXCLUDES], maxFileBytes: 1 << 20 });
    const limit = Number.isFinite(o.files) ? walked.files.slice(0, o.files).map((f) => f.path) : null;
    // A limited run indexes a copy of those files (an exclude list of thousands of paths would make
    // the walk itself the CPU work that delays the chat requests measured beside it).
    const indexRoot = limit ? join(work, 'tree') : o.root;
    for (const f of limit ?? []) cpSync(join(o.root, f), join(indexRoot, f));
    const exclude = [...DEFAULT_EXCLUDES];
    const embedder = embedderFor(srv.url, 'embed');
    let indexing = true;
    const fg = new Foreground();
    // As the extension: parses and chunk writes in the worker (its own connection to the store).
    const chunker = o.chunking === 'worker'
      ? await WorkerChunker.start(join(repo, 'dist', 'codebase-worker.cjs'), { storePath: store.path, wasmDir: join(repo, 'node_modules', '@vscode', 'tree-sitter-wasm', 'wasm'), chunk: DEFAULT_CHUNK_OPTIONS, maxFileBytes: 1 << 20 }, log)
      : undefined;
    if (chunker && o.hold) fg.onChange = (busy) => chunker.hold(busy);
    const indexer = new Indexer([{ name: 'root', path: indexRoot }], store, vectors, parsers, {
      embedder: async () => embedder, foreground: () => fg.idle(), onProgress: () => {}, log,
    }, { walk: { exclude, maxFileBytes: 1 << 20 }, chunk: DEFAULT_CHUNK_OPTIONS, batch: DEFAULT_INDEXER.batch }, chunker);

    // 3 (idle half): chat TTFT before indexing.
    // Every request asks another question (the same one again would find its whole prompt cached).
    let asked = 0;
    const ttft = async (n: number): Promise<number[]> => {
      const out: number[] = [];
      for (let k = 0; k < n; k++) {
        const i = asked++;
        const t0 = performance.now();
        let first = -1;
        fg.begin();
        try {
          const r = await fetch(`${srv.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'chat', stream: true, max_tokens: 4, temperature: 0, messages: [{ role: 'user', content: `question ${i}: what does the index do?` }] }) });
          const reader = r.body!.getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            if (first < 0 && new TextDecoder().decode(value).includes('"content"')) first = performance.now() - t0;
          }
        } finally {
          fg.end();
        }
        out.push(first);
      }
      return out;
    };
    await ttft(2); // warm-up: the first requests load the template and fill caches
    const idle = await ttft(o.chatRequests);
    const t0 = performance.now();
    const run = indexer.sync().finally(() => { indexing = false; });
    const busy: number[] = [];
    // 3 (busy half): the same requests while the index embeds (only those that started during it count).
    while (indexing && busy.length < o.chatRequests) {
      const [x] = await ttft(1);
      if (indexing) busy.push(x!);
    }
    await run;
    const wall = (performance.now() - t0) / 1000;
    const st = store.stats();
    out.push(`indexing ${o.root}${limit ? ` (first ${limit.length} files)` : ''}, chunking in the ${o.chunking === 'worker' ? `worker${o.hold ? ', held during chats' : ''}` : "bench's thread"}: ${st.files} files, ${st.chunks} chunks, ${st.vectors} vectors, ${wall.toFixed(1)} s, ${(st.vectors / wall).toFixed(1)} chunks/s embedded, store ${(st.bytes / 2 ** 20).toFixed(1)} MiB`);
    out.push(`chat TTFT idle p50 ${percentile(idle, 50).toFixed(0)} ms p95 ${percentile(idle, 95).toFixed(0)} ms; while indexing (${busy.length} requests) p50 ${busy.length ? percentile(busy, 50).toFixed(0) : '–'} ms p95 ${busy.length ? percentile(busy, 95).toFixed(0) : '–'} ms${busy.length ? ` (p50 ratio ${(percentile(busy, 50) / percentile(idle, 50)).toFixed(2)}, p95 ratio ${(percentile(busy, 95) / percentile(idle, 95)).toFixed(2)}, target <= 1.2)` : ''}; busy ms ${busy.map((x) => x.toFixed(0)).join(' ')}`);

    await chunker?.dispose();
    store.close();
    if (o.onlyIndexing) { parsers.dispose(); return 0; }

    // 5. Full-text recall@10 over the whole tree (a full-text-only index of every file: no vectors
    // needed). Queries from the C/C++ functions that have a // comment line above their definition,
    // picked evenly across the tree: the name alone, the comment alone, both. A hit is the chunk
    // that holds the definition's line.
    const ftStore = IndexStore.open(join(work, 'fulltext.sqlite'));
    const ftStarted = performance.now();
    await new Indexer([{ name: 'root', path: o.root }], ftStore, new VectorIndex(), parsers, {
      embedder: async () => null, foreground: async () => {}, onProgress: () => {}, log: () => {},
    }, { walk: { exclude: [...DEFAULT_EXCLUDES], maxFileBytes: 1 << 20 }, chunk: DEFAULT_CHUNK_OPTIONS, batch: DEFAULT_INDEXER.batch }).sync();
    const ftStats = ftStore.stats();
    out.push(`full-text index of the whole tree: ${ftStats.files} files, ${ftStats.chunks} chunks, ${((performance.now() - ftStarted) / 1000).toFixed(1)} s, store ${(ftStats.bytes / 2 ** 20).toFixed(1)} MiB`);
    const candidates: Array<{ path: string; line: number; name: string; doc: string }> = [];
    for (const path of [...ftStore.files().keys()].filter((p) => /\.(c|cpp|h)$/.test(p)).sort()) {
      const text = await readText(join(o.root, path), 1 << 20);
      if (!text) continue;
      const lines = text.split('\n');
      lines.forEach((l, i) => {
        const m = /^(?:static\s+)?[\w:<>*&\s]+?\b(\w{6,})\s*\([^;]*$/.exec(l);
        const c = /^\s*\/\/\s*(.{20,})$/.exec(lines[i - 1] ?? '');
        if (m && c && !/^(if|for|while|switch|return)$/.test(m[1]!)) candidates.push({ path, line: i + 1, name: m[1]!, doc: c[1]!.trim() });
      });
    }
    const stride = Math.max(1, Math.floor(candidates.length / o.queries));
    const picked = candidates.filter((_, i) => i % stride === 0).slice(0, o.queries);
    const recall = async (q: (c: (typeof picked)[number]) => string): Promise<string> => {
      let found = 0;
      for (const c of picked) {
        const r = await searchIndex({ store: ftStore, vectors: new VectorIndex(), embed: null, rerank: null }, q(c), { limit: 10, candidates: 50, rerankTop: 0 });
        if (r.hits.some((h) => h.chunk.path === c.path && h.chunk.startLine <= c.line && h.chunk.endLine >= c.line)) found++;
      }
      return `${found}/${picked.length} (${picked.length ? ((100 * found) / picked.length).toFixed(1) : '–'}%)`;
    };
    out.push(`full-text recall@10 over the whole tree, ${picked.length} functions of ${candidates.length} with a comment above: name alone ${await recall((c) => c.name)}, comment alone ${await recall((c) => c.doc)}, comment and name ${await recall((c) => `${c.doc} ${c.name}`)}`);
    const sample = [...ftStore.files().keys()];
    ftStore.close();

    // 4. Search latency at --search-chunks chunks: the tree's chunks repeated, vectors of the model's size.
    const big = IndexStore.open(join(work, 'search.sqlite'));
    const bigVectors = new VectorIndex();
    const dims = vectors.dimensions || 128;
    let made = 0;
    for (let round = 0; made < o.searchChunks; round++) {
      for (const path of sample) {
        if (made >= o.searchChunks) break;
        const text = await readText(join(o.root, path), 1 << 20);
        if (!text) continue;
        const lines = text.split('\n');
        const chunks: NewChunk[] = [];
        for (let i = 0; i < lines.length && made + chunks.length < o.searchChunks; i += 30) {
          const t = `${lines.slice(i, i + 30).join('\n')}\n// copy ${round}`;
          chunks.push({ startLine: i + 1, endLine: Math.min(lines.length, i + 30), text: t, hash: `${round}:${path}:${i}`, kind: 'window' });
        }
        big.transaction(() => big.putFile({ path: `${round}/${path}`, size: 1, mtimeMs: 1, hash: path }, chunks));
        const vs = chunks.map((c) => { const v = Float32Array.from({ length: dims }, () => Math.random() - 0.5); const n = Math.hypot(...v); return { hash: c.hash, vector: v.map((x) => x / n) }; });
        big.transaction(() => big.putVectors(vs));
        bigVectors.add(vs);
        made += chunks.length;
      }
      if (!sample.length) break;
    }
    const rerank = async (q: string, docs: string[]): Promise<number[]> => {
      const r = await post(srv.url, '/v1/rerank', { model: 'rerank', query: q, documents: docs });
      const s: number[] = new Array(docs.length);
      for (const x of r.results) s[x.index] = x.relevance_score;
      return s;
    };
    const lat: number[] = [];
    const latNoRerank: number[] = [];
    const latencyQueries = picked.length ? picked.map((c) => ({ q: `${c.doc} ${c.name}` })) : [{ q: 'llama_decode batch tokens' }, { q: 'ggml_backend load device' }, { q: 'kv cache sequence remove' }];
    for (const q of latencyQueries.slice(0, 20)) {
      let a = performance.now();
      await searchIndex({ store: big, vectors: bigVectors, embed: embedder.embed, rerank: null }, q.q);
      latNoRerank.push(performance.now() - a);
      a = performance.now();
      await searchIndex({ store: big, vectors: bigVectors, embed: embedder.embed, rerank }, q.q);
      lat.push(performance.now() - a);
    }
    const bs = big.stats();
    out.push(`search at ${bs.chunks} chunks (${dims}-d vectors): hybrid p50 ${percentile(latNoRerank, 50).toFixed(0)} ms p95 ${percentile(latNoRerank, 95).toFixed(0)} ms; + rerank of the top 50 p50 ${percentile(lat, 50).toFixed(0)} ms p95 ${percentile(lat, 95).toFixed(0)} ms; store ${(bs.bytes / 2 ** 20).toFixed(1)} MiB`);
    big.close();
    parsers.dispose();

    // 2. Embedding throughput: Strata vs llama-server, the same texts and batches, alternating.
    if (o.vsLlamaServer) {
      const bin = o.llamaServer ?? execFileSync(process.execPath, [join(repo, 'scripts', 'build-native.mjs'), '--target', 'llama-server'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!;
      const port = await freePort();
      const lurl = `http://127.0.0.1:${port}`;
      const lsrv = await ServerProcess.start({ name: 'llama-server', command: bin, url: lurl, logFile: join(work, 'llama-server.log'),
        args: ['-m', embedModel, '--embedding', '--port', String(port), '-t', String(o.embedThreads), '-np', '4', '-c', '2048', '-b', '2048', '-ub', '2048'] });
      procs.push(lsrv);
      // Paragraphs of llama.h, cut to 600 characters (WordPiece reads code at ~2 characters a token; the input limit is 512).
      const texts = readFileSync(join(o.root, 'include', 'llama.h'), 'utf8').split('\n\n').filter((x) => x.trim()).slice(0, 256).map((x) => x.slice(0, 600));
      const rate = async (url: string): Promise<number> => {
        const a = performance.now();
        for (let i = 0; i < texts.length; i += 32) await post(url, '/v1/embeddings', { model: 'embed', input: texts.slice(i, i + 32) });
        return texts.length / ((performance.now() - a) / 1000);
      };
      const ours: number[] = [];
      const theirs: number[] = [];
      for (let r = 0; r < 3; r++) { ours.push(await rate(srv.url)); theirs.push(await rate(lurl)); }
      out.push(ratioLine('embeddings, Strata vs llama-server (texts/s, median of 3 alternating)', percentile(ours, 50), percentile(theirs, 50), 'texts/s'));
    }
  } finally {
    await Promise.allSettled(procs.map((p) => p.stop(5000)));
    rmSync(work, { recursive: true, force: true });
  }
  return 0;
}
