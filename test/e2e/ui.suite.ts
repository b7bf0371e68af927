// The product UI suite: the Strata VSIX installed in a real VS Code, its managed server on the tiny
// test model. Each step saves test-output/e2e/<nn-step>.png. Steps that need an earlier step's
// outcome are skipped (and counted) when it failed, so one missing feature shows up once, by name.
// Selectors are the panel's roles and labels (webview/main.ts, webview/tabs/*.ts).
import { acceptGhostText } from './lib/editing.js';
import type { Frame, Locator } from './lib/playwright.js';
import type { StepRunner } from './lib/steps.js';
import { plainSpaces, StopWaiting, waitForValue, type Workbench } from './lib/workbench.js';

export const STRATA_EXTENSION_ID = 'strata.strata-vscode';

/** User settings for the run: the test model, auto-start, and a small server (2 cores). */
export function STRATA_SETTINGS_FOR(modelPath: string): Record<string, unknown> {
  return {
    'strata.modelPath': modelPath,
    'strata.serverMode': 'managed',
    'strata.autoStart': true,
    'strata.slots': 2,
    'strata.contextSize': 512,
    'strata.cacheMiB': 64,
    'strata.inlineCompletion.enabled': true,
    'strata.inlineCompletion.debounceMs': 50,
    'strata.inlineCompletion.maxLines': 2,
    // The word-based suggest widget pops up while typing, and VS Code then cancels a pending
    // inline completion (measured: any provider slower than ~0.7 s loses its ghost text). The
    // test is about ghost text, so keep the widget away.
    'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
    'editor.wordBasedSuggestions': 'off',
    'editor.suggestOnTriggerCharacters': false,
  };
}

const STEP = {
  ready: 'status bar reaches ready',
  log: 'palette: "Strata: Show Log" opens the Strata output',
  panel: 'panel opens ("Strata: Open Panel")',
  chat: 'Chat tab streams an answer',
  session: 'session is saved and listed in Sessions',
  kv: 'KV cache tab shows the conversation held in a slot',
  trace: 'Trace tab shows the request',
  inline: 'inline ghost text appears and Tab accepts it',
};

async function openTab(frame: Frame, name: string): Promise<Locator> {
  const tab = frame.getByRole('tab', { name, exact: true });
  await tab.click({ timeout: 10_000 });
  await waitForValue(`the ${name} tab to be selected`, async () => ((await tab.getAttribute('aria-selected')) === 'true' ? true : undefined), 10_000);
  const panelId = await tab.getAttribute('aria-controls');
  return frame.locator(`#${panelId}`);
}

/** Texts of a table's body rows (one string per row, cells joined by ' | '). */
async function tableRows(table: Locator): Promise<string[][]> {
  const rows = table.locator('tbody tr');
  const n = await rows.count();
  const out: string[][] = [];
  for (let i = 0; i < n; i++) out.push((await rows.nth(i).locator('td').allInnerTexts()).map((c) => plainSpaces(c).trim()));
  return out;
}

export async function uiSuite(t: StepRunner, wb: Workbench, workspace: string): Promise<void> {
  let frame: Frame | undefined;

  await t.step(STEP.ready, async () => {
    // Fail at once on "failed", and when the server stays stopped (auto-start did not start it).
    const firstStopped = { at: 0 };
    const text = await waitForValue('"Strata: ready" in the status bar', async () => {
      const items = (await wb.statusBarTexts()).filter((s) => /Strata:/.test(s));
      const ready = items.find((s) => /Strata: ready/.test(s));
      if (ready) return ready;
      const failed = items.find((s) => /Strata: failed/.test(s));
      if (failed) throw new StopWaiting(`the server failed: ${failed}; notifications: ${JSON.stringify(await wb.notifications())}`);
      if (items.some((s) => /Strata: stopped/.test(s))) {
        firstStopped.at ||= Date.now();
        if (Date.now() - firstStopped.at > 45_000) throw new StopWaiting(`the status bar stayed at ${JSON.stringify(items)} for 45 s: auto-start did not start the server (see the Strata output)`);
      } else firstStopped.at = 0;
      return undefined;
    }, 150_000).catch(async (err: Error) => {
      if (err instanceof StopWaiting) throw err;
      const seen = (await wb.statusBarTexts()).filter((s) => /strata/i.test(s));
      throw new Error(`${err.message}; Strata status bar items: ${JSON.stringify(seen)}; notifications: ${JSON.stringify(await wb.notifications())}`);
    });
    console.log(`        status bar: ${text}`);
    await wb.screenshot('01-status-ready');
  }, { timeoutMs: 160_000 });

  await t.step(STEP.log, async () => {
    await wb.runCommand('Strata: Show Log');
    const text = await waitForValue('log lines in the Output view', async () => {
      const out = await wb.outputText();
      return out.trim() ? out : undefined;
    }, 20_000);
    const channel = await wb.outputChannel();
    if (!/\bStrata$/.test(channel)) throw new Error(`the Output view shows channel "${channel}", not "Strata"`);
    console.log(`        output: ${text.split('\n')[0]?.slice(0, 100)}`);
    await wb.screenshot('02-show-log');
  });

  await t.step(STEP.panel, async () => {
    await wb.runCommand('Strata: Open Panel');
    frame = await wb.waitForWebviewFrame('the Strata panel tabs', (f) => f.getByRole('tablist', { name: 'Strata panel' }), 30_000, STRATA_EXTENSION_ID);
    await wb.screenshot('03-panel');
  });

  await t.step(STEP.chat, async () => {
    const f = frame!;
    const panel = await openTab(f, 'Chat');
    const log = panel.getByRole('log', { name: 'Conversation' });
    // Record the answer's length at every DOM change of the transcript: a streamed answer is seen
    // at several lengths, one delivered whole at one.
    await f.evaluate<void>(`(() => {
      const log = document.querySelector('[role="log"][aria-label="Conversation"]');
      window.__e2eLengths = [];
      new MutationObserver(() => {
        const turns = log.querySelectorAll('.turn.assistant .content');
        const last = turns[turns.length - 1];
        const n = last ? last.textContent.replace('thinking…', '').length : 0;
        if (n && window.__e2eLengths[window.__e2eLengths.length - 1] !== n) window.__e2eLengths.push(n);
      }).observe(log, { subtree: true, childList: true, characterData: true });
    })()`);
    await panel.getByRole('textbox', { name: 'Message' }).fill('Write a haiku about caches.');
    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    // The chat's own Stop button (inside the Chat tab; the header's Stop stops the server).
    const stop = panel.getByRole('button', { name: 'Stop', exact: true });
    const failedTurn = async (): Promise<void> => {
      const failed = await log.getByRole('alert').allInnerTexts();
      if (failed.length) throw new StopWaiting(`the chat answered with an error: ${failed.join(' / ')}`);
    };
    // A random-weight model rarely says when to stop: once the answer has visibly streamed, stop
    // it with the Stop button (a user's way), unless it ended by itself first.
    await waitForValue('the answer to stream', async () => {
      await failedTurn();
      const seen = await f.evaluate<number[]>('window.__e2eLengths');
      return seen.length >= 3 || (seen.length >= 1 && (await stop.count()) === 0) ? true : undefined;
    }, 60_000);
    if (await stop.count()) await stop.click().catch(() => undefined);
    const answer = await waitForValue('the answer to end', async () => {
      await failedTurn();
      const pending = await log.locator('.turn.assistant.pending').count();
      const text = plainSpaces(await log.locator('.turn.assistant .content').last().innerText().catch(() => ''));
      return (await stop.count()) === 0 && pending === 0 && text.trim() ? text : undefined;
    }, 30_000);
    const lengths = await f.evaluate<number[]>('window.__e2eLengths');
    if (lengths.length < 2) throw new Error(`the answer appeared at ${lengths.length} length(s) (${lengths.join(', ')}): it did not stream`);
    console.log(`        answer seen at ${lengths.length} lengths, ${answer.length} chars: ${JSON.stringify(answer.slice(0, 100))}`);
    await wb.screenshot('04-chat-answer');
  }, { needs: [STEP.panel], timeoutMs: 120_000 });

  const sessionName = `e2e-${Date.now().toString(36)}`;
  await t.step(STEP.session, async () => {
    const f = frame!;
    const chat = await openTab(f, 'Chat');
    await chat.getByRole('textbox', { name: 'Conversation name' }).fill(sessionName);
    await chat.getByRole('button', { name: 'Save as session' }).click();
    const sessions = await openTab(f, 'Sessions');
    const row = await waitForValue(`"${sessionName}" in the Saved sessions table`, async () => {
      const rows = await tableRows(sessions.getByRole('table', { name: 'Saved sessions' }));
      return rows.find((r) => r[0] === sessionName);
    }, 30_000);
    console.log(`        session: ${row.slice(0, 5).join(' | ')}`);
    await wb.screenshot('05-sessions');
  }, { needs: [STEP.chat] });

  await t.step(STEP.kv, async () => {
    const kv = await openTab(frame!, 'KV cache');
    const held = await waitForValue('a slot holding tokens in the Slots table', async () => {
      const rows = await tableRows(kv.getByRole('table', { name: 'Slots' }));
      const best = Math.max(0, ...rows.map((r) => Number(r[2]?.match(/\d+/)?.[0] ?? 0)));
      return best > 0 ? best : undefined;
    }, 20_000);
    console.log(`        most tokens held in a slot: ${held}`);
    await wb.screenshot('06-kv-cache');
  }, { needs: [STEP.chat] });

  await t.step(STEP.trace, async () => {
    const trace = await openTab(frame!, 'Trace');
    await trace.getByRole('img', { name: /^Waterfall of request / }).first().waitFor({ timeout: 20_000 });
    const rows = await waitForValue('a row in the Recent requests table', async () => {
      const r = await tableRows(trace.getByRole('table', { name: 'Recent requests' }));
      return r.length ? r : undefined;
    }, 20_000);
    console.log(`        recent request: ${rows[0]!.join(' | ')}`);
    await wb.screenshot('07-trace');
  }, { needs: [STEP.chat] });

  await t.step(STEP.inline, async () => {
    const r = await acceptGhostText(wb, workspace, 'e2e_sample.py', 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n', '    return', '08-inline', 60_000);
    if (!r.after.startsWith(r.before)) throw new Error(`the text before the cursor changed: ${JSON.stringify(r.after.slice(0, 200))}`);
    const inserted = r.after.slice(r.before.length);
    const ghostStart = plainSpaces(r.ghost).split('\n')[0]!.trim().slice(0, 10);
    if (!inserted.trim()) throw new Error(`nothing was inserted (ghost text was ${JSON.stringify(r.ghost)})`);
    if (ghostStart && !inserted.includes(ghostStart)) throw new Error(`inserted ${JSON.stringify(inserted)} is not the ghost text ${JSON.stringify(r.ghost)}`);
    console.log(`        accepted: ${JSON.stringify(inserted.slice(0, 80))}`);
  }, { needs: [STEP.ready], timeoutMs: 90_000 });
}
