// Driving the VS Code workbench in Chromium: the command palette, the status bar, editors, inline
// suggestions, webview frames and screenshots. Selectors prefer roles and labels; the few CSS
// classes used (status bar, ghost text, output view) are VS Code's stable workbench parts.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Frame, Locator, Page } from './playwright.js';

/** Thrown by a probe to end the wait at once: the awaited thing can no longer happen. */
export class StopWaiting extends Error {}

/**
 * Polls `probe` until it returns a value (not undefined) or the deadline passes. Other errors
 * from the probe count as "not yet" (the page may be mid-update); StopWaiting ends the wait.
 */
export async function waitForValue<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 250): Promise<T> {
  const end = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      if (err instanceof StopWaiting) throw err;
      lastError = err;
    }
    if (Date.now() >= end) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message.split('\n')[0]})` : '';
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Writes settings with `write` and waits until `applied` sees their effect. VS Code notices a
 * changed settings.json through a file watcher, which on a loaded machine has left a write unread
 * for longer than a step waits; meanwhile the file is written again every 10 s, as a user saving
 * it again would.
 */
export async function settingsApplied(write: (patch: Record<string, unknown>) => void, patch: Record<string, unknown>, what: string, applied: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  let written = Date.now();
  write(patch);
  await waitForValue(what, async () => {
    if (await applied()) return true;
    if (Date.now() - written >= 10_000) {
      write(patch);
      written = Date.now();
    }
    return undefined;
  }, timeoutMs);
}

/** Monaco renders spaces as U+00A0; compare text with plain spaces. */
export function plainSpaces(s: string): string {
  return s.replace(/\u00a0/g, ' ');
}

export class Workbench {
  private constructor(readonly page: Page, private readonly outDir: string) {}

  /** Opens the workbench URL in a new page and waits until the workbench and its status bar are up. */
  static async open(browser: Browser, url: string, outDir: string, name: string): Promise<Workbench> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const consoleLog = join(outDir, `browser-${name}.log`);
    mkdirSync(outDir, { recursive: true });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning' || process.env.STRATA_E2E_CONSOLE === 'all') appendFileSync(consoleLog, `[${m.type()}] ${m.text()}\n`);
    });
    page.on('pageerror', (e) => appendFileSync(consoleLog, `[pageerror] ${e.message}\n`));
    const wb = new Workbench(page, outDir);
    // Copy in the panel writes to the browser's clipboard; tests read it back.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await wb.statusBar().first().waitFor({ timeout: 90_000 });
    return wb;
  }

  async screenshot(step: string): Promise<string> {
    const path = join(this.outDir, `${step}.png`);
    await this.page.screenshot({ path });
    return path;
  }

  // --- command palette -----------------------------------------------------------------------

  /**
   * F1, type the command's title, pick the row whose label is that title. `opensInput`: the
   * command asks something at once (a Quick Pick or an input box), so the widget stays open.
   */
  async runCommand(title: string, timeoutMs = 20_000, opensInput = false): Promise<void> {
    await this.dismissQuickInput();
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: timeoutMs });
    await input.fill(`>${title}`);
    const row = this.page.locator('.quick-input-list').getByRole('option', { name: title }).first();
    try {
      await row.waitFor({ state: 'visible', timeout: timeoutMs });
    } catch {
      const offered = await this.page.locator('.quick-input-list').getByRole('option').allInnerTexts().catch(() => []);
      await this.dismissQuickInput();
      throw new Error(`command "${title}" is not in the palette (offered: ${offered.map((t) => t.split('\n')[0]).join(' | ') || 'nothing'})`);
    }
    await row.click({ timeout: timeoutMs });
    if (!opensInput) await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: timeoutMs });
  }

  async dismissQuickInput(): Promise<void> {
    if (await this.page.locator('.quick-input-widget').isVisible().catch(() => false)) {
      await this.page.keyboard.press('Escape');
      await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 }).catch(() => undefined);
    }
  }

  /** Picks the Quick Pick (or Quick Input list) row whose label is `label`, once it shows. */
  async pickQuickItem(label: string | RegExp, timeoutMs = 20_000): Promise<void> {
    const row = this.page.locator('.quick-input-list').getByRole('option', { name: label }).first();
    try {
      await row.waitFor({ state: 'visible', timeout: timeoutMs });
    } catch {
      const offered = await this.page.locator('.quick-input-list').getByRole('option').allInnerTexts().catch(() => []);
      throw new Error(`no "${String(label)}" in the Quick Pick (offered: ${offered.map((t) => t.split('\n')[0]).join(' | ') || 'nothing'})`);
    }
    await row.click({ timeout: timeoutMs });
  }

  /** The labels of the rows the palette offers for `text` (then closes it). */
  async paletteOffers(text: string, timeoutMs = 20_000): Promise<string[]> {
    await this.dismissQuickInput();
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: timeoutMs });
    await input.fill(`>${text}`);
    const widget = this.page.locator('.quick-input-widget');
    // Rows, or VS Code's "No matching commands" line, once the filter has run.
    const rows = await waitForValue(`palette rows for "${text}"`, async () => {
      const all = (await widget.locator('.quick-input-list').getByRole('option').allInnerTexts()).map((t) => plainSpaces(t.split('\n')[0]!).trim());
      if (all.length) return all;
      return (await widget.getByText(/No matching commands/).count()) ? [] : undefined;
    }, timeoutMs);
    await this.dismissQuickInput();
    return rows;
  }

  /** Types into the open Quick Input box and presses Enter. */
  async answerInput(text: string, timeoutMs = 20_000): Promise<void> {
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: timeoutMs });
    await input.fill(text);
    await this.page.keyboard.press('Enter');
  }

  // --- status bar ------------------------------------------------------------------------------

  statusBar(): Locator {
    return this.page.locator('#workbench\\.parts\\.statusbar .statusbar-item');
  }

  /** Waits for a status bar item whose text (or accessible label) matches; returns its text. */
  async waitForStatusBar(match: RegExp, timeoutMs: number): Promise<string> {
    let seen: string[] = [];
    return waitForValue(`a status bar item matching ${match}`, async () => {
      seen = await this.statusBarTexts();
      return seen.find((item) => match.test(item));
    }, timeoutMs).catch((err: Error) => {
      throw new Error(`${err.message}; the status bar showed ${JSON.stringify(seen.filter((s) => /strata|index/i.test(s)))}`);
    });
  }

  /**
   * Texts of all status bar items, each with its aria-label when that says more. Read in one
   * evaluation: items come and go (the index item, other extensions'), and reading them one by one
   * could pair one item's text with the next one's label.
   */
  async statusBarTexts(): Promise<string[]> {
    const items = await this.statusBar().evaluateAll((els) => els.map((el) => ({
      text: (el as HTMLElement).innerText ?? '',
      label: el.querySelector('a, [role="button"]')?.getAttribute('aria-label') ?? '',
    }))).catch(() => []);
    return items.map(({ text, label }) => {
      const t = text.trim();
      return label && !label.includes(t) ? `${t} ${label}`.trim() : label || t;
    });
  }

  // --- notifications ---------------------------------------------------------------------------

  /** Texts of the visible notification toasts (errors from the extension show up here). */
  async notifications(): Promise<string[]> {
    return this.page.locator('.notifications-toasts .notification-list-item-message').allInnerTexts().catch(() => []);
  }

  /** The toast whose message matches, once it shows: its text and its buttons' labels. */
  async waitForNotification(match: RegExp, timeoutMs: number): Promise<{ text: string; buttons: string[]; item: Locator }> {
    return waitForValue(`a notification matching ${match}`, async () => {
      const items = this.page.locator('.notifications-toasts .notification-list-item');
      const n = await items.count();
      for (let i = 0; i < n; i++) {
        const item = items.nth(i);
        // A short wait: a toast that closes between count() and here would hold the probe for
        // Playwright's default 30 s, the whole wait, while the one sought is already showing.
        const text = plainSpaces(await item.locator('.notification-list-item-message').innerText({ timeout: 1000 }).catch(() => ''));
        if (!match.test(text)) continue;
        const buttons = (await item.locator('.notification-list-item-buttons-container .monaco-button').allInnerTexts()).map((b) => b.trim());
        return { text, buttons, item };
      }
      return undefined;
    }, timeoutMs);
  }

  /** Closes every toast (so later steps see only their own). */
  async clearNotifications(): Promise<void> {
    await this.runCommand('Notifications: Clear All Notifications').catch(() => undefined);
  }

  // --- output view -----------------------------------------------------------------------------

  /** The text shown in the Output view's editor (the visible lines). */
  async outputText(): Promise<string> {
    const text = await this.page.locator('.part.panel .output-view .view-lines').first().innerText({ timeout: 5000 }).catch(() => '');
    return plainSpaces(text);
  }

  /**
   * The visible rows of the active terminal (the DOM renderer: the run's settings turn the
   * terminal's GPU acceleration off, so its text is in the page).
   */
  async terminalText(): Promise<string> {
    const text = await this.page.locator('.part.panel .terminal-wrapper.active .xterm-rows').first().innerText({ timeout: 5000 }).catch(() => '');
    return plainSpaces(text);
  }

  /** The channel picked in the Output view's dropdown. */
  async outputChannel(): Promise<string> {
    return this.page.locator('.part.panel').getByRole('combobox', { name: 'Switch Output' }).inputValue({ timeout: 5000 }).catch(() => '');
  }

  // --- editors ---------------------------------------------------------------------------------

  /** Opens a workspace file through Quick Open (Ctrl+P) and waits for its editor. */
  async openFile(relativePath: string, timeoutMs = 20_000): Promise<void> {
    await this.dismissQuickInput();
    await this.page.keyboard.press('Control+P');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: timeoutMs });
    await input.fill(relativePath);
    const base = relativePath.split('/').pop() ?? relativePath;
    await this.page.locator('.quick-input-list').getByRole('option', { name: base }).first().waitFor({ timeout: timeoutMs });
    await this.page.keyboard.press('Enter');
    await this.page.locator(`.tabs-container [role="tab"][aria-label^="${base}"]`).first().waitFor({ timeout: timeoutMs });
    await this.activeEditor().waitFor({ state: 'visible', timeout: timeoutMs });
  }

  activeEditor(): Locator {
    return this.page.locator('.editor-group-container.active .monaco-editor').first();
  }

  /** Puts the cursor at the end of the active editor's text. */
  async focusEditorEnd(): Promise<void> {
    await this.activeEditor().locator('.view-lines').click();
    await this.page.keyboard.press('Control+End');
  }

  /** Ghost text of an inline suggestion in the active editor, once it shows. */
  /** The ghost text on the cursor's own line (the inline part; later lines are separate view zones). */
  async inlineGhostText(): Promise<string> {
    return plainSpaces((await this.activeEditor().locator('.ghost-text-decoration').allInnerTexts()).join(''));
  }

  async waitForGhostText(timeoutMs: number): Promise<string> {
    return waitForValue('inline ghost text in the editor', async () => {
      const parts = await this.activeEditor().locator('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text').allInnerTexts();
      const text = plainSpaces(parts.join('\n')).trim();
      return text ? text : undefined;
    }, timeoutMs);
  }

  /**
   * What extension decorations draw in the active editor's visible lines: the texts shown beside
   * the code (before/after attachments, which are CSS content, not text), the text struck through,
   * and how many gutter icons show `iconName`.
   */
  async editorDecorations(iconName: string): Promise<{ shown: string[]; struck: string[]; gutterIcons: number }> {
    const got = await this.page.evaluate<{ shown: string[]; struck: string[]; gutterIcons: number }>(`(() => {
      const editor = document.querySelector('.editor-group-container.active .monaco-editor');
      const shown = [], struck = [];
      let gutterIcons = 0;
      if (!editor) return { shown, struck, gutterIcons };
      const unquote = (c) => c.startsWith('"') ? c.slice(1, -1).replace(/\\\\(.)/g, '$1') : c;
      for (const el of editor.querySelectorAll('.view-lines span')) {
        for (const pseudo of ['::before', '::after']) {
          const c = getComputedStyle(el, pseudo).content;
          if (c && c !== 'none' && c !== 'normal' && c !== '""') shown.push(unquote(c));
        }
        if (el.children.length === 0 && el.textContent && getComputedStyle(el).textDecorationLine.includes('line-through')) struck.push(el.textContent);
      }
      for (const el of editor.querySelectorAll('.margin *')) {
        if (getComputedStyle(el).backgroundImage.includes(${JSON.stringify(iconName)})) gutterIcons++;
      }
      return { shown, struck, gutterIcons };
    })()`);
    return { shown: got.shown.map(plainSpaces), struck: got.struck.map(plainSpaces), gutterIcons: got.gutterIcons };
  }

  /** The visible lines of the active editor. */
  async editorText(): Promise<string> {
    return plainSpaces(await this.activeEditor().locator('.view-lines').innerText());
  }

  /** Selects whole lines `from`..`to` (1-based) of the active editor with the keyboard. */
  async selectLines(from: number, to: number): Promise<void> {
    await this.activeEditor().locator('.view-lines').click();
    // Column 0 of line `from` (Home would go to the first non-blank character instead).
    await this.page.keyboard.press('Control+Home');
    for (let i = 1; i < from; i++) await this.page.keyboard.press('ArrowDown');
    for (let i = from; i <= to; i++) await this.page.keyboard.press('Shift+ArrowDown');
  }

  /** The clipboard's text (the page has clipboard permissions). */
  async clipboardText(): Promise<string> {
    return this.page.evaluate<string>('navigator.clipboard.readText()');
  }

  // --- webviews --------------------------------------------------------------------------------

  /**
   * Content frames of webviews (the inner frame of VS Code's webview host iframe), optionally only
   * those of one extension. The outer frame's URL carries `extensionId=publisher.name`.
   */
  webviewFrames(extensionId?: string): Frame[] {
    return this.page.frames().filter((f) => {
      const parent = f.parentFrame();
      if (f.isDetached() || !parent) return false;
      const host = parent.url();
      if (!host.includes('/webview/browser/pre/index.html')) return false;
      return !extensionId || host.toLowerCase().includes(`extensionid=${extensionId.toLowerCase()}`);
    });
  }

  /** The first webview content frame where `selector` (a probe) is present. */
  async waitForWebviewFrame(what: string, probe: (f: Frame) => Locator, timeoutMs: number, extensionId?: string): Promise<Frame> {
    return waitForValue(`a webview showing ${what}`, async () => {
      for (const f of this.webviewFrames(extensionId)) {
        if ((await probe(f).count().catch(() => 0)) > 0) return f;
      }
      return undefined;
    }, timeoutMs);
  }

  async close(): Promise<void> {
    if (!this.page.isClosed()) await this.page.close();
  }
}
