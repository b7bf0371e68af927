// A model file's identity for saved sessions: KV state is only valid for the exact weights
// and vocabulary it was computed with.
//
// Chosen: sha256 over a version tag, the file size, the whole GGUF header (all metadata and
// tensor descriptions: architecture, shapes, types, tokenizer) and the first and last 1 MiB of
// tensor data. Reading ~header + 2 MiB keeps it fast for multi-GB files; a file whose weights
// differ only in the middle of the data section with the same size and header would collide,
// which re-quantisations, fine-tunes and our seeded test models never do (their data differs
// everywhere). Files that are not GGUF fall back to size + first and last 1 MiB.
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { GgufFormatError, readGgufHeader } from './gguf.js';

const SAMPLE = 1 << 20;
const TAG = 'strata-model-identity-v1';

/** "sha256:<64 hex>"; stable across renames and copies of the file. */
export async function modelIdentity(path: string): Promise<string> {
  let dataOffset = 0;
  try {
    dataOffset = (await readGgufHeader(path)).dataOffset;
  } catch (e) {
    if (!(e instanceof GgufFormatError)) throw e;
  }
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const hash = createHash('sha256').update(`${TAG}\0${size}\0`);
    const read = async (start: number, length: number): Promise<void> => {
      const n = Math.max(0, Math.min(length, size - start));
      for (let done = 0; done < n;) {
        const buf = Buffer.alloc(Math.min(n - done, 4 * SAMPLE));
        const { bytesRead } = await fh.read(buf, 0, buf.length, start + done);
        if (bytesRead === 0) break;
        hash.update(buf.subarray(0, bytesRead));
        done += bytesRead;
      }
    };
    await read(0, dataOffset);                       // the header
    await read(dataOffset, SAMPLE);                  // first tensor bytes
    const tail = Math.max(dataOffset + SAMPLE, size - SAMPLE);
    await read(tail, size - tail);                   // last tensor bytes (when not already read)
    return `sha256:${hash.digest('hex')}`;
  } finally {
    await fh.close();
  }
}
