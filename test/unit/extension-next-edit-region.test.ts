import { describe, expect, it } from 'vitest';
import { chooseRegion, type RegionInput } from '../../extension/next-edit/region.js';

const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`);
const input = (over: Partial<RegionInput>): RegionInput => ({
  lineCount: lines.length, line: (i) => lines[i]!, cursor: { line: 50, character: 3 },
  regionLines: 12, contextLines: 4, maxExcerptChars: 100_000, ...over,
});

describe('chooseRegion', () => {
  it('holds the cursor, a third above it and the rest below, with context lines each side', () => {
    const r = chooseRegion(input({}))!;
    expect([r.startLine, r.endLine]).toEqual([47, 59]);
    expect([r.excerptStartLine, r.excerptEndLine]).toEqual([43, 63]);
    expect(r.lines).toEqual(lines.slice(47, 59));
    // Offsets into the excerpt: the region's text, the cursor inside it.
    expect(r.excerpt.slice(r.start, r.end)).toBe(lines.slice(47, 59).map((l) => `${l}\n`).join(''));
    expect(r.excerpt.slice(0, r.start)).toBe(lines.slice(43, 47).map((l) => `${l}\n`).join(''));
    expect(r.excerpt.slice(r.cursor - 3, r.cursor + 5)).toBe('line 50\n');
    expect(r.excerpt.slice(r.cursor, r.cursor + 5)).toBe('e 50\n');
  });

  it('takes in the edit being made above or below the cursor when both fit', () => {
    expect(chooseRegion(input({ edit: { startLine: 40, endLine: 41 } }))!.startLine).toBe(40);
    const below = chooseRegion(input({ edit: { startLine: 58, endLine: 60 } }))!;
    expect([below.startLine, below.endLine]).toEqual([49, 61]);
    // Never past the cursor: it starts the region at most.
    const after = chooseRegion(input({ edit: { startLine: 60, endLine: 62 } }))!;
    expect([after.startLine, after.endLine]).toEqual([50, 62]);
    // An edit too far to share the region with the cursor: the cursor wins.
    const far = chooseRegion(input({ edit: { startLine: 10, endLine: 12 } }))!;
    expect(far.startLine).toBe(39);
    expect(far.startLine <= 50 && far.endLine > 50).toBe(true);
  });

  it('stays inside the document at its start and end; a short document is its own region', () => {
    expect(chooseRegion(input({ cursor: { line: 1, character: 0 } }))!.startLine).toBe(0);
    const end = chooseRegion(input({ cursor: { line: 99, character: 0 } }))!;
    expect([end.startLine, end.endLine, end.excerptEndLine]).toEqual([88, 100, 100]);
    // The file's last line has no line end (its text does not end with one).
    expect(end.excerpt.endsWith('line 99')).toBe(true);
    const short = chooseRegion({ ...input({}), lineCount: 3, cursor: { line: 2, character: 99 } })!;
    expect([short.startLine, short.endLine, short.excerptStartLine, short.excerptEndLine]).toEqual([0, 3, 0, 3]);
    expect(short.cursor).toBe(short.excerpt.length); // past the line's end: at its end
  });

  it('drops context lines (farthest first) to fit the size limit, and gives up when the region alone is too big', () => {
    const regionChars = lines.slice(47, 59).map((l) => `${l}\n`).join('').length;
    const tight = chooseRegion(input({ maxExcerptChars: regionChars + 16 }))!;
    expect([tight.excerptStartLine, tight.excerptEndLine]).toEqual([46, 60]);
    expect(tight.excerpt.length).toBeLessThanOrEqual(regionChars + 16);
    expect(chooseRegion(input({ maxExcerptChars: regionChars - 1 }))).toBeUndefined();
  });
});
