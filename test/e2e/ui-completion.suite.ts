// UI steps of inline completion: ghost text accepted with Tab, one word with Ctrl+Right and one
// line with Shift+Tab, and the status bar menu pausing automatic completions (asking explicitly
// with Alt+\ still works) and resuming them.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acceptGhostText } from './lib/editing.js';
import { openTab } from './lib/panel.js';
import { serverIdle, strataUrl } from './lib/strata-api.js';
import { plainSpaces, waitForValue } from './lib/workbench.js';
import { STEP, type UiContext } from './ui.suite.js';

const S = {
  inline: 'inline ghost text appears and Tab accepts it',
  partial: 'Ctrl+Right accepts one word of the ghost text, Shift+Tab the rest of its line',
  pause: 'status bar menu pauses completions for the workspace; Alt+\\ still asks; Resume turns them back on',
};

export async function completionSteps({ t, wb, workspace, panel }: UiContext): Promise<void> {
  await t.step(S.inline, async () => {
    const r = await acceptGhostText(wb, workspace, 'e2e_sample.py', 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n', '    return', '24-inline', 60_000);
    if (!r.after.startsWith(r.before)) throw new Error(`the text before the cursor changed: ${JSON.stringify(r.after.slice(0, 200))}`);
    const inserted = r.after.slice(r.before.length);
    const ghostStart = plainSpaces(r.ghost).split('\n')[0]!.trim().slice(0, 10);
    if (!inserted.trim()) throw new Error(`nothing was inserted (ghost text was ${JSON.stringify(r.ghost)})`);
    if (ghostStart && !inserted.includes(ghostStart)) throw new Error(`inserted ${JSON.stringify(inserted)} is not the ghost text ${JSON.stringify(r.ghost)}`);
    console.log(`        accepted: ${JSON.stringify(inserted.slice(0, 80))}`);
  }, { needs: [STEP.ready], timeoutMs: 90_000 });

  await t.step(S.partial, async () => {
    const file = join(workspace, 'e2e_partial.py');
    const content = 'def sub(a, b):\n    return a - b\n\n\ndef div(a, b):\n';
    writeFileSync(file, content);
    await wb.openFile('e2e_partial.py');
    await wb.focusEditorEnd();
    await wb.page.keyboard.type('    return', { delay: 30 });
    const before = `${content}    return`;
    await wb.waitForGhostText(60_000);
    // Typing sent a request per keystroke; the suggestion to accept is the one shown once the last
    // of them has come back (an earlier one can still be replaced while we read it).
    await serverIdle(await strataUrl(wb), 30_000);
    const firstLine = await waitForValue('the ghost text on the cursor line', async () => (await wb.inlineGhostText()) || undefined, 10_000);
    await wb.screenshot('25-partial-ghost');
    const saved = async (): Promise<string> => {
      await wb.page.keyboard.press('Control+S');
      return waitForValue('the saved file', async () => {
        const now = readFileSync(file, 'utf8');
        return now.startsWith(before) ? now.slice(before.length) : undefined;
      }, 10_000);
    };
    await wb.page.keyboard.press('Control+ArrowRight');
    const word = await waitForValue('one word accepted', async () => {
      const got = await saved();
      return got.length ? got : undefined;
    }, 10_000);
    if (!firstLine.startsWith(word)) throw new Error(`Ctrl+Right inserted ${JSON.stringify(word)}, not the start of ${JSON.stringify(firstLine)}`);
    if (/\S\s+\S/.test(firstLine.trim()) && word.trim().length >= firstLine.trim().length) throw new Error(`Ctrl+Right took the whole line ${JSON.stringify(firstLine)}`);
    // The rest of the suggestion is still shown: Shift+Tab takes the rest of its first line.
    const rest = await wb.waitForGhostText(10_000).catch(() => '');
    if (rest) {
      await wb.page.keyboard.press('Shift+Tab');
      const line = await waitForValue('the line accepted', async () => {
        const got = await saved();
        return got.length > word.length ? got : undefined;
      }, 10_000);
      // The ghost text's DOM may split a line into several pieces: its first piece starts the line.
      if (!line.startsWith(firstLine.replace(/\s+$/, ''))) throw new Error(`after Shift+Tab the line is ${JSON.stringify(line)}, the ghost line began ${JSON.stringify(firstLine)}`);
      if (line.replace(/\n$/, '').includes('\n')) throw new Error(`Shift+Tab took more than one line: ${JSON.stringify(line)}`);
      console.log(`        ghost ${JSON.stringify(firstLine)}: Ctrl+Right ${JSON.stringify(word)}, Shift+Tab ${JSON.stringify(line)}`);
    } else {
      console.log(`        ghost ${JSON.stringify(firstLine)} was one word: Ctrl+Right took ${JSON.stringify(word)}`);
    }
    await wb.screenshot('26-partial-accepted');
  }, { needs: [STEP.ready], timeoutMs: 120_000 });

  await t.step(S.pause, async () => {
    const requests = async (): Promise<number> => {
      const trace = await openTab(await panel(), 'Trace');
      const stat = trace.locator('.stat').filter({ hasText: 'completion requests' }).locator('.stat-value');
      return Number(await stat.innerText({ timeout: 10_000 }));
    };
    const menu = async (item: string): Promise<void> => {
      await wb.statusBar().filter({ hasText: 'Strata:' }).first().click();
      await wb.pickQuickItem(item);
    };
    const whilePaused = async (): Promise<void> => {
      await wb.waitForStatusBar(/Inline completions: paused for this workspace/, 10_000);
      await wb.screenshot('27-paused');
      const n0 = await requests();
      // Typing asks nothing now; Alt+\ asks once. Requests are counted in order, so the count after
      // the explicit one's ghost text shows that typing sent none.
      const file = join(workspace, 'e2e_paused.py');
      writeFileSync(file, 'def neg(a):\n');
      await wb.openFile('e2e_paused.py');
      await wb.focusEditorEnd();
      await wb.page.keyboard.type('    return', { delay: 30 });
      await wb.page.keyboard.press('Alt+Backslash');
      await wb.waitForGhostText(60_000);
      await wb.screenshot('28-paused-explicit');
      await wb.page.keyboard.press('Escape');
      const n1 = await waitForValue('the completion count to settle', async () => {
        const n = await requests();
        return n > n0 ? n : undefined;
      }, 10_000);
      if (n1 !== n0 + 1) throw new Error(`${n1 - n0} completion requests while paused, want 1 (the explicit one)`);
    };
    await menu('Pause Completions in This Workspace');
    // A failure must not leave completions paused for the later steps.
    await whilePaused().catch(async (err: unknown) => {
      await menu('Resume Completions').catch(() => wb.dismissQuickInput());
      throw err;
    });
    await menu('Resume Completions');
    await wb.waitForStatusBar(/Inline completions: on/, 10_000);
    await wb.screenshot('29-resumed');
  }, { needs: [STEP.ready, STEP.panel], timeoutMs: 120_000 });
}
