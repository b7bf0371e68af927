import { describe, expect, it } from 'vitest';
import { CompletionCache } from '../../extension/completion/cache.js';
import { planInfill, type InfillPlan, type SelectedCompletion } from '../../extension/completion/selection.js';
import { trimCompletion } from '../../extension/completion/trim.js';
import { buildWindow } from '../../extension/completion/window.js';

const opts = { prefixLines: 8, suffixLines: 8, maxLines: 4 };
const sel = (line: number, start: number, end: number, text: string): SelectedCompletion => ({
  start: { line, character: start }, end: { line, character: end }, text,
});

/** The window and plan for a cursor at (line, character) of `lines`. */
function plan(lines: string[], line: number, character: number, selected?: SelectedCompletion): InfillPlan | undefined {
  return planInfill(buildWindow(lines, line, character, opts), { line, character }, selected);
}

/** What the document line becomes once VS Code applies an item with this plan and insert text. */
function applyItem(lineText: string, p: InfillPlan, insert: string): string {
  return lineText.slice(0, p.replaceStart) + insert + lineText.slice(p.replaceEnd);
}

describe('planInfill without a selected suggestion', () => {
  it('is the plain window with an item at the cursor', () => {
    const lines = ['def f(x):', '    ret', ''];
    const p = plan(lines, 1, 7)!;
    const w = buildWindow(lines, 1, 7, opts);
    expect([p.prefix, p.suffix, p.cursor]).toEqual([w.prefix, w.suffix, w.cursor]);
    expect([p.replaceStart, p.replaceEnd]).toEqual([7, 7]);
    expect(p.insertText('urn x')).toBe('urn x');
    expect(p.insertText('')).toBeUndefined();
  });
});

describe('planInfill with a selected suggestion', () => {
  it('sends the document with the suggestion applied and shows suggestion + completion over its range', () => {
    const lines = ['import os', 'os.pa', 'print(1)'];
    const p = plan(lines, 1, 5, sel(1, 3, 5, 'path'))!;
    expect(p.prefix).toBe('import os\nos.path');
    expect(p.suffix).toBe('\nprint(1)');
    expect(p.cursor.linePrefix).toBe('os.path');
    expect(p.cursor.lineSuffix).toBe('');
    expect(p.cursor.prevLines).toEqual(['import os']);
    expect([p.replaceStart, p.replaceEnd]).toEqual([3, 5]);
    const insert = p.insertText('.join(a, b)')!;
    // VS Code's rule: the item starts with the selected text and replaces the same range.
    expect(insert).toBe('path.join(a, b)');
    expect(applyItem(lines[1]!, p, insert)).toBe('os.path.join(a, b)');
  });

  it('handles a range that does not start at a word start (VS Code docs: ".log" replacing ".")', () => {
    const lines = ['console.'];
    const p = plan(lines, 0, 8, sel(0, 7, 8, '.log'))!;
    expect(p.prefix).toBe('console.log');
    expect([p.replaceStart, p.replaceEnd]).toEqual([7, 8]);
    const insert = p.insertText('()')!;
    expect(insert).toBe('.log()');
    expect(applyItem(lines[0]!, p, insert)).toBe('console.log()');
  });

  it('replaces text after the cursor when the range covers it (replace mode)', () => {
    const lines = ['x = getVa(1)'];
    // Cursor after "get", the suggestion replaces "getVa" with "getValue".
    const p = plan(lines, 0, 7, sel(0, 4, 9, 'getValue'))!;
    expect(p.prefix).toBe('x = getValue');
    expect(p.suffix).toBe('(1)');
    expect(p.cursor.lineSuffix).toBe('(1)');
    expect([p.replaceStart, p.replaceEnd]).toEqual([4, 9]);
    expect(applyItem(lines[0]!, p, p.insertText('OrDefault')!)).toBe('x = getValueOrDefault(1)');
  });

  it('an empty selected text deletes the range; the item is the completion alone', () => {
    const lines = ['let total = su'];
    const p = plan(lines, 0, 14, sel(0, 12, 14, ''))!;
    expect(p.prefix).toBe('let total = ');
    expect(p.insertText('0;')).toBe('0;');
    expect(applyItem(lines[0]!, p, p.insertText('0;')!)).toBe('let total = 0;');
  });

  it('shows nothing when the model adds nothing to the suggestion', () => {
    const p = plan(['os.pa'], 0, 5, sel(0, 3, 5, 'path'))!;
    expect(p.insertText('')).toBeUndefined();
  });

  it('trims with the context of the applied suggestion', () => {
    const lines = ['f(va, y)'];
    const p = plan(lines, 0, 4, sel(0, 2, 4, 'value'))!;
    expect(p.cursor.linePrefix).toBe('f(value');
    expect(p.cursor.lineSuffix).toBe(', y)');
    // Mid-line: one line, and the re-typed rest of the line is dropped.
    expect(trimCompletion('.x, y)\nmore', p.cursor)).toBe('.x');
  });

  it('a multi-line suggestion moves the insertion point to its last line', () => {
    const lines = ['a = 1', 'if'];
    const p = plan(lines, 1, 2, sel(1, 0, 2, 'if cond:\n    '))!;
    expect(p.prefix).toBe('a = 1\nif cond:\n    ');
    expect(p.cursor.linePrefix).toBe('    ');
    expect(p.cursor.prevLines).toEqual(['a = 1', 'if cond:']);
    expect(p.insertText('pass')).toBe('if cond:\n    pass');
  });

  it('rejects a selection off the cursor line or whose range does not hold the cursor', () => {
    const lines = ['one', 'two three'];
    expect(plan(lines, 1, 3, sel(0, 0, 3, 'once'))).toBeUndefined();
    expect(plan(lines, 1, 3, { start: { line: 0, character: 2 }, end: { line: 1, character: 3 }, text: 'x' })).toBeUndefined();
    expect(plan(lines, 1, 3, sel(1, 4, 9, 'thr'))).toBeUndefined(); // starts after the cursor
    expect(plan(lines, 1, 3, sel(1, 0, 2, 'tw'))).toBeUndefined(); // ends before the cursor
    expect(plan(lines, 1, 3, sel(1, 0, 20, 'two'))).toBeUndefined(); // past the line's end
    expect(plan(lines, 1, 3, sel(1, -1, 3, 'two'))).toBeUndefined();
  });
});

describe('cache keys with a selected suggestion', () => {
  it('differ from the plain prefix, so a plain answer is not shown after the suggestion', () => {
    const lines = ['const n = arr.le'];
    const plain = plan(lines, 0, 16)!;
    const withSel = plan(lines, 0, 16, sel(0, 14, 16, 'length'))!;
    expect(withSel.prefix).not.toBe(plain.prefix);

    const cache = new CompletionCache();
    cache.put(plain.prefix, plain.suffix, 'vel - 1;');
    // The plain answer ("le" + "vel - 1;") does not continue "length": not reused.
    expect(cache.get(withSel.prefix, withSel.suffix)).toBeUndefined();
    cache.put(withSel.prefix, withSel.suffix, ' > 0;');
    expect(cache.get(withSel.prefix, withSel.suffix)).toBe(' > 0;');
    expect(cache.get(plain.prefix, plain.suffix)).toBe('vel - 1;');
  });

  it('differ per selected suggestion', () => {
    const lines = ['os.pa'];
    const a = plan(lines, 0, 5, sel(0, 3, 5, 'path'))!;
    const b = plan(lines, 0, 5, sel(0, 3, 5, 'pardir'))!;
    const cache = new CompletionCache();
    cache.put(a.prefix, a.suffix, '.join(x)');
    expect(cache.get(b.prefix, b.suffix)).toBeUndefined();
  });

  it('a plain answer that does continue the suggestion serves the rest (same document text)', () => {
    const lines = ['os.pa'];
    const plain = plan(lines, 0, 5)!;
    const withSel = plan(lines, 0, 5, sel(0, 3, 5, 'path'))!;
    const cache = new CompletionCache();
    cache.put(plain.prefix, plain.suffix, 'th.join(x)');
    const rest = cache.get(withSel.prefix, withSel.suffix)!;
    expect(rest).toBe('.join(x)');
    expect(withSel.insertText(rest)).toBe('path.join(x)');
  });
});
