// `npm run test:electron`: the extension-host suite (suite/*.ts, the same bundle the code-server
// runner uses) under @vscode/test-electron, the standard runner: desktop VS Code with the repository
// as the extension under development. It downloads VS Code from update.code.visualstudio.com,
// which machines without that network access cannot reach: then it says so and exits 2 (never 0).
// STRATA_VSCODE_EXECUTABLE=/path/to/code uses an installed VS Code instead of downloading one.
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveEnv } from './lib/env.js';
import { resolveTestModel } from './lib/test-model.js';
import { STRATA_SETTINGS_FOR } from './ui.suite.js';

interface TestElectron {
  downloadAndUnzipVSCode(options: { version?: string; cachePath?: string; timeout?: number }): Promise<string>;
  runTests(options: {
    extensionDevelopmentPath: string;
    extensionTestsPath: string;
    vscodeExecutablePath: string;
    launchArgs?: string[];
    extensionTestsEnv?: Record<string, string | undefined>;
  }): Promise<number>;
}

const NOT_RUN = 2;

async function vscodeExecutable(te: TestElectron, cacheDir: string): Promise<string | undefined> {
  const given = process.env.STRATA_VSCODE_EXECUTABLE;
  if (given) {
    if (!existsSync(given)) throw new Error(`STRATA_VSCODE_EXECUTABLE=${given} does not exist`);
    return given;
  }
  try {
    return await te.downloadAndUnzipVSCode({ version: 'stable', cachePath: join(cacheDir, 'vscode-test'), timeout: 30_000 });
  } catch (err) {
    console.error(
      '[electron] NOT RUN: @vscode/test-electron could not download VS Code from update.code.visualstudio.com\n' +
      `           (${err instanceof Error ? err.message : String(err)}).\n` +
      '           This machine cannot reach that host. Run `npm run test:e2e` (the same extension-host\n' +
      '           suite in code-server\'s VS Code), or set STRATA_VSCODE_EXECUTABLE to an installed VS Code.',
    );
    return undefined;
  }
}

async function main(): Promise<number> {
  const env = resolveEnv();
  const require = createRequire(join(env.toolsModules, 'noop.js'));
  const te = require('@vscode/test-electron') as TestElectron;
  const executable = await vscodeExecutable(te, env.cacheDir);
  if (!executable) {
    console.log('[electron] 0 passed, 0 failed, 1 not run (no VS Code)');
    return NOT_RUN;
  }

  const suite = join(env.outDir, 'build', 'exthost-dev', 'suite', 'index.js');
  if (!existsSync(suite)) throw new Error(`${suite} is missing; run node test/e2e/build.mjs`);
  if (!existsSync(join(env.repoRoot, 'dist', 'extension.cjs'))) throw new Error('dist/extension.cjs is missing; run npm run build');
  const model = await resolveTestModel(env);
  const userData = mkdtempSync(join(tmpdir(), 'strata-e2e-electron-'));
  mkdirSync(join(userData, 'User'), { recursive: true });
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify(STRATA_SETTINGS_FOR(model), null, 2));
  const resultsFile = join(env.outDir, 'electron-results.json');
  rmSync(resultsFile, { force: true });
  try {
    const code = await runSuite(te, executable, env.repoRoot, suite, userData, resultsFile);
    if (!existsSync(resultsFile)) {
      console.log(`[electron] no results reported (VS Code exit code ${code}); 0 passed, 1 failed`);
      return 1;
    }
    const { results } = JSON.parse(readFileSync(resultsFile, 'utf8')) as { results: { outcome: string }[] };
    const failed = results.filter((r) => r.outcome !== 'passed').length;
    console.log(`[electron] ${results.length - failed} passed, ${failed} failed`);
    return failed || code ? 1 : 0;
  } finally {
    rmSync(userData, { recursive: true, force: true });
  }
}

async function runSuite(te: TestElectron, executable: string, devPath: string, suite: string, userData: string, resultsFile: string): Promise<number> {
  try {
    return await te.runTests({
      vscodeExecutablePath: executable,
      extensionDevelopmentPath: devPath,
      extensionTestsPath: suite,
      launchArgs: ['--disable-workspace-trust', '--disable-gpu', '--no-sandbox', '--user-data-dir', userData],
      extensionTestsEnv: { STRATA_E2E_RESULTS: resultsFile },
    });
  } catch (err) {
    // runTests rejects when VS Code exits non-zero; the results file still tells what failed.
    console.error(`[electron] ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('[electron] error:', err instanceof Error ? err.message : err);
    console.log('[electron] 0 passed, 1 failed');
    process.exit(1);
  },
);
