import { describe, expect, it } from 'vitest';
import { codebaseQuery, indexChunks, pickChunks, RecentEdits } from '../../extension/completion/context-chunks.js';
import { CompletionStats } from '../../extension/completion/stats.js';

const file = (n: number, tag: string): string => Array.from({ length: n }, (_, i) => `${tag}${i}`).join('\n');

describe('pickChunks', () => {
  it('takes chunks around focus lines, most recent source first', () => {
    const chunks = pickChunks([
      { filename: 'old.ts', text: file(100, 'o'), focusLines: [50], lastUsed: 1 },
      { filename: 'new.ts', text: file(100, 'n'), focusLines: [10], lastUsed: 2 },
    ], { chunkLines: 4, maxChunks: 5, maxChars: 10_000 });
    expect(chunks.map((c) => c.filename)).toEqual(['new.ts', 'old.ts']);
    expect(chunks[0]!.text).toBe('n8\nn9\nn10\nn11');
    expect(chunks[1]!.text).toBe('o48\no49\no50\no51');
  });

  it('clamps at file edges, skips overlaps, duplicates and the excluded window', () => {
    const chunks = pickChunks([
      { filename: 'a.ts', text: file(20, 'a'), focusLines: [0, 1, 19, 10], lastUsed: 3 },
      { filename: 'b.ts', text: file(20, 'a'), focusLines: [0], lastUsed: 2 }, // same text as a's first chunk
    ], { chunkLines: 4, maxChunks: 10, maxChars: 10_000, exclude: { filename: 'a.ts', fromLine: 9, toLine: 12 } });
    expect(chunks).toEqual([
      { filename: 'a.ts', text: 'a0\na1\na2\na3' },
      { filename: 'a.ts', text: 'a16\na17\na18\na19' },
    ]);
  });

  it('respects maxChunks and maxChars', () => {
    const src = { filename: 'x', text: file(200, 'x'), focusLines: [10, 50, 90, 130], lastUsed: 1 };
    expect(pickChunks([src], { chunkLines: 4, maxChunks: 2, maxChars: 10_000 })).toHaveLength(2);
    const small = pickChunks([src], { chunkLines: 4, maxChunks: 10, maxChars: 30 });
    expect(small.reduce((n, c) => n + c.text.length, 0)).toBeLessThanOrEqual(30);
    expect(small.length).toBeGreaterThan(0);
  });
});

describe('codebase context (strata.inlineCompletion.codebaseContext)', () => {
  it('the query is the identifiers before the cursor, nearest first, once each, without keywords', () => {
    const prefix = 'import { readFile } from "fs";\n\nfunction loadModel(path) {\n  const text = readFile(path);\n  return parseGguf(text, options.vocab';
    expect(codebaseQuery(prefix)).toBe('vocab options text parseGguf path readFile loadModel');
    expect(codebaseQuery(prefix, { lines: 1, maxTerms: 2 })).toBe('vocab options');
    expect(codebaseQuery('  return x;')).toBe('');
  });

  it('index hits join the picked chunks: not the infill window, no repeats, within the shared budget', () => {
    const picked = [{ filename: 'a.ts', text: 'a0\na1' }];
    const hits = [
      { path: 'cur.ts', startLine: 10, endLine: 14, text: 'inside the window' },
      { path: 'lib.ts', startLine: 1, endLine: 3, text: 'export function parseGguf() {}' },
      { path: 'dup.ts', startLine: 1, endLine: 1, text: 'a1' },
      { path: 'big.ts', startLine: 1, endLine: 1, text: 'x'.repeat(500) },
      { path: 'cur.ts', startLine: 30, endLine: 31, text: 'below the window' },
      { path: 'more.ts', startLine: 1, endLine: 1, text: 'one too many' },
    ];
    const got = indexChunks(hits, picked, { chunkLines: 32, maxChunks: 3, maxChars: 100, exclude: { filename: 'cur.ts', fromLine: 5, toLine: 20 } });
    expect(got).toEqual([{ filename: 'lib.ts', text: 'export function parseGguf() {}' }, { filename: 'cur.ts', text: 'below the window' }]);
    expect(indexChunks(hits, [...picked, ...got], { chunkLines: 32, maxChunks: 3, maxChars: 100 })).toEqual([]);
  });
});

describe('RecentEdits', () => {
  it('keeps newest files first, merges nearby edits, and bounds its size', () => {
    const r = new RecentEdits(2, 2);
    r.record('a', 10);
    r.record('a', 12); // near 10: replaces it
    r.record('b', 5);
    r.record('a', 40);
    expect(r.list().map((f) => [f.filename, f.lines])).toEqual([['a', [40, 12]], ['b', [5]]]);
    r.record('c', 1);
    expect(r.list().map((f) => f.filename)).toEqual(['c', 'a']);
  });
});

describe('CompletionStats', () => {
  it('counts and summarises latency', () => {
    const s = new CompletionStats();
    expect(s.view().latencyAvgMs).toBeNull();
    for (const ms of [10, 20, 30, 40, 100]) s.latency(ms);
    s.request(); s.request(); s.shown(); s.accepted(); s.cacheHit();
    const v = s.view();
    expect(v).toMatchObject({ requests: 2, shown: 1, accepted: 1, cacheHits: 1, latencyAvgMs: 40, latencyP50Ms: 30, latencyP90Ms: 100 });
  });
});
