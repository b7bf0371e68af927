import { describe, expect, it } from 'vitest';
import { diffRegion, hunkEdit, insertionAtCursor, orderHunks, shiftAfter, stillApplies, viewHunk, type Hunk, type LineEdit } from '../../extension/next-edit/hunks.js';
import { jumpLine, Proposal } from '../../extension/next-edit/proposal.js';

const REGION = ['def area(w, height):', '    return width * height', '', '', 'print(area(width=2, height=3))'];

/** Applies edits the way an editor does, on a text with \n line ends. */
function applyEdit(text: string, e: LineEdit): string {
  const lines = text.split('\n');
  const offset = (line: number, ch: number): number => lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0) + ch;
  return text.slice(0, offset(e.startLine, e.startCharacter)) + e.text + text.slice(offset(e.endLine, e.endCharacter));
}

describe('diffRegion', () => {
  it('finds each changed run of lines as a hunk at its document line', () => {
    const answer = 'def area(w, height):\n    return w * height\n\n\nprint(area(w=2, height=3))\n';
    expect(diffRegion(REGION, 10, answer, true)).toEqual([
      { startLine: 11, oldLines: ['    return width * height'], newLines: ['    return w * height'] },
      { startLine: 14, oldLines: ['print(area(width=2, height=3))'], newLines: ['print(area(w=2, height=3))'] },
    ]);
  });

  it('an answer equal to the region (with or without its last line end) changes nothing', () => {
    const same = `${REGION.join('\n')}\n`;
    expect(diffRegion(REGION, 0, same, true)).toEqual([]);
    expect(diffRegion(REGION, 0, same.slice(0, -1), true)).toEqual([]);
    expect(diffRegion(REGION, 0, same.replace(/\n/g, '\r\n'), true)).toEqual([]);
    // At the end of the file the region has no last line end: an added one is an added line.
    expect(diffRegion(REGION, 0, REGION.join('\n'), false)).toEqual([]);
    expect(diffRegion(REGION, 0, same, false)).toEqual([{ startLine: 5, oldLines: [], newLines: [''] }]);
  });

  it('insertions and removals of whole lines', () => {
    const answer = 'def area(w, height):\n    """Area."""\n    return width * height\n\nprint(area(width=2, height=3))\n';
    expect(diffRegion(REGION, 0, answer, true)).toEqual([
      { startLine: 1, oldLines: [], newLines: ['    """Area."""'] },
      { startLine: 3, oldLines: [''], newLines: [] },
    ]);
    expect(diffRegion(['a', 'b'], 7, '', true)).toEqual([{ startLine: 7, oldLines: ['a', 'b'], newLines: [] }]);
  });
});

describe('orderHunks', () => {
  const h = (startLine: number, old = 1): Hunk => ({ startLine, oldLines: Array(old).fill('x'), newLines: ['y'] });
  it('starts with the hunk at or after the cursor, goes down, then wraps to the top', () => {
    const hunks = [h(30), h(2), h(12), h(20, 3)];
    expect(orderHunks(hunks, 10).map((x) => x.startLine)).toEqual([12, 20, 30, 2]);
    // A hunk reaching the cursor's line counts as at it.
    expect(orderHunks(hunks, 21).map((x) => x.startLine)).toEqual([20, 30, 2, 12]);
    expect(orderHunks(hunks, 0).map((x) => x.startLine)).toEqual([2, 12, 20, 30]);
    expect(orderHunks(hunks, 99).map((x) => x.startLine)).toEqual([2, 12, 20, 30]);
  });
});

describe('insertionAtCursor', () => {
  const doc = ['def f(a, b):', '    return ', 'x = 1'];
  const lineAt = (i: number): string => doc[i]!;
  it('an insertion at the cursor is ghost text; any other change is not', () => {
    const h: Hunk = { startLine: 1, oldLines: ['    return '], newLines: ['    return a + b'] };
    expect(insertionAtCursor(h, { line: 1, character: 11 }, lineAt)).toBe('a + b');
    expect(insertionAtCursor(h, { line: 1, character: 4 }, lineAt)).toBeUndefined();
    expect(insertionAtCursor(h, { line: 0, character: 0 }, lineAt)).toBeUndefined();
    const replace: Hunk = { startLine: 1, oldLines: ['    return '], newLines: ['    yield a'] };
    expect(insertionAtCursor(replace, { line: 1, character: 11 }, lineAt)).toBeUndefined();
  });
  it('lines inserted right after the cursor\'s line count when the cursor is at its end', () => {
    const h: Hunk = { startLine: 1, oldLines: [], newLines: ['    """Doc."""'] };
    expect(insertionAtCursor(h, { line: 0, character: 12 }, lineAt)).toBe('\n    """Doc."""');
    expect(insertionAtCursor(h, { line: 0, character: 5 }, lineAt)).toBeUndefined();
    const multi: Hunk = { startLine: 1, oldLines: ['    return '], newLines: ['    return (', '        a + b)'] };
    expect(insertionAtCursor(multi, { line: 1, character: 11 }, lineAt)).toBe('(\n        a + b)');
  });
});

describe('viewHunk', () => {
  it('pairs old and new lines by words, then lines only removed or only added', () => {
    const v = viewHunk({ startLine: 4, oldLines: ['    return width * height', 'old'], newLines: ['    return w * height'] });
    expect(v.changed).toEqual([[
      { kind: 'keep', text: '    return ' }, { kind: 'del', text: 'width' }, { kind: 'ins', text: 'w' }, { kind: 'keep', text: ' * height' },
    ]]);
    expect(v.removedLines).toEqual([5]);
    expect(v.addedLines).toEqual([]);
    const added = viewHunk({ startLine: 1, oldLines: [], newLines: ['a', 'b'] });
    expect(added).toEqual({ changed: [], removedLines: [], addedLines: ['a', 'b'] });
  });
});

describe('hunkEdit', () => {
  const text = 'zero\none\ntwo\nthree';
  const lines = text.split('\n');
  const apply = (h: Hunk): string => applyEdit(text, hunkEdit(h, lines.length, (i) => lines[i]!.length, '\n'));
  it('replaces, removes and inserts whole lines, at the start, middle and end of the document', () => {
    expect(apply({ startLine: 1, oldLines: ['one', 'two'], newLines: ['ONE'] })).toBe('zero\nONE\nthree');
    expect(apply({ startLine: 1, oldLines: ['one'], newLines: [] })).toBe('zero\ntwo\nthree');
    expect(apply({ startLine: 3, oldLines: ['three'], newLines: [] })).toBe('zero\none\ntwo');
    expect(apply({ startLine: 0, oldLines: ['zero', 'one', 'two', 'three'], newLines: [] })).toBe('');
    expect(apply({ startLine: 0, oldLines: [], newLines: ['first'] })).toBe('first\nzero\none\ntwo\nthree');
    expect(apply({ startLine: 2, oldLines: [], newLines: ['1.5', '1.7'] })).toBe('zero\none\n1.5\n1.7\ntwo\nthree');
    expect(apply({ startLine: 4, oldLines: [], newLines: ['four'] })).toBe('zero\none\ntwo\nthree\nfour');
  });
  it('uses the document\'s line end and applies only where the old lines still are', () => {
    const e = hunkEdit({ startLine: 0, oldLines: ['zero'], newLines: ['a', 'b'] }, 4, (i) => lines[i]!.length, '\r\n');
    expect(e.text).toBe('a\r\nb');
    expect(stillApplies({ startLine: 1, oldLines: ['one', 'two'], newLines: [] }, 4, (i) => lines[i]!)).toBe(true);
    expect(stillApplies({ startLine: 1, oldLines: ['one', 'TWO'], newLines: [] }, 4, (i) => lines[i]!)).toBe(false);
    expect(stillApplies({ startLine: 3, oldLines: ['three', 'four'], newLines: [] }, 4, (i) => lines[i]!)).toBe(false);
  });
  it('the hunks of an answer applied one after another (shifted) give the answer', () => {
    const region = ['a', 'b', 'c', 'd', 'e', 'f'];
    const answer = 'a\nB\nB2\nc\ne\nF\ng\n';
    let doc = `head\n${region.join('\n')}\ntail`;
    let rest = orderHunks(diffRegion(region, 1, answer, true), 4);
    expect(rest.map((h) => h.startLine)).toEqual([4, 6, 2]);
    while (rest.length) {
      const [h, ...others] = rest;
      const ls = doc.split('\n');
      expect(stillApplies(h!, ls.length, (i) => ls[i]!)).toBe(true);
      doc = applyEdit(doc, hunkEdit(h!, ls.length, (i) => ls[i]!.length, '\n'));
      rest = shiftAfter(others, h!);
    }
    expect(doc).toBe(`head\n${answer}tail`);
  });
});

describe('Proposal', () => {
  const hunks: Hunk[] = [
    { startLine: 5, oldLines: ['    return width * height'], newLines: ['    return w * height'] },
    { startLine: 9, oldLines: ['print(area(width=2))'], newLines: ['print(area(w=2))', '# done'] },
    { startLine: 12, oldLines: [], newLines: ['added'] },
  ];
  it('Tab jumps to a hunk away from the cursor, Tab there accepts it, then the next is offered, moved by the lines added', () => {
    const p = new Proposal('doc', hunks);
    expect(p.tab(0)).toEqual({ kind: 'jump', line: 5 });
    expect(p.tab(5)).toEqual({ kind: 'accept', hunk: hunks[0] });
    expect(p.accepted()).toEqual(hunks[1]);
    expect(p.remaining).toBe(2);
    expect(p.tab(5)).toEqual({ kind: 'jump', line: 9 });
    expect(p.tab(9)).toEqual({ kind: 'accept', hunk: hunks[1] });
    // The second hunk added a line: the insertion below now goes before line 13, reached from line 12.
    expect(p.accepted()).toEqual({ ...hunks[2], startLine: 13 });
    expect(p.isAt(12)).toBe(true);
    expect(p.tab(12)).toEqual({ kind: 'accept', hunk: { ...hunks[2], startLine: 13 } });
    expect(p.accepted()).toBeUndefined();
    expect(p.tab(0)).toBeUndefined();
  });
  it('dismiss ends it; a jump to an insertion lands on the line before it', () => {
    const p = new Proposal('doc', hunks);
    p.dismiss();
    expect(p.current).toBeUndefined();
    expect(p.tab(5)).toBeUndefined();
    expect(jumpLine(hunks[2]!)).toBe(11);
    expect(jumpLine({ startLine: 0, oldLines: [], newLines: ['x'] })).toBe(0);
  });
});
