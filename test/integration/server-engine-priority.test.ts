// Background engines: an embedding or rerank model's engine process runs every thread (the engine
// thread and the CPU thread pool included) at nice BACKGROUND_NICE, so a chat engine beside it
// keeps the cores; a text model's engine stays at the server's priority. Linux (/proc) only.
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKGROUND_NICE, lowerPriority } from '../../backend/engine/priority.js';
import { ensureTestModel } from '../helpers/models.js';
import { metrics, startServer, type Running } from './server-helpers.js';

/** Every thread's nice value (field 19 of /proc/<pid>/task/<tid>/stat, after the command's parentheses). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe.runIf(process.platform === 'linux')('engine priority', () => {
  let srv: Running | undefined;
  afterEach(async () => { await srv?.close(); srv = undefined; });

  it.each([
    { what: 'an embedding model', vocab: 'bert-bge', shape: 'embed-bert', nice: BACKGROUND_NICE },
    { what: 'a reranker', vocab: 'bert-bge', shape: 'rerank-bert', nice: BACKGROUND_NICE },
    { what: 'a text model', vocab: 'qwen2', shape: 'tiny', nice: 0 },
  ] as const)('$what: every engine thread at nice $nice', async (m) => {
    srv = await startServer(await ensureTestModel({ vocab: m.vocab, shape: m.shape }), { ctx: 256, slots: 2, batch: 256, threads: 2 });
    const pid = (await metrics(srv.port)).engines[0].pid as number;
    const nices = threadNices(pid);
    // The engine host's threads: Node's, the engine thread and the CPU pool's worker.
    expect(nices.length).toBeGreaterThan(3);
    expect(new Set(nices)).toEqual(new Set([m.nice]));
  });

  it('lowerPriority never raises a thread that is already lower', () => {
    const before = threadNices(process.pid);
    expect(lowerPriority(process.pid, Math.min(...before))).toBe(0);
    expect(threadNices(process.pid)).toEqual(before);
  });
});
