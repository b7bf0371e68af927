// The Strata panel inside its webview frame: tabs, tables, the chat. Selectors are the panel's
// roles and labels (webview/main.ts, webview/tabs/*.ts).
import type { Frame, Locator } from './playwright.js';
import { plainSpaces, waitForValue } from './workbench.js';

export const STRATA_EXTENSION_ID = 'strata.strata-vscode';

export async function openTab(frame: Frame, name: string): Promise<Locator> {
  const tab = frame.getByRole('tab', { name, exact: true });
  await tab.click({ timeout: 10_000 });
  await waitForValue(`the ${name} tab to be selected`, async () => ((await tab.getAttribute('aria-selected')) === 'true' ? true : undefined), 10_000);
  const panelId = await tab.getAttribute('aria-controls');
  return frame.locator(`#${panelId}`);
}

/** Texts of a table's body rows (one string per row, cells joined by ' | '). */
export async function tableRows(table: Locator): Promise<string[][]> {
  const rows = table.locator('tbody tr');
  const n = await rows.count();
  const out: string[][] = [];
  for (let i = 0; i < n; i++) out.push((await rows.nth(i).locator('td').allInnerTexts()).map((c) => plainSpaces(c).trim()));
  return out;
}

/** Visible buttons in the frame whose accessible name matches. */
export async function visibleButtons(frame: Frame, name: RegExp): Promise<string[]> {
  const all = frame.getByRole('button', { name });
  const out: string[] = [];
  for (let i = 0; i < (await all.count()); i++) {
    const b = all.nth(i);
    if (await b.isVisible()) out.push((await b.getAttribute('aria-label')) ?? plainSpaces(await b.innerText()).trim());
  }
  return out;
}

/** Waits until the last answer has ended (no pending turn, no Stop), failing at once on an error turn. */
export async function waitForAnswerEnd(frame: Frame, timeoutMs: number): Promise<Locator> {
  const log = frame.getByRole('log', { name: 'Conversation' });
  await waitForValue('the answer to end', async () => {
    const pending = await log.locator('.turn.assistant.pending').count();
    const stop = await frame.getByRole('button', { name: 'Stop', exact: true }).isVisible().catch(() => false);
    return pending === 0 && !stop ? true : undefined;
  }, timeoutMs);
  return log.locator('.turn.assistant').last();
}

/** Webview frames of the Strata extension that show the panel UI, with their width. */
async function strataFrames(wb: { webviewFrames(id?: string): Frame[] }): Promise<Array<{ frame: Frame; width: number }>> {
  const out: Array<{ frame: Frame; width: number }> = [];
  for (const f of wb.webviewFrames(STRATA_EXTENSION_ID)) {
    if (!(await f.getByRole('tablist', { name: 'Strata panel' }).count().catch(() => 0))) continue;
    out.push({ frame: f, width: await f.evaluate<number>('window.innerWidth').catch(() => 0) });
  }
  return out;
}

/** The editor-area panel's frame (wide), or the sidebar view's (narrow), once it shows. */
export async function panelFrame(wb: { webviewFrames(id?: string): Frame[] }, where: 'editor' | 'sidebar', timeoutMs = 30_000): Promise<Frame> {
  return waitForValue(`the Strata ${where === 'editor' ? 'panel' : 'sidebar view'}`, async () => {
    const frames = (await strataFrames(wb)).filter((f) => f.width > 0);
    const pick = where === 'editor' ? frames.find((f) => f.width >= 600) : frames.find((f) => f.width < 600);
    return pick?.frame;
  }, timeoutMs);
}
