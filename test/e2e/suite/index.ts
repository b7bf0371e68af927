// Entry of the extension-host suite, the same bundle for both runners: code-server
// (test/e2e/run.ts) and @vscode/test-electron (test/e2e/electron.ts). VS Code calls run().
// STRATA_E2E_SUITE=self-check runs the harness self-check instead (the throwaway extension in
// test/e2e/fixtures/harness-check).
import * as vscode from 'vscode';
import { keybindingTests } from './keybindings.tests.js';
import { lmTests } from './lm.tests.js';
import { assert, runTests, type ExtHostTest } from './runner.js';

const selfCheckTests: ExtHostTest[] = [
  {
    name: 'the harness-check extension registered its commands',
    timeoutMs: 30_000,
    fn: async () => {
      await vscode.extensions.getExtension('strata-e2e.harness-check')?.activate();
      const commands = await vscode.commands.getCommands(true);
      assert(commands.includes('harnessCheck.showLog'), 'harnessCheck.showLog is not registered');
    },
  },
];

export async function run(): Promise<void> {
  if (process.env.STRATA_E2E_SUITE === 'self-check') await runTests('exthost self-check', selfCheckTests);
  else await runTests('exthost', [...lmTests, ...keybindingTests]);
}
