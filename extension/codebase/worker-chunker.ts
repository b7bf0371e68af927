// The indexer's side of the chunking thread (chunk-worker.ts): one request at a time, each a
// promise that settles with the worker's answer; the worker ending early fails what is pending.
import { Worker } from 'node:worker_threads';
import type { ChunkWorkerData, ChunkWorkerReply, ChunkWorkerRequest } from './chunk-worker.js';
import type { FileChunker, FileToChunk } from './file-chunker.js';

type Pending = { resolve: () => void; reject: (e: Error) => void };
type Op = { op: 'chunk'; files: FileToChunk[] } | { op: 'delete'; paths: string[] } | { op: 'close' };

export class WorkerChunker implements FileChunker {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private ended: Error | null = null;
  /** Called when the worker begins waiting for a hold's release. */
  onHeld: () => void = () => {};

  private constructor(private readonly worker: Worker, private readonly held: Int32Array, log: (m: string) => void) {
    worker.on('message', (m: ChunkWorkerReply) => {
      if ('log' in m) { log(m.log); return; }
      if ('held' in m) { this.onHeld(); return; }
      if (!('id' in m)) return;
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.ok) p?.resolve();
      else p?.reject(new Error(m.error));
    });
    const fail = (e: Error): void => {
      this.ended ??= e;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the chunking worker exited (code ${code})`)));
  }

  /** Starts the worker (`script`: dist/codebase-worker.cjs) and waits until its store and parsers are open. */
  static start(script: string, data: Omit<ChunkWorkerData, 'hold'>, log: (m: string) => void = () => {}): Promise<WorkerChunker> {
    const hold = new SharedArrayBuffer(4);
    const worker = new Worker(script, { workerData: { ...data, hold } satisfies ChunkWorkerData });
    return new Promise((resolve, reject) => {
      const onExit = (code: number): void => reject(new Error(`the chunking worker exited (code ${code}) before it was ready`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.once('message', (m: ChunkWorkerReply) => {
        worker.off('error', reject);
        worker.off('exit', onExit);
        if ('ready' in m && m.ready) resolve(new WorkerChunker(worker, new Int32Array(hold), log));
        else {
          void worker.terminate();
          reject(new Error(`the chunking worker did not start: ${'error' in m ? m.error : 'no answer'}`));
        }
      });
    });
  }

  private call(op: Op): Promise<void> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...op } as ChunkWorkerRequest);
    });
  }

  chunkFiles(files: readonly FileToChunk[]): Promise<void> { return this.call({ op: 'chunk', files: [...files] }); }
  deleteFiles(paths: readonly string[]): Promise<void> { return this.call({ op: 'delete', paths: [...paths] }); }

  hold(held: boolean): void {
    Atomics.store(this.held, 0, held ? 1 : 0);
    if (!held) Atomics.notify(this.held, 0);
  }

  /** Closes the worker's store connection and ends the thread. */
  async dispose(): Promise<void> {
    if (this.ended) return;
    this.hold(false);
    try {
      await this.call({ op: 'close' });
    } catch { /* ended meanwhile */ }
    await this.worker.terminate();
  }
}

/**
 * The worker, started on first use; where it cannot start (the bundle or its WebAssembly missing)
 * the work runs on this thread instead, said once in the log.
 */
export function workerOrInThread(script: string, data: Omit<ChunkWorkerData, 'hold'>, fallback: FileChunker, log: (m: string) => void): FileChunker {
  let started: Promise<FileChunker> | null = null;
  let held = false;
  const get = (): Promise<FileChunker> => (started ??= WorkerChunker.start(script, data, log).catch((e: Error) => {
    log(`chunking runs on the extension host's thread: ${e.message}`);
    return fallback;
  }).then((c) => { c.hold(held); return c; }));
  return {
    hold: (h) => { held = h; void started?.then((c) => c.hold(held)); },
    chunkFiles: async (files) => (await get()).chunkFiles(files),
    deleteFiles: async (paths) => (await get()).deleteFiles(paths),
    dispose: async () => { if (started) await (await started).dispose(); },
  };
}
