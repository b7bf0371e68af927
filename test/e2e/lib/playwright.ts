// playwright-core, loaded from the e2e cache (scripts/e2e-setup.sh installs it there, so it is no
// package dependency) and typed by hand: only the slice of its API the harness uses.
import { createRequire } from 'node:module';
import { join } from 'node:path';

export interface WaitOptions { timeout?: number }
export type Role = 'button' | 'menu' | 'menuitem' | 'progressbar' | 'alertdialog' | 'note' | 'tab' | 'tablist' | 'tabpanel' | 'textbox' | 'list' | 'listitem' | 'option' | 'dialog' | 'link' | 'heading' | 'region' | 'status' | 'log' | 'combobox' | 'treeitem' | 'row' | 'cell' | 'columnheader' | 'table' | 'checkbox' | 'img' | 'alert';
export interface RoleOptions { name?: string | RegExp; exact?: boolean; selected?: boolean }

export interface Locator {
  waitFor(options?: WaitOptions & { state?: 'attached' | 'detached' | 'visible' | 'hidden' }): Promise<void>;
  click(options?: WaitOptions & { force?: boolean }): Promise<void>;
  dblclick(options?: WaitOptions): Promise<void>;
  hover(options?: WaitOptions): Promise<void>;
  scrollIntoViewIfNeeded(options?: WaitOptions): Promise<void>;
  selectOption(value: string, options?: WaitOptions): Promise<string[]>;
  boundingBox(options?: WaitOptions): Promise<{ x: number; y: number; width: number; height: number } | null>;
  fill(value: string, options?: WaitOptions): Promise<void>;
  press(key: string, options?: WaitOptions): Promise<void>;
  focus(options?: WaitOptions): Promise<void>;
  textContent(options?: WaitOptions): Promise<string | null>;
  innerText(options?: WaitOptions): Promise<string>;
  allInnerTexts(): Promise<string[]>;
  /** Runs `fn` in the page on every element the locator matches, at one moment. */
  evaluateAll<R>(fn: (elements: Element[]) => R): Promise<R>;
  getAttribute(name: string, options?: WaitOptions): Promise<string | null>;
  /** The value of an input, textarea or select (the selected option's value). */
  inputValue(options?: WaitOptions): Promise<string>;
  isVisible(): Promise<boolean>;
  count(): Promise<number>;
  first(): Locator;
  last(): Locator;
  nth(index: number): Locator;
  locator(selector: string): Locator;
  filter(options: { hasText?: string | RegExp; visible?: boolean }): Locator;
  getByRole(role: Role, options?: RoleOptions): Locator;
  getByText(text: string | RegExp, options?: { exact?: boolean }): Locator;
  getByLabel(text: string | RegExp, options?: { exact?: boolean }): Locator;
  getByPlaceholder(text: string | RegExp, options?: { exact?: boolean }): Locator;
}

export interface Frame {
  url(): string;
  name(): string;
  isDetached(): boolean;
  parentFrame(): Frame | null;
  childFrames(): Frame[];
  locator(selector: string): Locator;
  getByRole(role: Role, options?: RoleOptions): Locator;
  getByText(text: string | RegExp, options?: { exact?: boolean }): Locator;
  getByLabel(text: string | RegExp, options?: { exact?: boolean }): Locator;
  getByPlaceholder(text: string | RegExp, options?: { exact?: boolean }): Locator;
  evaluate<R>(expression: string): Promise<R>;
}

export interface ConsoleMessage { type(): string; text(): string }

export interface Keyboard {
  press(key: string): Promise<void>;
  type(text: string, options?: { delay?: number }): Promise<void>;
  insertText(text: string): Promise<void>;
}

export interface Page extends Omit<Frame, 'name' | 'isDetached' | 'parentFrame' | 'childFrames'> {
  keyboard: Keyboard;
  context(): BrowserContext;
  goto(url: string, options?: WaitOptions & { waitUntil?: 'load' | 'domcontentloaded' | 'commit' }): Promise<unknown>;
  screenshot(options: { path: string; fullPage?: boolean }): Promise<Buffer>;
  frames(): Frame[];
  mainFrame(): Frame;
  exposeFunction(name: string, fn: (...args: never[]) => unknown): Promise<void>;
  on(event: 'console', listener: (message: ConsoleMessage) => void): void;
  on(event: 'pageerror', listener: (error: Error) => void): void;
  on(event: 'close' | 'crash', listener: () => void): void;
  close(): Promise<void>;
  isClosed(): boolean;
}

export interface BrowserContext {
  close(): Promise<void>;
  grantPermissions(permissions: string[], options?: { origin?: string }): Promise<void>;
}

export interface Browser {
  newPage(options?: { viewport?: { width: number; height: number }; deviceScaleFactor?: number }): Promise<Page>;
  close(): Promise<void>;
  version(): string;
}

export interface BrowserType {
  launch(options: {
    executablePath: string; headless?: boolean; args?: string[]; timeout?: number; env?: Record<string, string | undefined>;
    handleSIGINT?: boolean; handleSIGTERM?: boolean; handleSIGHUP?: boolean;
  }): Promise<Browser>;
}

/** Chromium flags from shared/notes/vscode-e2e.md: no sandbox (root), no GPU, nothing that phones home. */
export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
];

export function loadChromium(toolsModules: string): BrowserType {
  const require = createRequire(join(toolsModules, 'noop.js'));
  return (require('playwright-core') as { chromium: BrowserType }).chromium;
}

/** Playwright's own signal handlers would exit the process before our cleanup runs: we close the browser ourselves. */
export async function launchChromium(toolsModules: string, executablePath: string): Promise<Browser> {
  return loadChromium(toolsModules).launch({
    executablePath, headless: true, args: CHROMIUM_ARGS, timeout: 60_000,
    handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false,
  });
}
