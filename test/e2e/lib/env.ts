// Where the end-to-end tools live. scripts/e2e-setup.sh installs them into a cache outside the
// checkout and is the one place that knows their versions; `--print-env` tells us the paths.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface E2eEnv {
  repoRoot: string;
  /** The e2e cache (scripts/e2e-setup.sh installs there; other downloads go there too). */
  cacheDir: string;
  /** Node 24 binary (code-server 4.139.1 requires Node 24). */
  node: string;
  /** code-server's lib/vscode: the VS Code server (out/server-main.js). */
  vscodeDir: string;
  /** node_modules holding playwright-core and @vscode/test-electron. */
  toolsModules: string;
  /** test-output/e2e: screenshots, logs, results. */
  outDir: string;
  chromium: string;
}

/** Finds the repository root from this (bundled or source) file's location. */
export function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'scripts', 'e2e-setup.sh')) && existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the repository root (scripts/e2e-setup.sh) above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

export function resolveEnv(): E2eEnv {
  const repoRoot = findRepoRoot();
  const printed = execFileSync('bash', [join(repoRoot, 'scripts', 'e2e-setup.sh'), '--print-env'], { encoding: 'utf8' });
  const vars = Object.fromEntries(
    printed.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  ) as Record<string, string | undefined>;
  const env: E2eEnv = {
    repoRoot,
    cacheDir: vars.STRATA_E2E_CACHE ?? '',
    node: vars.STRATA_E2E_NODE ?? '',
    vscodeDir: vars.STRATA_E2E_VSCODE ?? '',
    toolsModules: vars.STRATA_E2E_TOOLS ?? '',
    outDir: resolve(repoRoot, 'test-output', 'e2e'),
    chromium: process.env.STRATA_E2E_CHROMIUM ?? '/usr/bin/chromium',
  };
  const missing = [
    [env.node, 'Node 24'],
    [join(env.vscodeDir, 'out', 'server-main.js'), 'the VS Code server (code-server)'],
    [join(env.toolsModules, 'playwright-core'), 'playwright-core'],
    [env.chromium, 'Chromium'],
  ].filter(([p]) => !p || !existsSync(p));
  if (missing.length) {
    throw new Error(`e2e tools missing: ${missing.map(([p, what]) => `${what} (${p})`).join(', ')}; run scripts/e2e-setup.sh first`);
  }
  mkdirSync(env.outDir, { recursive: true });
  return env;
}
