// Nearest neighbours over the index's vectors: every vector in one Float32Array, scanned in full
// (exact, like sqlite-vec's vec0 and LanceDB without an ANN index). At 50K chunks of 384 floats
// that is 19M multiply-adds, ~30 ms of one core, and nothing to tune or rebuild. Vectors are
// unit length (the server normalises them), so the dot product is the cosine.

export interface VectorHit { hash: string; score: number }

export class VectorIndex {
  private data = new Float32Array(0);
  private hashes: string[] = [];
  private slot = new Map<string, number>();
  private dims = 0;

  get size(): number { return this.hashes.length; }
  get dimensions(): number { return this.dims; }

  clear(): void {
    this.data = new Float32Array(0);
    this.hashes = [];
    this.slot.clear();
    this.dims = 0;
  }

  /** Adds or replaces vectors (all of one size: the first sets it). */
  add(rows: Iterable<{ hash: string; vector: Float32Array }>): void {
    for (const { hash, vector } of rows) {
      if (this.dims === 0) this.dims = vector.length;
      if (vector.length !== this.dims) throw new RangeError(`vector of ${vector.length} dimensions in an index of ${this.dims}`);
      let i = this.slot.get(hash);
      if (i === undefined) {
        i = this.hashes.length;
        this.hashes.push(hash);
        this.slot.set(hash, i);
        if ((i + 1) * this.dims > this.data.length) {
          const grown = new Float32Array(Math.max(1024, (i + 1) * 2) * this.dims);
          grown.set(this.data);
          this.data = grown;
        }
      }
      this.data.set(vector, i * this.dims);
    }
  }

  /** Keeps only the hashes `keep` says yes to (swap-remove; order is not meaningful). */
  retain(keep: (hash: string) => boolean): void {
    for (let i = this.hashes.length - 1; i >= 0; i--) {
      const h = this.hashes[i]!;
      if (keep(h)) continue;
      const last = this.hashes.length - 1;
      if (i !== last) {
        const moved = this.hashes[last]!;
        this.hashes[i] = moved;
        this.slot.set(moved, i);
        this.data.copyWithin(i * this.dims, last * this.dims, (last + 1) * this.dims);
      }
      this.hashes.pop();
      this.slot.delete(h);
    }
  }

  has(hash: string): boolean { return this.slot.has(hash); }

  /** The k most similar vectors, best first; equal scores in hash order (deterministic). */
  search(query: Float32Array, k: number): VectorHit[] {
    const d = this.dims;
    const n = this.hashes.length;
    if (n === 0 || k <= 0) return [];
    if (query.length !== d) throw new RangeError(`query of ${query.length} dimensions for an index of ${d}`);
    const data = this.data;
    // A bounded min-heap of (score, slot) would save little at k = 50; a sorted insert is simpler.
    const top: Array<{ i: number; s: number }> = [];
    let floor = -Infinity;
    const d4 = d - (d % 4);
    for (let i = 0, o = 0; i < n; i++, o += d) {
      // Four running sums: the adds do not wait on each other (about half the time of one sum).
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      let j = 0;
      for (; j < d4; j += 4) {
        s0 += data[o + j]! * query[j]!;
        s1 += data[o + j + 1]! * query[j + 1]!;
        s2 += data[o + j + 2]! * query[j + 2]!;
        s3 += data[o + j + 3]! * query[j + 3]!;
      }
      for (; j < d; j++) s0 += data[o + j]! * query[j]!;
      const s = s0 + s1 + s2 + s3;
      if (top.length >= k && s <= floor) continue;
      let at = top.length;
      while (at > 0 && top[at - 1]!.s < s) at--;
      top.splice(at, 0, { i, s });
      if (top.length > k) top.pop();
      floor = top[top.length - 1]!.s;
    }
    return top.map(({ i, s }) => ({ hash: this.hashes[i]!, score: s }))
      .sort((a, b) => b.score - a.score || (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
  }
}
