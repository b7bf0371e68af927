#!/usr/bin/env node
// Bundles the e2e harness with esbuild into test-output/e2e/build/:
//   run.mjs, electron.mjs          the two runners (Node ESM; playwright-core and
//                                  @vscode/test-electron load at run time from the e2e cache)
//   exthost-dev/                   a stub extension to develop (package.json only) holding the
//     suite/index.js               extension-host suite (CommonJS; `vscode` is the host's)
// VS Code maps `require('vscode')` to the extension whose folder holds the requiring file, so
// the suite lives inside the stub extension's folder.
import { build } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const out = join(root, 'test-output', 'e2e', 'build');
const dev = join(out, 'exthost-dev');
mkdirSync(join(dev, 'suite'), { recursive: true });

const node = {
  platform: 'node', target: 'node20', bundle: true, sourcemap: 'inline', logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  format: 'esm',
};

await build({ ...node, entryPoints: [join(here, 'run.ts')], outfile: join(out, 'run.mjs') });
await build({ ...node, entryPoints: [join(here, 'electron.ts')], outfile: join(out, 'electron.mjs') });
await build({
  entryPoints: [join(here, 'suite', 'index.ts')], outfile: join(dev, 'suite', 'index.js'),
  platform: 'node', target: 'node20', format: 'cjs', bundle: true, sourcemap: 'inline', external: ['vscode'], logLevel: 'warning',
});
writeFileSync(join(dev, 'package.json'), JSON.stringify({
  name: 'exthost-tests', displayName: 'Strata e2e extension-host tests', publisher: 'strata-e2e', version: '0.0.0',
  type: 'commonjs', engines: { vscode: '^1.104.0' },
}, null, 2) + '\n');
