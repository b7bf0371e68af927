import { describe, expect, it } from 'vitest';
import { CompletionCache } from '../../extension/completion/cache.js';

describe('CompletionCache', () => {
  it('returns an exact hit, including an empty answer', () => {
    const c = new CompletionCache();
    c.put('def add(a, b):\n    ', '\n', 'return a + b');
    c.put('x = ', '', '');
    expect(c.get('def add(a, b):\n    ', '\n')).toBe('return a + b');
    expect(c.get('x = ', '')).toBe('');
    expect(c.get('def add(a, b):\n    ', 'other')).toBeUndefined();
  });

  it('serves the rest of a suggestion while the user types along it', () => {
    const c = new CompletionCache();
    c.put('const total = ', ';\n', 'items.reduce((a, b) => a + b, 0)');
    expect(c.get('const total = it', ';\n')).toBe('ems.reduce((a, b) => a + b, 0)');
    expect(c.get('const total = items.reduce(', ';\n')).toBe('(a, b) => a + b, 0)');
    // Typed something else: not the same suggestion any more.
    expect(c.get('const total = x', ';\n')).toBeUndefined();
    // Typed all of it: nothing left to suggest from this entry.
    expect(c.get('const total = items.reduce((a, b) => a + b, 0)', ';\n')).toBeUndefined();
  });

  it('serves the rest after a partial (word) accept across lines', () => {
    const c = new CompletionCache();
    c.put('if (x) {\n  ', '\n}', 'return y;\n  // done');
    expect(c.get('if (x) {\n  return', '\n}')).toBe(' y;\n  // done');
    expect(c.get('if (x) {\n  return y;\n', '\n}')).toBe('  // done');
  });

  it('evicts the least recently used entry beyond its capacity', () => {
    const c = new CompletionCache(2);
    c.put('a', '', '1');
    c.put('b', '', '2');
    expect(c.get('a', '')).toBe('1'); // touch a: b is now oldest
    c.put('c', '', '3');
    expect(c.size).toBe(2);
    expect(c.get('b', '')).toBeUndefined();
    expect(c.get('a', '')).toBe('1');
    expect(c.get('c', '')).toBe('3');
  });

  it('replaces an entry for the same key', () => {
    const c = new CompletionCache();
    c.put('p', 's', 'old');
    c.put('p', 's', 'new');
    expect(c.size).toBe(1);
    expect(c.get('p', 's')).toBe('new');
  });
});
