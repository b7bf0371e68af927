// `npm run test:e2e`: the Strata VSIX in a real VS Code (code-server's VS Code server on Node 24)
// driven by playwright-core in Debian's Chromium. Two phases, each on its own fresh server:
//   1. UI suite (ui.suite.ts): status bar, palette, panel tabs, inline completion; screenshots of
//      each step in test-output/e2e/<step>.png.
//   2. Extension-host suite (suite/*.ts, bundled): vscode.lm against the chat model provider.
// `--self-check` runs both phases against a throwaway extension instead (harness validation).
// Environment: STRATA_E2E_VSIX (a VSIX to test instead of the newest built one),
// STRATA_E2E_MODEL (a GGUF instead of the generated tiny test model), STRATA_E2E_KEEP=1 (keep the
// VS Code temp dirs), STRATA_E2E_ONLY=ui|exthost (one phase).
// Exit code: 0 only when every step passed.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { resolveEnv, type E2eEnv } from './lib/env.js';
import { runExtensionHostTests } from './lib/exthost.js';
import { launchChromium, type Browser } from './lib/playwright.js';
import { StepRunner, summarize, type StepResult } from './lib/steps.js';
import { resolveIndexModels, resolveTestModel, resolveTestProjector } from './lib/test-model.js';
import { VsCodeServer } from './lib/vscode-server.js';
import { Workbench } from './lib/workbench.js';
import { buildHarnessCheckVsix, SELF_CHECK_SETTINGS, selfCheckUiSuite } from './self-check.suite.js';
import { prepareWorkspace, STRATA_SETTINGS_FOR, uiSuite } from './ui.suite.js';
import { startModelsHub } from './ui-models.suite.js';

const selfCheck = process.argv.includes('--self-check');
const only = process.env.STRATA_E2E_ONLY;

/** Stops for everything running now (servers, the browser), run on Ctrl+C and on errors. */
const running = new Set<() => Promise<void>>();
let interrupted = false;
async function stopAll(): Promise<void> {
  for (const stop of [...running].reverse()) {
    running.delete(stop);
    await stop().catch((e: unknown) => console.error('[e2e] cleanup:', e));
  }
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    interrupted = true;
    console.error(`[e2e] ${sig}: stopping VS Code and Chromium`);
    void stopAll().finally(() => process.exit(130));
  });
}

/** Runs `body` with `stop` registered for Ctrl+C, and always stops at the end. */
async function withStop<T>(stop: () => Promise<void>, body: () => Promise<T>): Promise<T> {
  running.add(stop);
  try {
    return await body();
  } finally {
    running.delete(stop);
    await stop();
  }
}

function findVsix(env: E2eEnv): string {
  const given = process.env.STRATA_E2E_VSIX;
  if (given) {
    if (!existsSync(given)) throw new Error(`STRATA_E2E_VSIX=${given} does not exist`);
    return given;
  }
  const candidates = [env.repoRoot, join(env.repoRoot, 'dist')]
    .filter((d) => existsSync(d))
    .flatMap((d) => readdirSync(d).filter((f) => /^strata.*\.vsix$/.test(f)).map((f) => join(d, f)))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!candidates[0]) throw new Error('no Strata VSIX found (strata*.vsix in the repository root or dist/); run `npm run package` first or set STRATA_E2E_VSIX');
  return candidates[0];
}

/** Clears the previous run's screenshots and logs (the build/ folder stays). */
function cleanOutput(env: E2eEnv): void {
  mkdirSync(env.outDir, { recursive: true });
  for (const f of readdirSync(env.outDir)) {
    if (/\.(png|log|txt|json)$/.test(f) || f.startsWith('vscode-logs-')) rmSync(join(env.outDir, f), { recursive: true, force: true });
  }
}

interface Phase {
  vsix: string;
  settings: Record<string, unknown>;
}

async function uiPhase(env: E2eEnv, browser: Browser, phase: Phase): Promise<StepResult[]> {
  // The Hub that Choose Models lists (ui-models.suite.ts), on 127.0.0.1, named to the extension host.
  const hub = selfCheck ? null : await startModelsHub(String(phase.settings['strata.modelPath'] ?? ''));
  return withStop(async () => { await hub?.close(); }, async () => {
    // No smoke-test driver here: with it VS Code hides every notification toast.
    const server = await VsCodeServer.start(env, {
      name: 'ui', vsixes: [phase.vsix], settings: phase.settings, smokeTestDriver: false, ...(hub ? { env: { HF_ENDPOINT: hub.endpoint } } : {}),
    });
    if (!selfCheck) prepareWorkspace(server.workspace);
    let wb: Workbench | undefined;
    const t = new StepRunner(selfCheck ? 'ui self-check' : 'ui', async (name) => {
      if (wb && !interrupted) await wb.screenshot(`failed-${name.replace(/[^\w-]+/g, '-').slice(0, 60)}`);
    });
    await withStop(() => server.stop(), async () => {
      await t.step('workbench opens', async () => {
        wb = await Workbench.open(browser, server.workbenchUrl(), env.outDir, 'ui');
      }, { timeoutMs: 120_000 });
      if (wb) {
        if (selfCheck) await selfCheckUiSuite(t, wb, server.workspace);
        else await uiSuite(t, wb, server.workspace, (patch) => server.updateSettings(patch));
      }
      await wb?.close().catch(() => undefined);
    });
    return t.results;
  });
}

async function extHostPhase(env: E2eEnv, browser: Browser, phase: Phase): Promise<StepResult[]> {
  const dev = join(env.outDir, 'build', 'exthost-dev');
  const suite = join(dev, 'suite', 'index.js');
  const resultsFile = join(env.outDir, 'exthost-results.json');
  const t = new StepRunner(selfCheck ? 'exthost self-check' : 'exthost');
  if (!existsSync(suite)) {
    t.record({ name: 'extension-host suite', outcome: 'failed', ms: 0, detail: `${suite} is missing; run node test/e2e/build.mjs` });
    return t.results;
  }
  const server = await VsCodeServer.start(env, {
    name: 'exthost', vsixes: [phase.vsix], settings: phase.settings,
    env: { STRATA_E2E_RESULTS: resultsFile, ...(selfCheck ? { STRATA_E2E_SUITE: 'self-check' } : {}) },
  });
  const t0 = Date.now();
  await withStop(() => server.stop(), async () => {
    try {
      const { exitCode } = await runExtensionHostTests(browser, server, { developmentPath: dev, testsPath: suite, timeoutMs: 300_000, outDir: env.outDir });
      const reported = existsSync(resultsFile) ? (JSON.parse(readFileSync(resultsFile, 'utf8')) as { results: StepResult[] }).results : [];
      for (const r of reported) t.record(r);
      if (!reported.length) t.record({ name: 'extension-host suite', outcome: 'failed', ms: Date.now() - t0, detail: `no results reported (exit code ${exitCode}); see test-output/e2e/exthost-*.txt and server-exthost.log` });
      else if (exitCode !== 0 && reported.every((r) => r.outcome === 'passed')) {
        t.record({ name: 'extension-host exit code', outcome: 'failed', ms: 0, detail: `VS Code ended the run with exit code ${exitCode}` });
      }
    } catch (err) {
      t.record({ name: 'extension-host suite', outcome: 'failed', ms: Date.now() - t0, detail: err instanceof Error ? err.message : String(err) });
    }
  });
  return t.results;
}

async function main(): Promise<number> {
  const t0 = Date.now();
  const env = resolveEnv();
  cleanOutput(env);
  let phase: Phase;
  if (selfCheck) {
    phase = { vsix: buildHarnessCheckVsix(env), settings: SELF_CHECK_SETTINGS };
  } else {
    const vsix = findVsix(env);
    const model = await resolveTestModel(env);
    phase = { vsix, settings: STRATA_SETTINGS_FOR(model, await resolveIndexModels(env), await resolveTestProjector(env, model), join(env.repoRoot, 'node_modules', '.bin')) };
    console.log(`[e2e] VSIX ${vsix}\n[e2e] model ${model}`);
  }
  const browser = await launchChromium(env.toolsModules, env.chromium);
  console.log(`[e2e] Chromium ${browser.version()}; output in ${env.outDir}`);
  const results: StepResult[] = [];
  await withStop(() => browser.close(), async () => {
    if (only !== 'exthost' && !interrupted) results.push(...(await uiPhase(env, browser, phase)));
    if (only !== 'ui' && !interrupted) results.push(...(await extHostPhase(env, browser, phase)));
  });
  const { line, failed } = summarize(results);
  console.log(`[e2e] ${line} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  if (interrupted) return 130;
  return failed || results.length === 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    console.error('[e2e] error:', err instanceof Error ? err.message : err);
    await stopAll();
    console.log('[e2e] 0 passed, 1 failed');
    process.exit(1);
  },
);
