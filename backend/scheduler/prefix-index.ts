// Per-replica index of the prompts a replica has recently seen, used to route a request to
// the replica that already holds most of its prompt. Prompts are cut into fixed blocks;
// block i's key is a hash of block i's tokens chained with block i-1's key, so a key names
// the whole prefix up to its block. An estimate: the engine may have evicted since.
import { createHash } from 'node:crypto';

export class PrefixIndex {
  /** key -> present; Map order is the LRU order (re-inserted on use). */
  private readonly keys = new Map<string, true>();

  constructor(readonly blockSize = 64, private readonly maxBlocks = 65536) {
    if (!Number.isInteger(blockSize) || blockSize < 1) throw new RangeError('blockSize must be a positive integer');
  }

  get size(): number { return this.keys.size; }

  static blockKeys(tokens: ArrayLike<number>, blockSize: number): string[] {
    const out: string[] = [];
    let prev = '';
    const full = Math.floor(tokens.length / blockSize);
    for (let b = 0; b < full; b++) {
      const block = Int32Array.from({ length: blockSize }, (_, i) => tokens[b * blockSize + i]!);
      prev = createHash('sha1').update(prev).update(Buffer.from(block.buffer)).digest('base64');
      out.push(prev);
    }
    return out;
  }

  /** Tokens of `tokens`' leading full blocks this replica has seen. */
  cachedTokens(tokens: ArrayLike<number>): number {
    return this.cachedKeys(PrefixIndex.blockKeys(tokens, this.blockSize)) * this.blockSize;
  }

  /** How many of these chained keys (from the start) are present. */
  cachedKeys(keys: readonly string[]): number {
    let n = 0;
    for (const k of keys) {
      if (!this.keys.has(k)) break;
      n++;
    }
    return n;
  }

  add(tokens: ArrayLike<number>): void {
    for (const k of PrefixIndex.blockKeys(tokens, this.blockSize)) {
      this.keys.delete(k);
      this.keys.set(k, true);
    }
    while (this.keys.size > this.maxBlocks) {
      const oldest = this.keys.keys().next().value as string;
      this.keys.delete(oldest);
    }
  }

  clear(): void { this.keys.clear(); }
}
