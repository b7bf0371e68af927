// The codebase index end to end without VS Code: a real SQLite store in a temp folder, real
// files, a deterministic stand-in embedder (hashed bag of words, so the calls can be counted and
// similar texts are near). Incremental updates (edit, rename, delete, a git branch switch), only
// changed chunks embedded, a model change keeping the chunks, a restart keeping everything, a
// crash mid-write (SIGKILL in a transaction) leaving the last commit, fusion and rerank order,
// pause and cancel.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Indexer, type Embedder, type IndexProgress } from '../../extension/codebase/indexer.js';
import { reciprocalRankFusion } from '../../extension/codebase/fusion.js';
import { fullTextQuery, searchIndex } from '../../extension/codebase/search.js';
import { IndexStore } from '../../extension/codebase/store.js';
import { SyntaxParsers } from '../../extension/codebase/syntax.js';
import { VectorIndex } from '../../extension/codebase/vector-index.js';

const WASM = join(import.meta.dirname, '../../node_modules/@vscode/tree-sitter-wasm/wasm');
const DIMS = 32;

/** Hashed bag of words, unit length: the same text always gives the same vector. */
function bagOfWords(text: string): Float32Array {
  const v = new Float32Array(DIMS);
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    let h = 2166136261;
    for (const ch of w) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    v[(h >>> 0) % DIMS]! += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

class CountingEmbedder implements Embedder {
  texts: string[] = [];
  constructor(public identity = 'model-a|32') {}
  embed = async (texts: string[]): Promise<Float32Array[]> => {
    this.texts.push(...texts);
    return texts.map(bagOfWords);
  };
}

let dir: string;
let root: string;
let store: IndexStore;
let vectors: VectorIndex;
let parsers: SyntaxParsers;
let embedder: CountingEmbedder;
let progress: IndexProgress[];

const put = (p: string, text: string): void => {
  mkdirSync(join(root, p, '..'), { recursive: true });
  writeFileSync(join(root, p), text);
};
const fn = (name: string, doc: string): string => `/** ${doc} */\nexport function ${name}(x: number): number {\n  return x + ${name.length};\n}\n`;

function makeIndexer(e: Embedder | null = embedder): Indexer {
  return new Indexer([{ name: 'ws', path: root }], store, vectors, parsers, {
    embedder: async () => e, foreground: async () => {}, onProgress: (p) => progress.push(p), log: () => {},
  }, { walk: { exclude: [], maxFileBytes: 100_000 }, chunk: { maxChars: 120, maxLines: 20, overlapLines: 4 }, batch: 4 });
}
const paths = (): string[] => [...store.files().keys()].sort();
const search = (q: string, rerank: ((q: string, d: string[]) => Promise<number[]>) | null = null) =>
  searchIndex({ store, vectors, embed: embedder.embed, rerank }, q, { limit: 5, candidates: 20, rerankTop: 20 });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-index-'));
  root = join(dir, 'ws');
  mkdirSync(root);
  store = IndexStore.open(join(dir, 'index.sqlite'));
  vectors = new VectorIndex();
  parsers = new SyntaxParsers(WASM);
  embedder = new CountingEmbedder();
  progress = [];
  put('src/math.ts', fn('addNumbers', 'Adds a number to itself') + fn('scaleVector', 'Scales a vector by a factor'));
  put('src/text.ts', fn('splitWords', 'Splits text into words'));
  put('README.md', '# Demo\n\nA small workspace for the index tests.\n');
});
afterEach(() => {
  store.close();
  parsers.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('indexing a folder', () => {
  it('chunks and embeds every file once, with progress to the end; a second sync reads nothing again', async () => {
    const ix = makeIndexer();
    await ix.sync();
    expect(paths()).toEqual(['README.md', 'src/math.ts', 'src/text.ts']);
    const stats = store.stats();
    expect(stats.missingVectors).toBe(0);
    expect(vectors.size).toBe(stats.vectors);
    expect(embedder.texts.length).toBe(stats.vectors);
    const last = progress.at(-1)!;
    expect(last).toMatchObject({ phase: 'idle', message: null, filesDone: 3, filesTotal: 3, chunksDone: stats.vectors, chunksTotal: stats.vectors });
    expect(progress.map((p) => p.phase)).toEqual(expect.arrayContaining(['scanning', 'chunking', 'embedding', 'idle']));
    embedder.texts = [];
    await ix.sync();
    expect(embedder.texts).toEqual([]);
    expect(progress.at(-1)!.filesTotal).toBe(0);
  });

  it('an edit re-embeds only the chunks it changed; a rename none; a delete removes the file and its vectors', async () => {
    const ix = makeIndexer();
    await ix.sync();
    const before = store.chunksOfFile('src/math.ts');
    expect(before.length).toBe(2);
    embedder.texts = [];
    put('src/math.ts', fn('addNumbers', 'Adds a number to itself') + fn('scaleVector', 'Multiplies a vector by a factor'));
    await ix.update(['src/math.ts']);
    expect(embedder.texts).toHaveLength(1);
    expect(embedder.texts[0]).toContain('Multiplies a vector');
    expect(store.chunksOfFile('src/math.ts')[0]!.hash).toBe(before[0]!.hash);
    expect((await search('Multiplies vector factor')).hits[0]!.chunk.path).toBe('src/math.ts');

    embedder.texts = [];
    renameSync(join(root, 'src/text.ts'), join(root, 'src/words.ts'));
    await ix.update(['src/text.ts', 'src/words.ts']);
    expect(paths()).toEqual(['README.md', 'src/math.ts', 'src/words.ts']);
    expect(embedder.texts).toEqual([]);

    unlinkSync(join(root, 'src/words.ts'));
    await ix.update(['src/words.ts']);
    expect(paths()).toEqual(['README.md', 'src/math.ts']);
    expect((await search('Splits text into words')).hits.every((h) => h.chunk.path !== 'src/words.ts')).toBe(true);
    expect(store.stats().vectors).toBe(store.usedHashes().size);
    expect(vectors.size).toBe(store.stats().vectors);
  });

  it('a git branch switch: files changed, added and deleted by the checkout are reindexed by the next sync', async () => {
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: root, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-qm', 'main');
    git('checkout', '-qb', 'feature');
    put('src/math.ts', fn('addNumbers', 'Adds a number to itself') + fn('rotateMatrix', 'Rotates a matrix in place'));
    put('src/new.ts', fn('parseConfig', 'Parses the configuration file'));
    git('rm', '-q', 'src/text.ts');
    git('add', '.');
    git('commit', '-qm', 'feature');
    git('checkout', '-q', 'main');
    const ix = makeIndexer();
    await ix.sync();
    git('checkout', '-q', 'feature');
    embedder.texts = [];
    await ix.sync();
    expect(paths()).toEqual(['README.md', 'src/math.ts', 'src/new.ts']);
    expect(embedder.texts.some((t) => t.includes('rotateMatrix'))).toBe(true);
    expect(embedder.texts.some((t) => t.includes('addNumbers'))).toBe(false);
    expect((await search('rotateMatrix')).hits[0]!.chunk.text).toContain('Rotates a matrix');
    expect((await search('splitWords')).hits.some((h) => h.chunk.text.includes('splitWords'))).toBe(false);
    git('checkout', '-q', 'main');
    await ix.sync();
    expect(paths()).toEqual(['README.md', 'src/math.ts', 'src/text.ts']);
  });

  it('another embedding model rebuilds the vectors and keeps the chunks; no model indexes full text only', async () => {
    await makeIndexer().sync();
    const chunks = store.stats().chunks;
    const other = new CountingEmbedder('model-b|32');
    await makeIndexer(other).sync();
    expect(other.texts.length).toBe(store.stats().vectors);
    expect(store.stats().chunks).toBe(chunks);
    expect(store.meta('model')).toBe('model-b|32');
    store.clearVectors();
    vectors.clear();
    await makeIndexer(null).sync();
    expect(progress.at(-1)!.message).toMatch(/no embedding model/);
    const r = await searchIndex({ store, vectors, embed: null, rerank: null }, 'scaleVector factor');
    expect(r.stages).toEqual(['fullText']);
    expect(r.hits[0]!.chunk.text).toContain('scaleVector');
  });

  it('survives a restart: a new store and indexer on the same file answer the same search without embedding again', async () => {
    await makeIndexer().sync();
    const first = await search('Scales a vector');
    store.close();
    store = IndexStore.open(join(dir, 'index.sqlite'));
    vectors = new VectorIndex();
    embedder.texts = [];
    const ix = makeIndexer();
    expect(vectors.size).toBe(store.stats().vectors);
    const again = await search('Scales a vector');
    expect(again.hits.map((h) => [h.chunk.id, h.fused])).toEqual(first.hits.map((h) => [h.chunk.id, h.fused]));
    await ix.sync();
    expect(embedder.texts).toEqual(['Scales a vector']);
    expect(ix.lastUpdated).not.toBeNull();
  });

  it('a text too long for the model is cut by the token counts the server gives and the batch asked again, not one request per text', async () => {
    put('src/long.ts', `/** A long comment */\nexport const table = [\n${Array.from({ length: 15 }, (_, i) => `  ${i}, // entry number ${i}`).join('\n')}\n];\n`);
    const limit = 100; // characters stand in for tokens
    const requests: string[][] = [];
    const strict: Embedder = {
      identity: 'model-a|32',
      embed: async (texts) => {
        requests.push([...texts]);
        const at = texts.findIndex((t) => t.length > limit);
        if (at >= 0) {
          // The numbers come as fields (the message is never read for them).
          throw Object.assign(new Error('an input is too long'), { status: 400, code: 'context_length_exceeded',
            param: texts.length === 1 ? 'input' : `input[${at}]`, overflow: { n_prompt_tokens: texts[at]!.length, n_ctx: limit } });
        }
        return texts.map(bagOfWords);
      },
    };
    await makeIndexer(strict).sync();
    expect(store.stats().missingVectors).toBe(0);
    const long = requests.flat().filter((t) => t.startsWith('/** A long comment'));
    // The refused text went again cut to 90% of what fits, with the rest of its batch; the others once each.
    expect(long.length).toBeGreaterThanOrEqual(2);
    expect(long.at(-1)!.length).toBeLessThanOrEqual(limit);
    expect(long.at(-1)!.length).toBeGreaterThan(limit * 0.8);
    expect(requests.every((r) => r.length > 1 || requests.length === 1)).toBe(true);
    const accepted = requests.filter((r) => r.every((t) => t.length <= limit)).flat();
    expect(new Set(accepted).size).toBe(accepted.length);
    expect(accepted.length).toBe(store.stats().vectors);
    // Any other error stops the pass with its message.
    const broken: Embedder = { identity: 'model-c|32', embed: async () => { throw Object.assign(new Error('the server is down'), { status: 503 }); } };
    await makeIndexer(broken).sync();
    expect(progress.at(-1)!.message).toMatch(/the server is down/);
  });

  it('chunking, like embedding, starts a group of files only while no chat or completion is in flight', async () => {
    let release!: () => void;
    let asked = 0;
    const busy = new Promise<void>((r) => { release = r; });
    const ix = new Indexer([{ name: 'ws', path: root }], store, vectors, parsers, {
      embedder: async () => embedder, foreground: () => { asked++; return busy; }, onProgress: (p) => progress.push(p), log: () => {},
    }, { walk: { exclude: [], maxFileBytes: 100_000 }, chunk: { maxChars: 120, maxLines: 20, overlapLines: 4 }, batch: 4 });
    const run = ix.sync();
    while (asked === 0) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(ix.state.phase).toBe('chunking');
    expect(store.stats().files).toBe(0);
    release();
    await run;
    expect(store.stats()).toMatchObject({ files: 3, missingVectors: 0 });
  });

  it('pause holds the embedding between batches; cancel ends the run with what was committed', async () => {
    for (let i = 0; i < 12; i++) put(`gen/f${i}.ts`, fn(`generated${i}`, `Generated function number ${i}`));
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    let calls = 0;
    const slow: Embedder = {
      identity: 'model-a|32',
      embed: async (t) => { calls++; if (calls === 2) await gate; return t.map(bagOfWords); },
    };
    const ix = makeIndexer(slow);
    const run = ix.sync();
    while (calls < 2) await new Promise((r) => setImmediate(r));
    ix.pause();
    release();
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(calls).toBe(2);
    expect(ix.state.paused).toBe(true);
    ix.cancel();
    await run;
    expect(ix.state).toMatchObject({ phase: 'idle', message: 'cancelled', paused: false });
    expect(store.stats().vectors).toBe(8);
    await makeIndexer().sync();
    expect(store.stats().missingVectors).toBe(0);
  });
});

describe('the store', () => {
  it('a crash in the middle of a transaction leaves the last commit: SQLite rolls the journal back on open', async () => {
    const child = join(dir, 'crash-child.cjs');
    await build({ entryPoints: [join(import.meta.dirname, '../helpers/codebase-crash-child.ts')], outfile: child, bundle: true, platform: 'node', format: 'cjs', logLevel: 'error', external: ['node-sqlite3-wasm'] });
    const db = join(dir, 'crash.sqlite');
    for (let round = 0; round < 3; round++) {
      const p = spawn(process.execPath, [child, db], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_PATH: join(import.meta.dirname, '../../node_modules') } });
      await new Promise<void>((resolve, reject) => {
        p.stdout.on('data', (b: Buffer) => { if (b.toString().includes('mid')) resolve(); });
        p.on('exit', (code) => reject(new Error(`child exited ${code} before the middle of its transaction`)));
      });
      const exited = new Promise((r) => p.on('exit', r));
      p.kill('SIGKILL');
      await exited;
      const s = IndexStore.open(db);
      try {
        expect(s.integrity()).toBe('ok');
        expect([...s.files().keys()]).toEqual(['a.ts']);
        expect(s.stats()).toMatchObject({ files: 1, chunks: 1, vectors: 1 });
        expect(s.fullText(fullTextQuery('committed alpha'), 5)).toHaveLength(1);
        expect(s.fullText(fullTextQuery('uncommitted beta'), 5)).toHaveLength(0);
      } finally { s.close(); }
    }
  });
});

describe('fusion and rerank order', () => {
  it('reciprocal rank fusion: both lists beat one; ties keep first appearance; repeats do not vote twice', () => {
    const f = reciprocalRankFusion([['a', 'b', 'c'], ['c', 'd', 'a']]);
    expect(f.map((x) => x.key)).toEqual(['a', 'c', 'b', 'd']);
    expect(f[0]).toEqual({ key: 'a', score: 1 / 61 + 1 / 63, ranks: [1, 3] });
    expect(f[2]!.ranks).toEqual([2, null]);
    expect(reciprocalRankFusion([['x', 'x', 'y']]).map((e) => [e.key, e.score])).toEqual([['x', 1 / 61], ['y', 1 / 63]]);
  });

  it('hybrid hits carry both scores; the reranker reorders the fused hits by its scores', async () => {
    await makeIndexer().sync();
    const plain = await search('vector factor scaleVector');
    expect(plain.stages).toEqual(['fullText', 'vector']);
    const top = plain.hits[0]!;
    expect(top.chunk.text).toContain('scaleVector');
    expect(top.fullText?.rank).toBe(1);
    expect(top.vector?.rank).toBe(1);
    expect(top.rerank).toBeNull();
    // A reranker that prefers the README: it comes first, the rest in the reranker's order.
    const reranked = await search('vector factor scaleVector', async (_q, docs) => docs.map((d) => (d.includes('# Demo') ? 10 : d.length / 1000)));
    expect(reranked.stages).toEqual(['fullText', 'vector', 'rerank']);
    expect(reranked.hits[0]!.chunk.path).toBe('README.md');
    const scores = reranked.hits.map((h) => h.rerank!);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('vectors: false searches the full text only, without embedding the query; rerankTop 0 asks no reranker', async () => {
    await makeIndexer().sync();
    embedder.texts = [];
    let reranked = 0;
    const r = await searchIndex({ store, vectors, embed: embedder.embed, rerank: async (_q, d) => { reranked++; return d.map(() => 1); } },
      'scaleVector factor', { limit: 3, candidates: 20, rerankTop: 0, vectors: false });
    expect(r.stages).toEqual(['fullText']);
    expect(r.hits[0]!.chunk.text).toContain('scaleVector');
    expect(embedder.texts).toEqual([]);
    expect(reranked).toBe(0);
  });

  it('vector search is deterministic and exact: the same query gives the same order, the best is the text itself', () => {
    const v = new VectorIndex();
    const texts = ['alpha beta', 'gamma delta', 'alpha gamma', 'epsilon'];
    v.add(texts.map((t) => ({ hash: t, vector: bagOfWords(t) })));
    const a = v.search(bagOfWords('alpha beta'), 3);
    expect(a[0]).toEqual({ hash: 'alpha beta', score: expect.closeTo(1, 6) });
    expect(v.search(bagOfWords('alpha beta'), 3)).toEqual(a);
    v.retain((h) => h !== 'alpha beta');
    expect(v.search(bagOfWords('alpha beta'), 3).map((h) => h.hash)).not.toContain('alpha beta');
    expect(v.size).toBe(3);
  });
});
