// The tables in docs/ that are generated from their one source: the `strata serve` options (from
// backend/app/serve-options.ts) and the error codes (from contract/error-codes.ts) in docs/server.md,
// and the VS Code settings (from package.json's contributes.configuration) in docs/user-guide.md. Each sits between two HTML comment markers.
// `npm run docs:tables` (scripts/docs-tables.mjs) rewrites them; test/unit/docs-tables.test.ts
// fails while one is out of date.
import pkg from '../package.json' with { type: 'json' };
import { serveOptionsMarkdown } from '../backend/app/serve-options.js';
import { ERROR_CODES, errorType, type ErrorCode, type ErrorSpec } from '../contract/error-codes.js';

export interface DocTable {
  /** The page, relative to the repository root. */
  file: string;
  /** The marker's name: `<!-- NAME: generated … -->` … `<!-- /NAME -->`. */
  name: string;
  /** What the table is generated from (said in the marker). */
  source: string;
  render(): string;
}

export const DOC_TABLES: readonly DocTable[] = [
  { file: 'docs/server.md', name: 'serve-options', source: 'backend/app/serve-options.ts', render: serveOptionsMarkdown },
  { file: 'docs/user-guide.md', name: 'settings', source: 'package.json', render: settingsMarkdown },
  { file: 'docs/server.md', name: 'error-codes', source: 'contract/error-codes.ts', render: errorCodesMarkdown },
];

export function markers(table: DocTable): { start: string; end: string } {
  return { start: `<!-- ${table.name}: generated from ${table.source} by scripts/docs-tables.mjs -->`, end: `<!-- /${table.name} -->` };
}

/** The table's text as the page holds it now (between its markers), or null when the page has no markers. */
export function tableIn(page: string, table: DocTable): string | null {
  const { start, end } = markers(table);
  const a = page.indexOf(start);
  const b = page.indexOf(end, a + start.length);
  if (a < 0 || b < 0) return null;
  return page.slice(a + start.length, b).trim();
}

/** The page with the table between its markers regenerated. */
export function withTable(page: string, table: DocTable): string {
  const { start, end } = markers(table);
  const a = page.indexOf(start);
  const b = page.indexOf(end, a + start.length);
  if (a < 0 || b < 0) throw new Error(`${table.file} has no ${start} … ${end} section`);
  return `${page.slice(0, a + start.length)}\n${table.render()}\n${page.slice(b)}`;
}

interface SettingSchema {
  type?: string | string[];
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  description?: string;
  markdownDescription?: string;
}

const cell = (s: string): string => s.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|').trim();

function valueText(s: SettingSchema): string {
  if (s.enum) return s.enum.map((v) => (v === '' ? '(empty)' : String(v))).join(' | ');
  const type = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any');
  if (type === 'integer' || type === 'number') {
    if (s.minimum !== undefined && s.maximum !== undefined) return `${type} ${s.minimum}..${s.maximum}`;
    if (s.minimum !== undefined) return `${type} >= ${s.minimum}`;
    if (s.maximum !== undefined) return `${type} <= ${s.maximum}`;
  }
  return type;
}

/** How a setting's default reads in the table. */
export function settingDefaultText(value: unknown): string {
  return value === '' ? 'empty' : `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

/** The VS Code settings table: every strata.* setting of package.json, in its order. */
export function settingsMarkdown(): string {
  const properties = pkg.contributes.configuration.properties as Record<string, SettingSchema>;
  const rows = ['| setting | value | default | description |', '|---|---|---|---|'];
  for (const [name, s] of Object.entries(properties)) {
    // VS Code's settings links (`#files.exclude#`) read as the setting's name outside the settings editor.
    const description = (s.markdownDescription ?? s.description ?? '').replace(/`?#([\w.]+)#`?/g, '`$1`');
    rows.push(`| \`${name}\` | ${cell(valueText(s))} | ${cell(settingDefaultText(s.default))} | ${cell(description)} |`);
  }
  return rows.join('\n');
}

/** The error codes table: one row per code of contract/error-codes.ts, in its order. */
export function errorCodesMarkdown(): string {
  const rows = ['| status | code | type | fields | when |', '|---|---|---|---|---|'];
  for (const [code, spec] of Object.entries(ERROR_CODES) as [ErrorCode, ErrorSpec][]) {
    const fields = (spec.fields ?? []).map((f) => `\`${f}\``).join(', ');
    rows.push(`| ${spec.status} | \`${code}\` | ${errorType(code)} | ${fields} | ${cell(spec.when)} |`);
  }
  return rows.join('\n');
}
