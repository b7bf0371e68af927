// Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009): each list votes 1 / (k + rank) for
// its items, so an item high in both the full-text and the vector list wins without the two
// lists' scores (BM25 and cosine) ever being compared. k = 60, the paper's value. Pure.

export const RRF_K = 60;

export interface Ranked<T> { key: T; rank: number }

/** Fused order, best first; ties keep the order of first appearance (the first list's first). */
export function reciprocalRankFusion<T>(lists: ReadonlyArray<readonly T[]>, k = RRF_K): Array<{ key: T; score: number; ranks: Array<number | null> }> {
  const acc = new Map<T, { score: number; ranks: Array<number | null>; first: number }>();
  let order = 0;
  lists.forEach((list, li) => {
    list.forEach((key, i) => {
      let e = acc.get(key);
      if (!e) {
        e = { score: 0, ranks: lists.map(() => null), first: order++ };
        acc.set(key, e);
      }
      if (e.ranks[li] !== null) return; // a list names an item once; later repeats do not vote
      e.ranks[li] = i + 1;
      e.score += 1 / (k + i + 1);
    });
  });
  return [...acc.entries()].sort((a, b) => b[1].score - a[1].score || a[1].first - b[1].first)
    .map(([key, e]) => ({ key, score: e.score, ranks: e.ranks }));
}
