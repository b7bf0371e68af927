// The chunking worker (extension/codebase/chunk-worker.ts, bundled as dist/codebase-worker.cjs):
// the same files indexed on this thread and through the worker give the same files, chunks and
// hashes, and the same full-text answers; edits, touches and deletes go through it too. The
// bundle is built here as scripts/bundle.mjs builds it (CommonJS, SQLite's .wasm beside it), so
// the WebAssembly is loaded from a worker thread as in the extension.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkOptions } from '../../extension/codebase/chunker.js';
import { chunkText } from '../../extension/codebase/file-chunker.js';
import { Indexer } from '../../extension/codebase/indexer.js';
import { fullTextQuery } from '../../extension/codebase/search.js';
import { IndexStore } from '../../extension/codebase/store.js';
import { SyntaxParsers } from '../../extension/codebase/syntax.js';
import { VectorIndex } from '../../extension/codebase/vector-index.js';
import { WorkerChunker } from '../../extension/codebase/worker-chunker.js';

const REPO = join(import.meta.dirname, '../..');
const WASM = join(REPO, 'node_modules/@vscode/tree-sitter-wasm/wasm');
const CHUNK: ChunkOptions = { maxChars: 200, maxLines: 20, overlapLines: 4 };
const MAX_BYTES = 100_000;

let dir: string;
let script: string;
let root: string;

const put = (p: string, text: string | Buffer): void => {
  mkdirSync(join(root, p, '..'), { recursive: true });
  writeFileSync(join(root, p), text);
};
const fn = (name: string, doc: string): string => `/** ${doc} */\nexport function ${name}(x: number): number {\n  return x + ${name.length};\n}\n`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-index-worker-'));
  script = join(dir, 'codebase-worker.cjs');
  await build({ entryPoints: [join(REPO, 'extension/codebase/chunk-worker.ts')], outfile: script, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'error' });
  copyFileSync(join(REPO, 'node_modules/node-sqlite3-wasm/dist/node-sqlite3-wasm.wasm'), join(dir, 'node-sqlite3-wasm.wasm'));
  root = join(dir, 'ws');
  put('src/math.ts', fn('addNumbers', 'Adds a number to itself') + fn('scaleVector', 'Scales a vector by a factor') + fn('dotProduct', 'The dot product of two vectors'));
  put('src/util.py', 'def parse_args(argv):\n    """Reads the command line."""\n    return argv[1:]\n\n\nclass Loader:\n    def load(self, path):\n        return open(path).read()\n');
  put('native/engine.cpp', `// Decodes one batch.\nint llama_decode_batch(int n) {\n  return n * 2;\n}\n\n${Array.from({ length: 4 }, (_, i) => `// Slot number ${i}, with its own counters.\nstruct Slot${i} {\n  int id;\n  int generated;\n  void reset() { id = 0; generated = 0; }\n};\n`).join('\n')}`);
  put('README.md', `# Demo\n\n${Array.from({ length: 60 }, (_, i) => `line ${i} of the readme`).join('\n')}\n`);
  put('blob.bin', Buffer.from([0x00, 0x01, 0x02, 0xff]));
});
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

/** One index of `root`: through the worker or on this thread. */
async function indexOnce(name: string, worker: boolean) {
  const path = join(dir, `${name}.sqlite`);
  const store = IndexStore.open(path);
  const parsers = new SyntaxParsers(WASM);
  const chunker = worker ? await WorkerChunker.start(script, { storePath: path, wasmDir: WASM, chunk: CHUNK, maxFileBytes: MAX_BYTES }) : undefined;
  const ix = new Indexer([{ name: 'ws', path: root }], store, new VectorIndex(), parsers, {
    embedder: async () => null, foreground: async () => {}, onProgress: () => {}, log: () => {},
  }, { walk: { exclude: [], maxFileBytes: MAX_BYTES }, chunk: CHUNK, batch: 4 }, chunker);
  const snapshot = () => {
    const files = [...store.files().values()].sort((a, b) => (a.path < b.path ? -1 : 1));
    return {
      files: files.map((f) => ({ path: f.path, hash: f.hash, size: f.size })),
      chunks: Object.fromEntries(files.map((f) => [f.path, store.chunksOfFile(f.path)])),
      search: ['dot product vectors', 'llama decode batch', 'command line', 'readme'].map((q) => store.chunks(store.fullText(fullTextQuery(q), 5).map((h) => h.id)).map((c) => `${c.path}:${c.startLine}-${c.endLine}`)),
      stats: store.stats(),
    };
  };
  const close = async () => { await chunker?.dispose(); parsers.dispose(); store.close(); };
  return { ix, store, snapshot, close };
}

describe('chunking in the worker', () => {
  it('a folder indexed through the worker gives the same files, chunks, hashes and full-text hits as on this thread', async () => {
    const here = await indexOnce('here', false);
    const there = await indexOnce('there', true);
    try {
      await here.ix.sync();
      await there.ix.sync();
      const a = here.snapshot();
      const b = there.snapshot();
      expect(a.files.map((f) => f.path)).toEqual(['README.md', 'native/engine.cpp', 'src/math.ts', 'src/util.py']);
      expect(a.stats.chunks).toBeGreaterThan(6);
      expect(a.search[2]![0]).toMatch(/^src\/util\.py:/);
      // Syntax chunks where a grammar covers the file: the C++ function and struct apart.
      expect(a.chunks['native/engine.cpp']!.length).toBeGreaterThan(1);
      expect(b.files).toEqual(a.files);
      expect(b.chunks).toEqual(a.chunks);
      expect(b.search).toEqual(a.search);
      expect(b.search[1]![0]).toMatch(/^native\/engine\.cpp:/);
      expect({ ...b.stats, bytes: 0 }).toEqual({ ...a.stats, bytes: 0 });
      expect(there.store.integrity()).toBe('ok');
    } finally {
      await here.close();
      await there.close();
    }
  });

  it('an edit, a touch and a delete reach the store through the worker as on this thread', async () => {
    const here = await indexOnce('here2', false);
    const there = await indexOnce('there2', true);
    try {
      await here.ix.sync();
      await there.ix.sync();
      put('src/math.ts', fn('addNumbers', 'Adds a number to itself') + fn('cubeRoot', 'The cube root of a number'));
      utimesSync(join(root, 'README.md'), new Date(), new Date(Date.now() + 5000)); // touched: same content
      unlinkSync(join(root, 'src/util.py'));
      await here.ix.sync();
      await there.ix.sync();
      const a = here.snapshot();
      const b = there.snapshot();
      expect(a.files.map((f) => f.path)).toEqual(['README.md', 'native/engine.cpp', 'src/math.ts']);
      expect(b.files).toEqual(a.files);
      expect(b.chunks).toEqual(a.chunks);
      expect([...there.store.files().values()].find((f) => f.path === 'README.md')!.mtimeMs)
        .toBe([...here.store.files().values()].find((f) => f.path === 'README.md')!.mtimeMs);
      expect(there.store.fullText(fullTextQuery('cube root'), 5)).toHaveLength(1);
      expect(here.store.fullText(fullTextQuery('Loader'), 5)).toHaveLength(0);
      expect(there.store.fullText(fullTextQuery('Loader'), 5)).toHaveLength(0);
    } finally {
      await here.close();
      await there.close();
    }
  });

  it('held (a chat in flight), the worker starts no new file and commits nothing until released', async () => {
    const path = join(dir, 'held.sqlite');
    const store = IndexStore.open(path);
    const chunker = await WorkerChunker.start(script, { storePath: path, wasmDir: WASM, chunk: CHUNK, maxFileBytes: MAX_BYTES });
    try {
      const held = new Promise<void>((r) => { chunker.onHeld = r; });
      chunker.hold(true);
      const files = ['src/math.ts', 'README.md'].map((p) => ({ stored: p, abs: join(root, p), size: 1, mtimeMs: 1, knownHash: null }));
      let done = false;
      const run = chunker.chunkFiles(files).then(() => { done = true; });
      await held;
      expect(done).toBe(false);
      expect(store.stats().files).toBe(0);
      chunker.hold(false);
      await run;
      expect([...store.files().keys()].sort()).toEqual(['README.md', 'src/math.ts']);
    } finally {
      await chunker.dispose();
      store.close();
    }
  });

  it('a parse calls its pause hook as it goes (where the worker waits mid-file) and gives the same chunks', async () => {
    const parsers = new SyntaxParsers(WASM);
    try {
      const text = Array.from({ length: 300 }, (_, i) => fn(`generated${i}`, `Generated function ${i}`)).join('\n');
      let pauses = 0;
      const paused = await chunkText(parsers, 'big.ts', text, CHUNK, () => { pauses++; });
      expect(pauses).toBeGreaterThan(10);
      expect(paused).toEqual(await chunkText(parsers, 'big.ts', text, CHUNK));
    } finally {
      parsers.dispose();
    }
  });

  it('a worker that cannot open its store says why instead of starting', async () => {
    await expect(WorkerChunker.start(script, { storePath: join(dir, 'no-such-dir', 'x.sqlite'), wasmDir: WASM, chunk: CHUNK, maxFileBytes: MAX_BYTES }))
      .rejects.toThrow(/did not start|exited/);
  });
});
