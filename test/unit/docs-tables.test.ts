// The generated tables in docs/ against their one source: the `strata serve` options and the error
// codes in docs/server.md (backend/app/serve-options.ts, contract/error-codes.ts) and the VS Code
// settings in docs/user-guide.md (package.json's contributes.configuration). `npm run docs:tables`
// rewrites them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVE_OPTION_KEYS } from '../../backend/app/serve-options.js';
import { ERROR_CODES, errorStatus } from '../../contract/error-codes.js';
import { SETTING_NAMES, settingDefault } from '../../extension/config/settings-schema.js';
import { DOC_TABLES, settingDefaultText, tableIn, withTable, type DocTable } from '../../scripts/docs-tables.js';

const root = join(import.meta.dirname, '..', '..');
const page = (t: DocTable): string => readFileSync(join(root, t.file), 'utf8');
const byName = (name: string): DocTable => DOC_TABLES.find((t) => t.name === name)!;

/** The cells of each body row (a `\|` inside a cell is no column break). */
function rowsOf(table: string): string[][] {
  return table.split('\n').slice(2).map((row) => row.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim()));
}

describe('generated docs tables', () => {
  for (const table of DOC_TABLES) {
    it(`${table.file}: the ${table.name} table is the one generated from ${table.source} (run npm run docs:tables)`, () => {
      const shown = tableIn(page(table), table);
      expect(shown, `${table.file} has the ${table.name} markers`).not.toBeNull();
      expect(shown).toBe(table.render());
    });
  }

  it('the settings table lists every strata.* setting of package.json, in order, with its default', () => {
    const rows = rowsOf(byName('settings').render());
    expect(rows.map((cells) => cells[0]!.replace(/`/g, ''))).toEqual(SETTING_NAMES.map((n) => `strata.${n}`));
    for (const cells of rows) {
      expect(cells, cells[0]).toHaveLength(4);
      const name = cells[0]!.replace(/`|strata\./g, '') as (typeof SETTING_NAMES)[number];
      expect(cells[2], name).toBe(settingDefaultText(settingDefault(name)));
    }
  });

  it('the option table lists every serve option, then --config', () => {
    const flags = rowsOf(byName('serve-options').render()).map((cells) => cells[0]!.replace(/`/g, ''));
    expect(flags).toHaveLength(SERVE_OPTION_KEYS.length + 1);
    expect(flags.at(-1)).toBe('--config');
    expect(flags).toContain('--model');
  });

  it('the error table lists every code of contract/error-codes.ts, in order, with its status', () => {
    const rows = rowsOf(byName('error-codes').render());
    expect(rows.map((cells) => cells[1]!.replace(/`/g, ''))).toEqual(Object.keys(ERROR_CODES));
    for (const cells of rows) expect(Number(cells[0]), cells[1]).toBe(errorStatus(cells[1]!.replace(/`/g, '') as keyof typeof ERROR_CODES));
    expect(rows.find((cells) => cells[1] === '`context_length_exceeded`')?.[3]).toBe('`n_prompt_tokens`, `n_ctx`');
  });

  it('a stale table is rewritten between its markers and the rest of the page is kept', () => {
    const table = byName('settings');
    const stale = `# Page\n\nbefore\n\n<!-- settings: generated from package.json by scripts/docs-tables.mjs -->\n| old |\n<!-- /settings -->\n\nafter\n`;
    const next = withTable(stale, table);
    expect(tableIn(next, table)).toBe(table.render());
    expect(next.startsWith('# Page\n\nbefore\n\n')).toBe(true);
    expect(next.endsWith('<!-- /settings -->\n\nafter\n')).toBe(true);
    expect(() => withTable('# no markers\n', table)).toThrow(/no <!-- settings/);
  });
});
