// docs/design.md's Folders table matches the tree: every folder of the source folders (and each
// folder directly inside them) is named in the table's first column, every folder named there
// exists, and every unit of native/src/ (a .cpp/.h name) is named in the native/src/ row. A new
// folder or engine unit fails here until the design page says what it is for.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const TOPS = ['backend', 'extension', 'webview', 'common', 'contract', 'native', 'test', 'scripts', 'tools'];
/** Build outputs and installed dependencies, not folders of the source. */
const NOT_SOURCE = /^(build.*|node_modules)$/;

function folderTable(): string[] {
  const page = readFileSync(join(root, 'docs/design.md'), 'utf8');
  const body = page.slice(page.indexOf('\n## Folders'), page.indexOf('\n## Who owns what'));
  return body.split('\n').filter((l) => l.startsWith('| `'));
}

function namedFolders(rows: string[]): Set<string> {
  return new Set(rows.flatMap((r) => [...r.split(' | ')[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, ''))));
}

function realFolders(): string[] {
  return TOPS.flatMap((top) => [top, ...readdirSync(join(root, top))
    .filter((d) => !NOT_SOURCE.test(d) && statSync(join(root, top, d)).isDirectory())
    .map((d) => `${top}/${d}`)]);
}

describe('docs/design.md folder table', () => {
  const rows = folderTable();
  const named = namedFolders(rows);

  it('names every source folder and the folders directly inside each', () => {
    expect(realFolders().filter((f) => !named.has(f))).toEqual([]);
  });

  it('names only paths that exist', () => {
    expect([...named].filter((f) => !existsSync(join(root, f)))).toEqual([]);
  });

  it('names every unit of native/src/ in its row', () => {
    const row = rows.find((r) => r.split(' | ')[0]!.includes('`native/src/`'))!;
    const units = [...new Set(readdirSync(join(root, 'native/src')).map((f) => f.replace(/\.(cpp|h)$/, '')))];
    expect(units.filter((u) => !new RegExp(`\`${u}(\\.h)?\``).test(row))).toEqual([]);
  });

  it('finds a folder the table misses (the check itself)', () => {
    expect(namedFolders(['| `a/`, `a/b` | x |'])).toEqual(new Set(['a', 'a/b']));
    expect(realFolders()).toContain('backend/http');
  });
});
