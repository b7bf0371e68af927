// The README's settings tables against their one source: the `strata serve` option table is
// generated from backend/app/serve-options.ts (node scripts/readme-tables.mjs writes it), and the
// VS Code settings table lists exactly package.json's strata.* settings with their defaults.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { README_MARKERS, serveOptionsMarkdown } from '../../backend/app/serve-options.js';
import { SETTING_NAMES, settingDefault } from '../../extension/config/settings-schema.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

function section(start: string, end: string): string {
  const a = readme.indexOf(start);
  const b = readme.indexOf(end, a + start.length);
  expect(a, `README.md has ${start}`).toBeGreaterThanOrEqual(0);
  expect(b, `README.md has ${end} after ${start}`).toBeGreaterThan(a);
  return readme.slice(a + start.length, b).trim();
}

describe('README tables', () => {
  it('the strata serve option table is the one generated from serve-options.ts (run node scripts/readme-tables.mjs)', () => {
    expect(section(README_MARKERS.start, README_MARKERS.end)).toBe(serveOptionsMarkdown());
  });

  it('the VS Code settings table lists every strata.* setting of package.json, in order, with its default', () => {
    const table = section('### Settings\n\n', '\n\n');
    const rows = table.split('\n').slice(2).map((line) => {
      const cells = line.split('|').map((c) => c.trim());
      return { name: cells[1]!.replace(/^`strata\.|`$/g, ''), shown: cells[2]! };
    });
    const shown = (v: unknown): string => (v === '' ? 'empty' : `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``);
    expect(rows.map((r) => r.name)).toEqual(SETTING_NAMES);
    for (const r of rows) expect(r.shown, `strata.${r.name}`).toBe(shown(settingDefault(r.name as (typeof SETTING_NAMES)[number])));
  });
});
