#!/usr/bin/env node
// Bundles the TypeScript sources with esbuild into dist/ (entry points that exist only).
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');

const nodeEsm = {
  platform: 'node', format: 'esm', target: 'node20', bundle: true, sourcemap: true,
  // Bundled CommonJS dependencies may call require(); give ESM bundles one.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};

const entries = [
  { in: 'backend/cli.ts', out: 'dist/strata.mjs', ...nodeEsm },
  { in: 'backend/engine/host.ts', out: 'dist/engine-host.mjs', ...nodeEsm },
  { in: 'backend/engine/cpu-probe-child.ts', out: 'dist/cpu-probe.mjs', ...nodeEsm },
  { in: 'backend/engine/fit-probe-child.ts', out: 'dist/fit-probe.mjs', ...nodeEsm },
  // The codebase index's chunking thread (a worker of the extension host): CommonJS like the
  // extension, so node-sqlite3-wasm finds its .wasm beside it (its __dirname).
  { in: 'extension/codebase/chunk-worker.ts', out: 'dist/codebase-worker.cjs', platform: 'node', format: 'cjs', target: 'node20', bundle: true, sourcemap: true },
  { in: 'extension/extension.ts', out: 'dist/extension.cjs', platform: 'node', format: 'cjs', target: 'node20', bundle: true, sourcemap: true, external: ['vscode'] },
  // Minified: the panel carries markdown-it, highlight.js grammars and Chart.js.
  { in: 'webview/main.ts', out: 'dist/webview.js', platform: 'browser', format: 'iife', target: 'es2022', bundle: true, sourcemap: true, minify: true },
];

for (const { in: entry, out, ...opts } of entries) {
  if (!existsSync(join(root, entry))) continue;
  await build({ entryPoints: [join(root, entry)], outfile: join(root, out), logLevel: 'warning', ...opts });
}
// The panel's icon font, served from the extension itself (the webview CSP allows no remote content).
const codicons = join(root, 'node_modules', '@vscode', 'codicons', 'dist');
mkdirSync(join(root, 'dist', 'codicons'), { recursive: true });
for (const f of ['codicon.css', 'codicon.ttf']) copyFileSync(join(codicons, f), join(root, 'dist', 'codicons', f));
// The codebase index's WebAssembly: SQLite (beside extension.cjs, where its loader looks) and the
// tree-sitter runtime with the grammars the chunker uses (extension/codebase/syntax.ts GRAMMARS).
copyFileSync(join(root, 'node_modules', 'node-sqlite3-wasm', 'dist', 'node-sqlite3-wasm.wasm'), join(root, 'dist', 'node-sqlite3-wasm.wasm'));
const treeSitter = join(root, 'node_modules', '@vscode', 'tree-sitter-wasm', 'wasm');
mkdirSync(join(root, 'dist', 'tree-sitter'), { recursive: true });
for (const g of ['typescript', 'tsx', 'javascript', 'python', 'go', 'rust', 'java', 'c-sharp', 'ruby', 'php', 'bash', 'css', 'cpp']) {
  copyFileSync(join(treeSitter, `tree-sitter-${g}.wasm`), join(root, 'dist', 'tree-sitter', `tree-sitter-${g}.wasm`));
}
copyFileSync(join(treeSitter, 'tree-sitter.wasm'), join(root, 'dist', 'tree-sitter', 'tree-sitter.wasm'));
if (watch) console.log('watch mode is not supported; rerun npm run build');
