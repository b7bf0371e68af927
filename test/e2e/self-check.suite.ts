// Harness self-check: drives the throwaway extension in test/e2e/fixtures/harness-check, whose
// answers are known, through every surface the product suite uses. When this passes and the
// product suite fails, the product is at fault, not the harness.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { acceptGhostText } from './lib/editing.js';
import type { E2eEnv } from './lib/env.js';
import type { StepRunner } from './lib/steps.js';
import { plainSpaces, waitForValue, type Workbench } from './lib/workbench.js';

export const SELF_CHECK_SETTINGS = { 'harnessCheck.greeting': 'from-settings' };

/** Packs the fixture extension into test-output/e2e/self-check/harness-check.vsix. */
export function buildHarnessCheckVsix(env: E2eEnv): string {
  const work = join(env.outDir, 'self-check');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const src = join(work, 'src');
  cpSync(join(env.repoRoot, 'test', 'e2e', 'fixtures', 'harness-check'), src, { recursive: true });
  const vsix = join(work, 'harness-check.vsix');
  execFileSync(join(env.repoRoot, 'node_modules', '.bin', 'vsce'), ['package', '--skip-license', '--no-dependencies', '-o', vsix], { cwd: src, stdio: 'pipe' });
  return vsix;
}

export async function selfCheckUiSuite(t: StepRunner, wb: Workbench, workspace: string): Promise<void> {
  await t.step('status bar shows the configured greeting', async () => {
    const text = await wb.waitForStatusBar(/HarnessCheck: /, 60_000);
    if (!text.includes('from-settings')) throw new Error(`status bar says "${text}": settings were not applied`);
    await wb.screenshot('self-check-01-status');
  });

  await t.step('palette command shows the output channel', async () => {
    await wb.runCommand('Harness Check: Show Log');
    await waitForValue('"harness check active" in the Output view', async () => ((await wb.outputText()).includes('harness check active') ? true : undefined), 20_000);
    await wb.screenshot('self-check-02-output');
  });

  await t.step('webview panel answers through its frame', async () => {
    await wb.runCommand('Harness Check: Open Panel');
    const frame = await wb.waitForWebviewFrame('the Chat tab', (f) => f.getByRole('tab', { name: 'Chat' }), 20_000, 'strata-e2e.harness-check');
    await frame.getByLabel('Message').fill('hi');
    await frame.getByRole('button', { name: 'Send' }).click();
    const answer = frame.getByRole('log', { name: 'Answer' });
    await waitForValue('the echoed answer', async () => ((await answer.innerText()) === 'echo: hi' ? true : undefined), 10_000);
    await wb.screenshot('self-check-03-webview');
  });

  await t.step('inline ghost text is accepted with Tab', async () => {
    const r = await acceptGhostText(wb, workspace, 'greet.txt', 'say ', 'hello', 'self-check-04-inline', 30_000);
    if (plainSpaces(r.ghost).trim() !== 'world from harness') throw new Error(`ghost text is "${r.ghost}"`);
    if (r.after.trimEnd() !== 'say hello world from harness') throw new Error(`file after Tab is ${JSON.stringify(r.after)}`);
  });
}
