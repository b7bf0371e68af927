// Inline completion end to end: open a file, put the cursor where a suggestion is due, wait for
// the ghost text, accept it with Tab, save, and read the file back from disk.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Workbench } from './workbench.js';
import { plainSpaces, waitForValue } from './workbench.js';

export interface GhostTextResult {
  ghost: string;
  before: string;
  after: string;
}

/**
 * Writes `content` to `relativePath` in the workspace, opens it, types `trigger` at the end (typing
 * is what makes VS Code ask for inline completions), waits for ghost text, takes `shot`-ghost.png,
 * presses Tab, saves and returns the file's text before and after.
 */
export async function acceptGhostText(wb: Workbench, workspace: string, relativePath: string, content: string, trigger: string, shot: string, timeoutMs: number): Promise<GhostTextResult> {
  const file = join(workspace, relativePath);
  writeFileSync(file, content);
  await wb.openFile(relativePath);
  await wb.focusEditorEnd();
  await wb.page.keyboard.type(trigger, { delay: 30 });
  const ghost = await wb.waitForGhostText(timeoutMs);
  await wb.screenshot(`${shot}-ghost`);
  const before = content + trigger;
  await wb.page.keyboard.press('Tab');
  // Check the document, not the screen: right after the accept the extension may already show the
  // next suggestion as ghost text, so "no ghost text left" is a race. Keys are handled in order,
  // so the save below writes the document with the accepted text.
  await wb.page.keyboard.press('Control+S');
  const ghostStart = plainSpaces(ghost.split('\n')[0]!.trim().slice(0, 20));
  const after = await waitForValue('the accepted suggestion in the saved file', async () => {
    const now = readFileSync(file, 'utf8');
    return now !== content && now.includes(ghostStart) ? now : undefined;
  }, 10_000);
  await wb.screenshot(`${shot}-accepted`);
  return { ghost, before, after };
}
