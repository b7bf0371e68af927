// UI steps around the server: ready state and its tooltip, the walkthrough, context keys in the
// palette, the log, the panel's header (one row, actions behind one icon), the sidebar view; at
// the end a coding agent (Continue's CLI) run in a terminal on the managed server, the benchmark
// with progress, Stop (the KV tab forgets the figures), Start with its progress toast, and a
// crash loop ending in one notification with actions.
import { crashEngine, strataModels, strataUrl } from './lib/strata-api.js';
import { openTab, panelFrame, STRATA_EXTENSION_ID, tableRows, visibleButtons } from './lib/panel.js';
import { plainSpaces, StopWaiting, waitForValue } from './lib/workbench.js';
import { STEP, type UiContext } from './ui.suite.js';

const S = {
  walkthrough: 'walkthrough shows the four getting-started steps',
  palette: 'palette offers Stop and Restart, not Start, while the server runs (context keys)',
  log: 'palette: "Strata: Show Log" opens the Strata output',
  header: 'panel header: one row, server actions behind one icon with a menu',
  sidebar: 'sidebar view: the header stays on one row and the name box is not cut off',
  agent: '"Strata: Use with a Coding Agent" runs the picked agent in a terminal on the managed server',
  bench: 'benchmark: quick run shows progress in the notification and the Bench tab, then a results table',
  stopKv: 'after Stop the KV tab says the server is not running and shows no old figures',
  start: 'Start shows a progress notification while the server loads',
  crash: 'an engine crash loop ends in one notification with signal, model and actions',
};

export async function startupSteps({ t, wb }: UiContext): Promise<void> {
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
    // The tooltip (the item's accessible label) carries the slots and the completion state. The
    // Slots line comes with the first metrics poll, which may land after "ready" shows: wait for it.
    const wants = [/Slots: \d+ of 2 busy/, /Inline completions: on/, /Click for Strata actions/];
    let last = text;
    const tooltip = await waitForValue('the status bar tooltip with its Slots line', async () => {
      last = (await wb.statusBarTexts()).find((s) => /Strata: ready/.test(s)) ?? last;
      return wants.every((w) => w.test(last)) ? last : undefined;
    }, 20_000).catch(() => {
      throw new Error(`the status bar tooltip lacks ${wants.filter((w) => !w.test(last)).join(', ')}: ${JSON.stringify(last)}`);
    });
    console.log(`        status bar: ${tooltip.split('\n').join(' / ')}`);
    await wb.screenshot('01-status-ready');
  }, { timeoutMs: 160_000 });

  await t.step(S.walkthrough, async () => {
    await wb.runCommand('Welcome: Open Walkthrough', 20_000, true);
    await wb.pickQuickItem(/Get started with Strata/);
    for (const title of ['Install a GPU backend', 'Pick or download a model', 'Try chat', 'Try inline completion']) {
      await wb.page.getByText(title, { exact: true }).first().waitFor({ timeout: 20_000 });
    }
    await wb.screenshot('02-walkthrough');
    await wb.runCommand('View: Close Editor');
  });

  await t.step(S.palette, async () => {
    await wb.page.keyboard.press('F1');
    await wb.page.locator('.quick-input-widget input').fill('>Strata: ');
    const rows = await waitForValue('Strata commands in the palette', async () => {
      const r = (await wb.page.locator('.quick-input-list').getByRole('option').allInnerTexts()).map((x) => plainSpaces(x.split('\n')[0]!).trim());
      return r.some((x) => x.startsWith('Strata:')) ? r : undefined;
    }, 20_000);
    await wb.screenshot('03-palette-context-keys');
    await wb.dismissQuickInput();
    const has = (c: string): boolean => rows.some((r) => r === `Strata: ${c}` || r.startsWith(`Strata: ${c}`));
    // The list is long: look for the ones the filter must show or hide by exact name.
    const offered = await wb.paletteOffers('Strata: Start Server');
    if (offered.some((r) => r.startsWith('Strata: Start Server'))) throw new Error(`"Start Server" is offered while the server runs: ${offered.join(' | ')}`);
    for (const c of ['Stop Server', 'Restart Server']) {
      const o = await wb.paletteOffers(`Strata: ${c}`);
      if (!o.some((r) => r.startsWith(`Strata: ${c}`))) throw new Error(`"${c}" is not offered while the server runs: ${o.join(' | ')}`);
    }
    if (!has('Open Panel')) throw new Error(`"Open Panel" is missing from the Strata commands: ${rows.join(' | ')}`);
    const accept = await wb.paletteOffers('Strata: Accept Edit');
    if (accept.some((r) => r.startsWith('Strata: Accept Edit'))) throw new Error('"Accept Edit" is offered with no edit pending');
  });

  await t.step(S.log, async () => {
    await wb.runCommand('Strata: Show Log');
    const text = await waitForValue('log lines in the Output view', async () => {
      const out = await wb.outputText();
      return out.trim() ? out : undefined;
    }, 20_000);
    const channel = await wb.outputChannel();
    if (!/\bStrata$/.test(channel)) throw new Error(`the Output view shows channel "${channel}", not "Strata"`);
    console.log(`        output: ${text.split('\n')[0]?.slice(0, 100)}`);
    await wb.screenshot('04-show-log');
  });

  await t.step(STEP.panel, async () => {
    await wb.runCommand('Strata: Open Panel');
    await wb.waitForWebviewFrame('the Strata panel tabs', (f) => f.getByRole('tablist', { name: 'Strata panel' }), 30_000, STRATA_EXTENSION_ID);
    await wb.screenshot('05-panel');
  });

  await t.step(S.header, async () => {
    const f = await panelFrame(wb, 'editor');
    const text = await visibleButtons(f, /^(Start|Stop|Restart|Model…|Log)$/);
    if (text.length) throw new Error(`the header still has text buttons: ${text.join(', ')}`);
    const actions = f.getByRole('button', { name: 'Server actions' });
    if ((await actions.getAttribute('title')) !== 'Server actions') throw new Error('the server actions icon has no tooltip');
    await actions.click();
    const items = (await f.getByRole('menu', { name: 'Server actions' }).getByRole('menuitem').allInnerTexts()).map((x) => plainSpaces(x).trim());
    const want = ['Stop Server', 'Restart Server', 'Select Model…', 'Run Benchmark…', 'Show Log'];
    if (JSON.stringify(items) !== JSON.stringify(want)) throw new Error(`server menu is ${JSON.stringify(items)}, want ${JSON.stringify(want)}`);
    await wb.screenshot('06-header-menu');
    await actions.click();
  }, { needs: [STEP.panel] });

  await t.step(S.sidebar, async () => {
    await wb.runCommand('View: Show Strata');
    const f = await panelFrame(wb, 'sidebar');
    await f.getByRole('button', { name: 'Server actions' }).waitFor({ timeout: 20_000 });
    // Measured in one synchronous read in the page: the header is re-rendered (replaceChildren) on
    // every state update, so a locator's element can be detached between finding and measuring it.
    type Box = { x: number; width: number; height: number } | null;
    const { box, name, width } = await waitForValue('the sidebar header and name box laid out', async () => {
      const m = await f.evaluate<{ box: Box; name: Box; width: number }>(`(() => {
        const rect = (sel) => {
          const r = document.querySelector(sel)?.getBoundingClientRect();
          return r && r.width > 0 ? { x: r.x, width: r.width, height: r.height } : null;
        };
        return { box: rect('.server-row'), name: rect('input[aria-label="Conversation name"]'), width: window.innerWidth };
      })()`);
      return m.box && m.name ? m : undefined;
    }, 10_000);
    if (!box || box.height > 36) throw new Error(`the header row is ${box?.height} px tall in the sidebar: it wraps`);
    if (!name || name.x + name.width > width + 1 || name.width < 80) throw new Error(`the session-name box is ${JSON.stringify(name)} in a ${width} px view`);
    await wb.screenshot('07-sidebar');
  }, { needs: [STEP.ready] });
}

export async function serverSteps({ t, wb, panel }: UiContext): Promise<void> {
  await t.step(S.agent, async () => {
    await wb.runCommand('Strata: Use with a Coding Agent', 20_000, true);
    const picks = await waitForValue('the coding agents in the Quick Pick', async () => {
      const rows = await wb.page.locator('.quick-input-list').getByRole('option').allInnerTexts();
      return rows.length >= 4 ? rows.map((r) => plainSpaces(r.split('\n')[0]!).trim()) : undefined;
    }, 20_000);
    for (const want of ['Claude Code', 'Codex CLI', 'opencode', 'Continue CLI']) {
      if (!picks.some((p) => p.startsWith(want))) throw new Error(`no ${want} among ${JSON.stringify(picks)}`);
    }
    await wb.screenshot('35-agent-pick');
    // Continue's CLI (pinned by this checkout, on the terminals' PATH): its screen names the served
    // model launch gave it (the panel is a few rows high: launch's own line has scrolled away).
    await wb.pickQuickItem(/^Continue CLI/);
    const served = await strataModels(await strataUrl(wb));
    // Its corner says "Checking for updates" until api.continue.dev answers or the connection
    // gives up (a closed network may do neither for a minute): the model line is what launch decides.
    let shown = '';
    const model = await waitForValue('Continue CLI on the managed server in the terminal', async () => {
      shown = await wb.terminalText();
      return served.find((m) => shown.includes(`Model: ${m}`));
    }, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}; the terminal shows: ${JSON.stringify(shown.slice(-1500))}`);
    });
    console.log(`        terminal: Continue CLI, Model: ${model}`);
    await wb.screenshot('36-agent-terminal');
    await wb.runCommand('Terminal: Kill All Terminals');
  }, { needs: [STEP.ready], timeoutMs: 120_000 });

  await t.step(S.bench, async () => {
    await wb.clearNotifications();
    const frame = await panel();
    const bench = await openTab(frame, 'Bench');
    // A quick run can end within a second, between two looks: the page records every progress
    // text the tab shows.
    await frame.evaluate<void>(`(() => {
      window.__e2eBenchProgress = [];
      const record = () => {
        const t = document.querySelector('[role="progressbar"][aria-label="Benchmark progress"]')?.getAttribute('aria-valuetext');
        if (t && window.__e2eBenchProgress.at(-1) !== t) window.__e2eBenchProgress.push(t);
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true });
    })()`);
    await bench.getByRole('button', { name: /Run benchmark/ }).click();
    await wb.pickQuickItem(/^Quick/);
    const note = await wb.waitForNotification(/Strata: benchmark/, 20_000);
    const seen = await waitForValue('progress in the Bench tab', async () => {
      const texts = await frame.evaluate<string[]>('window.__e2eBenchProgress');
      return texts.length ? texts : undefined;
    }, 30_000);
    const progress = seen.find((p) => /of 1 done/.test(p)) ?? seen.at(-1)!;
    await wb.screenshot('30-bench-progress');
    // A quick run can finish within a second: the toast may already say "done" on the second
    // look, so the progress form must have been on one of the two.
    const toast = await wb.waitForNotification(/Strata: benchmark/, 5000).catch(() => note);
    const toasts = [note.text, toast.text];
    if (!toasts.some((t) => /of 1 done/.test(t)) || !/of 1 done/.test(progress ?? '')) throw new Error(`progress says ${JSON.stringify(toasts)} / ${JSON.stringify(progress)}`);
    const rows = await waitForValue('rows in the Benchmark results table', async () => {
      const r = await tableRows((await panel()).getByRole('table', { name: 'Benchmark results' }));
      return r.length ? r : undefined;
    }, 120_000);
    if (!rows.some((r) => /^single: /.test(r[0] ?? ''))) throw new Error(`no single-scenario figures: ${JSON.stringify(rows.slice(0, 3))}`);
    console.log(`        progress "${progress}"; first figure: ${rows[0]!.join(' | ')}`);
    await wb.screenshot('31-bench-results');
  }, { needs: [STEP.ready], timeoutMs: 180_000 });

  await t.step(S.stopKv, async () => {
    await wb.runCommand('Strata: Stop Server');
    await wb.waitForStatusBar(/Strata: stopped/, 30_000);
    const kv = await openTab(await panel(), 'KV cache');
    await kv.getByText('The Strata server is not running').waitFor({ timeout: 10_000 });
    if (await kv.getByRole('table', { name: 'Slots' }).count()) throw new Error('the KV tab still shows the Slots table of the stopped server');
    await wb.screenshot('32-kv-after-stop');
  }, { needs: [STEP.ready] });

  await t.step(S.start, async () => {
    await wb.runCommand('Strata: Start Server');
    const toast = await wb.waitForNotification(/Strata: starting the server/, 20_000);
    await wb.screenshot('33-start-progress');
    await wb.waitForStatusBar(/Strata: ready/, 120_000);
    console.log(`        toast: ${toast.text.split('\n').join(' ')}`);
  }, { needs: [S.stopKv], timeoutMs: 150_000 });

  await t.step(S.crash, async () => {
    await wb.clearNotifications();
    const base = await strataUrl(wb);
    await crashEngine(base, 5, 60_000);
    const n = await wb.waitForNotification(/the engine stopped after 5 crashes in a row \(signal SIGSEGV\)/, 60_000);
    // The served model's name (its file's stem: engine_death.model), as the Models tab lists it.
    if (!/running (starcoder-tiny|strata-test-tiny)/.test(n.text) || !/on CPU/.test(n.text)) throw new Error(`the notification does not name the model and device: ${n.text}`);
    for (const b of ['Show Log', 'Choose Another Model', 'Troubleshooting']) if (!n.buttons.includes(b)) throw new Error(`no "${b}" action: ${n.buttons.join(', ')}`);
    if (!n.buttons.some((b) => b === 'Choose Another Backend' || b === 'Device Settings')) throw new Error(`no backend action: ${n.buttons.join(', ')}`);
    await wb.waitForStatusBar(/Strata: failed/, 10_000);
    const same = (await wb.notifications()).filter((x) => /the engine stopped/.test(x));
    if (same.length !== 1) throw new Error(`${same.length} crash notifications, want one`);
    console.log(`        ${n.text}\n        actions: ${n.buttons.join(' | ')}`);
    await wb.screenshot('34-crash-notification');
    // The areas after this one start from a ready server, as a user would after Restart.
    await wb.clearNotifications();
    await wb.runCommand('Strata: Restart Server');  // offered in the palette while failed, as Troubleshooting says
    await wb.waitForStatusBar(/Strata: ready/, 120_000);
  }, { needs: [S.start], timeoutMs: 240_000 });
}
