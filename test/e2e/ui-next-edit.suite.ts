// UI steps of next-edit suggestions and completion candidates, against a scripted model server the
// runner starts (test/helpers/scripted-model-server.ts): the tiny test model's answers are noise,
// and these steps need a next edit that finishes a rename and candidates that differ. The extension
// is switched to `strata.serverMode: remote` at that server through the user's settings, as a
// user pointing it at another server would, so these steps run last (after the managed server's).
// Everything else is real: VS Code, the extension, its HTTP client, the keys.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NextEditRequest } from '../../contract/next-edit.js';
import { renameAnswer, ScriptedModelServer } from '../helpers/scripted-model-server.js';
import { plainSpaces, waitForValue } from './lib/workbench.js';
import type { UiContext } from './ui.suite.js';

const S = {
  connect: 'next edit: the extension connects to a scripted model server (remote mode, next edits on, 3 candidates)',
  proposed: 'next edit: renaming a parameter proposes its other uses as an inline diff (struck through, added beside, gutter mark, hint)',
  jump: 'next edit: Tab jumps to the proposal',
  accept: 'next edit: Tab accepts it (the file holds the change) and the next hunk is offered',
  undo: 'next edit: Ctrl+Z takes back exactly the accepted hunk',
  dismiss: 'next edit: Esc dismisses a proposal and leaves the file as it was',
  ghost: 'next edit: a proposal at the cursor shows as ghost text; Tab takes it, Ctrl+Z takes it back',
  candidates: 'completion candidates: the first of 3 shows while the others are still coming; Alt+] shows another, one request in all',
};

const GUTTER_ICON = 'next-edit.svg';
const RENAME_FILE = 'e2e_rename.py';
const RENAME_SRC = 'def area(width, height):\n    return width * height\n\n\ndef show(width, height):\n    print(area(width, height))\n';
const RENAMED = RENAME_SRC.replace('area(width', 'area(w');
const GHOST_FILE = 'e2e_ghost.py';
const CANDIDATE_FILE = 'e2e_candidates.py';
const CANDIDATES = [' a * b', ' a + b', ' a * b'];

/** The scripted model for the ghost file: `total = price` at the cursor becomes `total = price + tax`. */
function finishSum(b: NextEditRequest): string {
  const at = b.cursor ?? 0;
  const line = b.region.slice(0, at).split('\n').pop()!;
  return line.endsWith('total = price') ? `${b.region.slice(0, at)} + tax${b.region.slice(at)}` : b.region;
}

export async function nextEditSteps({ t, wb, workspace, userSettings }: UiContext): Promise<void> {
  const scripted = new ScriptedModelServer({
    // In the ghost file the scripted model finishes a sum at the cursor; elsewhere a rename.
    nextEdit: (b) => (b.file === GHOST_FILE ? finishSum(b) : renameAnswer(b)),
    // Candidates only after "return" in the candidates file; an empty completion everywhere else.
    infill: (b) => (String(b.input_prefix).endsWith('def mul(a, b):\n    return') ? { candidates: CANDIDATES, holdOthers: true } : undefined),
  });
  const url = await scripted.start();
  const file = join(workspace, RENAME_FILE);
  /** Saves and waits until the file on disk is `want` (a save takes a moment to land). */
  const savedAs = async (want: string, what: string, path = file): Promise<void> => {
    let last = '';
    // Saved again until it holds: an edit the extension applies (an accept) can land after a save.
    await waitForValue(what, async () => {
      await wb.page.keyboard.press('Control+S');
      return (last = readFileSync(path, 'utf8')) === want ? true : undefined;
    }, 10_000)
      .catch(() => { throw new Error(`${what}: the saved file is ${JSON.stringify(last)}, want ${JSON.stringify(want)}`); });
  };
  const decorations = () => wb.editorDecorations(GUTTER_ICON);
  /** Cursor to (line, column), both 1-based, with the keyboard. */
  const goTo = async (line: number, column: number): Promise<void> => {
    await wb.page.keyboard.press('Control+Home');
    for (let i = 1; i < line; i++) await wb.page.keyboard.press('ArrowDown');
    await wb.page.keyboard.press('Home');
    for (let i = 1; i < column; i++) await wb.page.keyboard.press('ArrowRight');
  };
  /** Selects the word at (line, column) and types `text` over it: one edit, as a rename is. */
  const renameWord = async (line: number, column: number, text: string): Promise<void> => {
    await goTo(line, column);
    await wb.page.keyboard.press('Control+Shift+ArrowRight');
    await wb.page.keyboard.type(text);
  };

  try {
    await t.step(S.connect, async () => {
      // The server mode and URL from user settings only (a workspace's are ignored). Next edits in
      // the same write: the restart offer then shows VS Code has read them too (a second file, the
      // workspace's settings.json, can be read many seconds after it).
      userSettings({
        'strata.serverMode': 'remote', 'strata.remoteUrl': url,
        'strata.nextEdit.enabled': true, 'strata.nextEdit.delayMs': 150, 'strata.inlineCompletion.candidates': 3,
      });
      // VS Code's watcher reads the file; the extension then offers to restart with it.
      const toast = await wb.waitForNotification(/Strata server settings changed/, 60_000);
      await toast.item.locator('.notification-list-item-buttons-container .monaco-button').filter({ hasText: 'Restart' }).click();
      await wb.waitForStatusBar(/Strata: ready · scripted/, 90_000);
      await wb.clearNotifications();
      if (process.env.STRATA_E2E_KEYS_TRACE) await wb.runCommand('Developer: Toggle Keyboard Shortcuts Troubleshooting');
    }, { timeoutMs: 180_000 });

    await t.step(S.proposed, async () => {
      writeFileSync(file, RENAME_SRC);
      await wb.openFile(RENAME_FILE);
      await wb.activeEditor().locator('.view-lines').click();
      const before = scripted.of('/v1/edits/next').length;
      await renameWord(1, 10, 'w'); // def area(w, height):
      let seen = await decorations();
      const shown = await waitForValue('the proposal drawn beside the code', async () => {
        seen = await decorations();
        return seen.struck.some((x) => x.includes('width')) && seen.shown.some((x) => /Tab to jump/.test(x)) ? seen : undefined;
      }, 30_000).catch(async (err: Error) => {
        const asked = scripted.of('/v1/edits/next').length - before;
        throw new Error(`${err.message}; ${asked} next-edit request(s) sent; drawn ${JSON.stringify(seen)}; the editor shows ${JSON.stringify(await wb.editorText())}`);
      });
      await wb.screenshot('40-next-edit-proposed');
      if (!shown.shown.includes('w')) throw new Error(`the added text "w" is not shown beside the struck "width": ${JSON.stringify(shown)}`);
      if (!shown.shown.some((x) => x.startsWith('Next edit at line 2: Tab to jump, Tab to accept, Esc to dismiss'))) throw new Error(`no hint at the cursor: ${JSON.stringify(shown.shown)}`);
      if (shown.gutterIcons < 1) throw new Error('no gutter mark at the proposal');
      const sent = scripted.of('/v1/edits/next').slice(before);
      const last = sent.at(-1)!.body as { file: string; edits: Array<{ diff: string }>; region: string };
      if (last.file !== RENAME_FILE || !last.edits.at(-1)!.diff.includes('+def area(w, height):')) throw new Error(`the request did not carry the edit: ${JSON.stringify(last).slice(0, 400)}`);
      console.log(`        ${sent.length} next-edit request(s); shown ${JSON.stringify(shown.shown)}, struck ${JSON.stringify(shown.struck)}`);
    }, { needs: [S.connect], timeoutMs: 90_000 });

    await t.step(S.jump, async () => {
      await wb.page.keyboard.press('Tab');
      await wb.waitForStatusBar(/Ln 2, Col 12/, 10_000);
      await waitForValue('the hint at the proposal', async () => ((await decorations()).shown.some((x) => x.startsWith('Tab to accept, Esc to dismiss (1 more after this)')) ? true : undefined), 10_000);
      await wb.screenshot('41-next-edit-jumped');
      await savedAs(RENAMED, 'the file after the jump (unchanged but for the rename)');
    }, { needs: [S.proposed] });

    await t.step(S.accept, async () => {
      await wb.page.keyboard.press('Tab');
      await savedAs(RENAMED.replace('return width', 'return w'), 'the accepted hunk in the file');
      await waitForValue('the next hunk offered', async () => ((await decorations()).shown.some((x) => x.startsWith('Next edit at line 5')) ? true : undefined), 10_000);
      await wb.screenshot('42-next-edit-accepted');
    }, { needs: [S.jump] });

    await t.step(S.undo, async () => {
      await wb.page.keyboard.press('Control+Z');
      // Only the hunk went: the user's own rename is its own undo step.
      await savedAs(RENAMED, 'the file after Ctrl+Z');
      await waitForValue('the proposal gone after the undo', async () => ((await decorations()).struck.length === 0 ? true : undefined), 10_000);
      await wb.screenshot('43-next-edit-undone');
    }, { needs: [S.accept] });

    await t.step(S.dismiss, async () => {
      // From a known text whatever the steps before left: the file's, reverted to.
      writeFileSync(file, RENAMED);
      await wb.runCommand('File: Revert File');
      const start = RENAMED;
      await renameWord(5, 10, 'size'); // def show(size, height):
      await waitForValue('a new proposal', async () => {
        const d = await decorations();
        return d.struck.some((x) => x.includes('width')) && d.shown.includes('size') ? true : undefined;
      }, 30_000);
      await wb.screenshot('44-next-edit-before-esc');
      await wb.page.keyboard.press('Escape');
      await waitForValue('no proposal left on screen', async () => {
        const d = await decorations();
        return d.struck.length === 0 && d.gutterIcons === 0 && !d.shown.some((x) => /Tab to|Next edit/.test(x)) ? true : undefined;
      }, 10_000);
      await wb.screenshot('45-next-edit-dismissed');
      const dismissed = start.replace('show(width', 'show(size');
      await savedAs(dismissed, 'the file after Esc (only the user\'s rename)');
      // Tab is VS Code's own again: it indents.
      await goTo(3, 1);
      await wb.page.keyboard.press('Tab');
      await savedAs(dismissed.replace('height\n\n', 'height\n    \n'), 'line 3 indented by Tab');
    }, { needs: [S.connect, S.proposed] });

    await t.step(S.ghost, async () => {
      const ghostFile = join(workspace, GHOST_FILE);
      writeFileSync(ghostFile, 'price = 2\ntax = 1\n');
      await wb.openFile(GHOST_FILE);
      await wb.focusEditorEnd();
      await wb.page.keyboard.type('total = price', { delay: 30 });
      await waitForValue('the next edit as ghost text at the cursor', async () => ((await wb.inlineGhostText()).trim() === '+ tax' ? true : undefined), 30_000);
      const d = await decorations();
      if (d.struck.length || d.gutterIcons) throw new Error(`a proposal at the cursor is drawn as a diff too: ${JSON.stringify(d)}`);
      await wb.screenshot('48-next-edit-ghost');
      await wb.page.keyboard.press('Tab');
      await savedAs('price = 2\ntax = 1\ntotal = price + tax', 'the ghost text taken by Tab', ghostFile);
      await wb.page.keyboard.press('Control+Z');
      await savedAs('price = 2\ntax = 1\ntotal = price', 'the file after Ctrl+Z', ghostFile);
      await wb.screenshot('49-next-edit-ghost-undone');
    }, { needs: [S.connect], timeoutMs: 90_000 });

    await t.step(S.candidates, async () => {
      const letGo = scripted.holdCandidates();
      writeFileSync(join(workspace, CANDIDATE_FILE), 'def mul(a, b):\n');
      await wb.openFile(CANDIDATE_FILE);
      await wb.focusEditorEnd();
      await wb.page.keyboard.type('    return', { delay: 30 });
      await wb.waitForGhostText(30_000);
      const first = await wb.inlineGhostText();
      // Shown while the other two are still held by the server: the first did not wait for them.
      const asked = scripted.of('/v1/infill').filter((r) => String(r.body.input_prefix).endsWith('    return'));
      if (!asked.length || asked.at(-1)!.body.n !== 3) throw new Error(`the completion request did not ask for 3 candidates: ${JSON.stringify(asked.at(-1)?.body)}`);
      await wb.screenshot('46-candidates-first');
      if (plainSpaces(first).trim() !== 'a * b') throw new Error(`the first candidate shows as ${JSON.stringify(first)}`);
      letGo();
      const requests = scripted.of('/v1/infill').length;
      await wb.page.keyboard.press('Alt+BracketRight');
      await waitForValue('the second candidate', async () => ((await wb.inlineGhostText()).trim() === 'a + b' ? true : undefined), 15_000);
      await wb.screenshot('47-candidates-next');
      // The third repeated the first: two to cycle through.
      await wb.page.keyboard.press('Alt+BracketRight');
      await waitForValue('back to the first candidate', async () => ((await wb.inlineGhostText()).trim() === 'a * b' ? true : undefined), 15_000);
      if (scripted.of('/v1/infill').length !== requests) throw new Error(`cycling sent ${scripted.of('/v1/infill').length - requests} more completion request(s)`);
      await wb.page.keyboard.press('Escape');
    }, { needs: [S.connect], timeoutMs: 90_000 });
  } finally {
    await scripted.close();
  }
}
