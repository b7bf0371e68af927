import { describe, expect, it } from 'vitest';
import { isMidLine, trimCompletion, type CursorContext } from '../../extension/completion/trim.js';
import { buildWindow } from '../../extension/completion/window.js';

const ctx = (over: Partial<CursorContext>): CursorContext => ({
  linePrefix: '', lineSuffix: '', prevLines: [], nextLines: [], maxLines: 8, ...over,
});

describe('completion stop and trim rules', () => {
  it('mid-line cursor gets a single line', () => {
    expect(isMidLine({ lineSuffix: 'b)' })).toBe(true);
    expect(isMidLine({ lineSuffix: ');' })).toBe(false);
    expect(trimCompletion('a, b\n  more\n', ctx({ linePrefix: 'f(', lineSuffix: 'c)' }))).toBe('a, b');
  });

  it('drops a re-typed rest of the line', () => {
    expect(trimCompletion('x + 1, y)', ctx({ linePrefix: 'f(', lineSuffix: 'y)' }))).toBe('x + 1, ');
    expect(trimCompletion('y)', ctx({ linePrefix: 'f(', lineSuffix: 'y)' }))).toBe('');
  });

  it('stops where the completion reaches the code below the cursor', () => {
    const out = trimCompletion('    return a + b\n\ndef sub(a, b):\n    return a - b', ctx({
      linePrefix: '', nextLines: ['', 'def sub(a, b):', '    return a - b'],
    }));
    expect(out).toBe('    return a + b');
  });

  it('stops at a repeated line (model loop)', () => {
    const out = trimCompletion('x += 1\nprint(x)\nprint(x)\nprint(x)', ctx({ linePrefix: '    ' }));
    expect(out).toBe('x += 1\nprint(x)');
  });

  it('drops an echo of the line above the cursor', () => {
    expect(trimCompletion('import os', ctx({ prevLines: ['import os'] }))).toBe('');
  });

  it('keeps at most maxLines lines and no trailing blank lines', () => {
    const out = trimCompletion('a\nb\nc\nd\n\n', ctx({ maxLines: 3 }));
    expect(out).toBe('a\nb\nc');
    expect(trimCompletion('a\n\n\n', ctx({}))).toBe('a');
  });

  it('whitespace-only output is no completion', () => {
    expect(trimCompletion('  \n \n', ctx({}))).toBe('');
    expect(trimCompletion('\r\n', ctx({}))).toBe('');
  });

  it('lone brackets do not count as repeats', () => {
    const out = trimCompletion('  }\n}\n', ctx({ linePrefix: '', nextLines: ['}'] }));
    expect(out).toBe('  }\n}');
  });
});

describe('buildWindow', () => {
  it('splits the document around the cursor within the line limits', () => {
    const lines = ['l0', 'l1', 'l2', 'abcdef', 'l4', 'l5', 'l6'];
    const w = buildWindow(lines, 3, 3, { prefixLines: 2, suffixLines: 2, maxLines: 5 });
    expect(w.prefix).toBe('l1\nl2\nabc');
    expect(w.suffix).toBe('def\nl4\nl5');
    expect(w.cursor.linePrefix).toBe('abc');
    expect(w.cursor.lineSuffix).toBe('def');
    expect(w.cursor.prevLines).toEqual(['l1', 'l2']);
    expect(w.cursor.nextLines).toEqual(['l4', 'l5']);
    expect([w.fromLine, w.toLine]).toEqual([1, 5]);
  });
});
