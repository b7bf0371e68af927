import { describe, expect, it } from 'vitest';
import { fmt, markdownTable, textTable } from '../../backend/bench/table.js';

describe('bench tables', () => {
  const cols = [{ title: 'name', align: 'left' as const }, { title: 'value', align: 'right' as const }];

  it('aligns text columns', () => {
    expect(textTable(cols, [['a', '1'], ['longer', '1234']])).toBe(
      ['name    value', '------  -----', 'a           1', 'longer   1234'].join('\n'));
  });

  it('writes markdown with alignment and escapes pipes', () => {
    expect(markdownTable(cols, [['a|b', '2']])).toBe(['| name | value |', '|:---|---:|', '| a\\|b | 2 |'].join('\n'));
  });

  it('formats figures by magnitude', () => {
    expect(fmt(12345.6)).toBe('12346');
    expect(fmt(215.4)).toBe('215');
    expect(fmt(21.54)).toBe('21.5');
    expect(fmt(2.154)).toBe('2.15');
    expect(fmt(0.01234)).toBe('0.0123');
    expect(fmt(0)).toBe('0');
    expect(fmt(Number.NaN)).toBe('-');
  });
});
