#!/usr/bin/env node
// npm run docs:tables: rewrites the generated tables in docs/ (the `strata serve` options in
// docs/server.md, the VS Code settings in docs/user-guide.md) from their sources. What they are and
// where they sit: scripts/docs-tables.ts; test/unit/docs-tables.test.ts fails while one is out of date.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(tmpdir(), `strata-docs-tables-${process.pid}.mjs`);
await build({
  entryPoints: [join(root, 'scripts', 'docs-tables.ts')], outfile: out, bundle: true,
  platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning',
});
const { DOC_TABLES, withTable } = await import(pathToFileURL(out).href);
rmSync(out, { force: true });
for (const table of DOC_TABLES) {
  const path = join(root, table.file);
  const text = readFileSync(path, 'utf8');
  const next = withTable(text, table);
  if (next !== text) writeFileSync(path, next);
  console.log(`${table.file}: the ${table.name} table ${next === text ? 'is current' : 'was rewritten'}`);
}
