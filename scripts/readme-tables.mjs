#!/usr/bin/env node
// node scripts/readme-tables.mjs: rewrites the README's `strata serve` option table (between its
// serve-options markers) from the one option table, backend/app/serve-options.ts.
// test/unit/readme-tables.test.ts fails when the README drifts from it.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(tmpdir(), `strata-serve-options-${process.pid}.mjs`);
await build({
  entryPoints: [join(root, 'backend', 'app', 'serve-options.ts')], outfile: out, bundle: true,
  platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning',
});
const { serveOptionsMarkdown, README_MARKERS } = await import(pathToFileURL(out).href);
rmSync(out, { force: true });
const path = join(root, 'README.md');
const text = readFileSync(path, 'utf8');
const start = text.indexOf(README_MARKERS.start);
const end = text.indexOf(README_MARKERS.end);
if (start < 0 || end < start) throw new Error(`README.md has no ${README_MARKERS.start} … ${README_MARKERS.end} section`);
const next = `${text.slice(0, start + README_MARKERS.start.length)}\n${serveOptionsMarkdown()}\n${text.slice(end)}`;
if (next !== text) writeFileSync(path, next);
console.log(next === text ? 'README.md: the option table is current' : 'README.md: option table rewritten');
