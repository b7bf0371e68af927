// The codebase index's chunking thread (dist/codebase-worker.cjs, a node:worker_threads Worker):
// tree-sitter parses and the chunking phase's SQLite writes run here, on a second connection to
// the indexer's store, so the extension host's event loop stays free for chats and completions.
// The WebAssembly loads here as on the main thread: SQLite's from beside this bundle, the
// grammars from the wasmDir it is given. Requests come one at a time (worker-chunker.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { ChunkOptions } from './chunker.js';
import { storeFiles, type FileToChunk } from './file-chunker.js';
import { IndexStore } from './store.js';
import { SyntaxParsers } from './syntax.js';

export interface ChunkWorkerData {
  storePath: string; wasmDir: string; chunk: ChunkOptions; maxFileBytes: number;
  /** One Int32: 1 while the indexer holds chunking (a chat or completion in flight); the worker waits on it between files. */
  hold?: SharedArrayBuffer;
}

export type ChunkWorkerRequest =
  | { id: number; op: 'chunk'; files: FileToChunk[] }
  | { id: number; op: 'delete'; paths: string[] }
  | { id: number; op: 'close' };

export type ChunkWorkerReply =
  | { ready: true }
  | { ready: false; error: string }
  | { id: number; ok: true }
  | { id: number; ok: false; error: string }
  | { log: string }
  /** It began waiting for a hold's release (once per hold). */
  | { held: true };

const port = parentPort!;
const data = workerData as ChunkWorkerData;
const post = (m: ChunkWorkerReply): void => port.postMessage(m);

let store: IndexStore;
let parsers: SyntaxParsers;
try {
  store = IndexStore.attach(data.storePath);
  parsers = new SyntaxParsers(data.wasmDir, (m) => post({ log: m }));
  post({ ready: true });
} catch (e) {
  post({ ready: false, error: (e as Error).message });
  process.exit(1);
}

const hold = data.hold ? new Int32Array(data.hold) : null;
/** Blocks this thread (it has nothing else to do) while held, between files and inside a parse; the main thread's notify wakes it. */
const waitWhileHeldSync = (): void => {
  if (!hold || Atomics.load(hold, 0) === 0) return;
  post({ held: true });
  while (Atomics.load(hold, 0) !== 0) Atomics.wait(hold, 0, 1);
};
const waitWhileHeld = async (): Promise<void> => { waitWhileHeldSync(); };

port.on('message', (req: ChunkWorkerRequest) => {
  void (async () => {
    try {
      if (req.op === 'chunk') await storeFiles(store, parsers, data, req.files, waitWhileHeld, waitWhileHeldSync);
      else if (req.op === 'delete') store.transaction(() => { for (const p of req.paths) store.deleteFile(p); });
      else {
        parsers.dispose();
        store.close();
      }
      post({ id: req.id, ok: true });
      if (req.op === 'close') port.close();
    } catch (e) {
      post({ id: req.id, ok: false, error: (e as Error).message });
    }
  })();
});
