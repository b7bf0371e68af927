// Extension-host test mode over the VS Code server: the workbench URL carries a payload with
// extensionDevelopmentPath and extensionTestsPath, the suite's run() executes inside the real
// extension host, and VS Code reports the end through window.codeAutomationExit(code, logs)
// (needs the server's --enable-smoke-test-driver).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from './playwright.js';
import type { VsCodeServer } from './vscode-server.js';

export interface ExtHostRunOptions {
  /** Folder of the extension under development (its package.json). */
  developmentPath: string;
  /** The bundled suite (CommonJS, exports run()). */
  testsPath: string;
  timeoutMs: number;
  outDir: string;
}

export interface ExtHostRunResult {
  exitCode: number;
  /** Log lines VS Code's workbench sent through codeAutomationLog. */
  log: string[];
}

interface AutomationLogFile { relativePath: string; contents: string }

export async function runExtensionHostTests(browser: Browser, server: VsCodeServer, opts: ExtHostRunOptions): Promise<ExtHostRunResult> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const log: string[] = [];
  let exit: (code: number) => void = () => undefined;
  const exited = new Promise<number>((r) => { exit = r; });
  await page.exposeFunction('codeAutomationLog', (level: string, message: unknown) => {
    log.push(`[${level}] ${Array.isArray(message) ? message.join(' ') : String(message)}`);
  });
  await page.exposeFunction('codeAutomationExit', (code: number, logs?: AutomationLogFile[]) => {
    // VS Code hands over its own log files at the end: keep them for post-mortems.
    const dump = (logs ?? []).map((l) => `===== ${l.relativePath}\n${l.contents}`).join('\n');
    if (dump) writeFileSync(join(opts.outDir, 'exthost-vscode-logs.txt'), dump);
    exit(code);
  });
  const url = server.workbenchUrl([
    ['extensionDevelopmentPath', server.remoteUri(opts.developmentPath)],
    ['extensionTestsPath', server.remoteUri(opts.testsPath)],
  ]);
  let timer: NodeJS.Timeout | undefined;
  try {
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    const exitCode = await Promise.race([
      exited,
      new Promise<number>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`extension-host tests did not finish within ${opts.timeoutMs / 1000} s`)), opts.timeoutMs);
      }),
    ]);
    return { exitCode, log };
  } catch (err) {
    await page.screenshot({ path: join(opts.outDir, 'exthost-timeout.png') }).catch(() => undefined);
    throw err;
  } finally {
    clearTimeout(timer);
    writeFileSync(join(opts.outDir, 'exthost-automation.log'), log.join('\n') + '\n');
    await page.close().catch(() => undefined);
  }
}
