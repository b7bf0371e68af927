#!/usr/bin/env node
// Runs the bundled CLI (npm run build makes dist/strata.mjs).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/strata.mjs', import.meta.url));
if (!existsSync(bundle)) {
  process.stderr.write('strata: dist/strata.mjs is missing; run `npm run build` first\n');
  process.exit(1);
}
await import(bundle);
