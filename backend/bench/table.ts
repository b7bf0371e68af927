// Plain-text and markdown tables, and number formatting for figures of mixed magnitude.

export type Align = 'left' | 'right';

export interface Column {
  title: string;
  align: Align;
}

/** Aligned columns separated by two spaces, a dashed rule under the header. */
export function textTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.title.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => columns
    .map((c, i) => (c.align === 'right' ? (cells[i] ?? '').padStart(widths[i]!) : (cells[i] ?? '').padEnd(widths[i]!)))
    .join('  ')
    .trimEnd();
  return [line(columns.map((c) => c.title)), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** GitHub-flavoured markdown table; "|" in cells is escaped. */
export function markdownTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const head = `| ${columns.map((c) => esc(c.title)).join(' | ')} |`;
  const rule = `|${columns.map((c) => (c.align === 'right' ? '---:' : ':---')).join('|')}|`;
  return [head, rule, ...rows.map((r) => `| ${columns.map((_, i) => esc(r[i] ?? '')).join(' | ')} |`)].join('\n');
}

/** Three significant digits for small figures, whole numbers from 1000 up; "-" for NaN. */
export function fmt(v: number): string {
  if (!Number.isFinite(v)) return '-';
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toString();
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  if (a === 0) return '0';
  return v.toPrecision(3);
}
