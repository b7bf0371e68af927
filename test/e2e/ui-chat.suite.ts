// UI steps of the chat: a streamed answer stopped with the chat's own Stop (the only one in
// sight) and its size; sessions; the KV, Trace and Devices tabs; a session saved through the HTTP
// API restored with its messages, rendered as markdown, with Copy and Insert on its code block;
// a selection attached with Ctrl+Alt+A, its token count shown before sending and visible in the
// request; trimming said before sending; an inline edit accepted as a diff and undone.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openTab, tableRows, visibleButtons, waitForAnswerEnd } from './lib/panel.js';
import { api, saveSessionOverHttp, strataUrl } from './lib/strata-api.js';
import { plainSpaces, StopWaiting, waitForValue } from './lib/workbench.js';
import { STEP, type UiContext } from './ui.suite.js';

const S = {
  session: 'session is saved and listed in Sessions, and restores with the Thinking level it was saved with',
  kv: 'KV cache tab shows the conversation held in a slot',
  trace: 'Trace tab shows the request waterfall on a time axis',
  drafts: 'Trace tab shows the speculative drafts\' acceptance by draft position, as the server counts them',
  devices: 'Devices tab names the CPU, says its memory use is not reported, and shows the fit to memory (plan, KV per slot, what stays free)',
  httpSession: 'a session saved through the HTTP API is restored with its messages, rendered as markdown',
  copy: 'Copy on a code block puts the code on the clipboard',
  insert: 'Insert on a code block puts the code at the editor\'s cursor',
  context: 'a selection attached with Ctrl+Alt+A shows its tokens before sending and goes with the request',
  trim: 'a file too big for the context is trimmed, and the panel says so before sending',
  edit: 'inline edit: the rewrite shows as a diff, Accept applies it, Ctrl+Z undoes it',
};

const MARKDOWN_ANSWER = 'Here is **the function** you asked for:\n\n```python\ndef double(x):\n    return 2 * x\n```\n\n- it takes `x`\n- it returns twice that';
const CODE = 'def double(x):\n    return 2 * x';

export async function chatSteps({ t, wb, workspace, panel }: UiContext): Promise<void> {
  await t.step(STEP.chat, async () => {
    const f = await panel();
    const tab = await openTab(f, 'Chat');
    // A fresh conversation: an earlier area may have left one in the tab (its turns would count here).
    await tab.getByRole('button', { name: 'New chat' }).click();
    const log = tab.getByRole('log', { name: 'Conversation' });
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
    await tab.getByRole('textbox', { name: 'Message' }).fill('Write a haiku about caches.');
    await tab.getByRole('button', { name: 'Send', exact: true }).click();
    const stop = tab.getByRole('button', { name: 'Stop', exact: true });
    const failedTurn = async (): Promise<void> => {
      const failed = await log.getByRole('alert').allInnerTexts();
      if (failed.length) throw new StopWaiting(`the chat answered with an error: ${failed.join(' / ')}`);
    };
    // Once the answer has visibly streamed, stop it with the chat's Stop button (a user's way).
    await waitForValue('the answer to stream', async () => {
      await failedTurn();
      const seen = await f.evaluate<number[]>('window.__e2eLengths');
      return seen.length >= 3 || (seen.length >= 1 && !(await stop.isVisible())) ? true : undefined;
    }, 60_000);
    const stops = await visibleButtons(f, /stop/i);
    if (await stop.isVisible()) {
      if (stops.length !== 1) throw new Error(`while the answer streams, the panel shows ${stops.length} Stop buttons: ${stops.join(', ')}`);
      await wb.screenshot('10-chat-streaming-one-stop');
      // Stopping the server while the answer streams asks first (the random model streams for many seconds).
      await f.getByRole('button', { name: 'Server actions' }).click();
      await f.getByRole('menuitem', { name: 'Stop Server' }).click();
      const dialog = f.getByRole('alertdialog', { name: 'Stop the server?' });
      await dialog.waitFor({ timeout: 5000 });
      const said = plainSpaces(await dialog.innerText());
      if (!/\d+ requests? (is|are) running/.test(said)) throw new Error(`the confirmation says ${JSON.stringify(said)}`);
      await wb.screenshot('10b-stop-server-confirm');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await stop.click().catch(() => undefined);
    }
    const last = await waitForAnswerEnd(f, 30_000);
    const answer = plainSpaces(await last.locator('.content').innerText());
    const lengths = await f.evaluate<number[]>('window.__e2eLengths');
    if (lengths.length < 2) throw new Error(`the answer appeared at ${lengths.length} length(s) (${lengths.join(', ')}): it did not stream`);
    const stats = plainSpaces(await last.locator('.stats').innerText().catch(() => ''));
    // A stopped answer says how much arrived (the server sends no usage for it); one that ended says its usage.
    if (!/\d+ tok/.test(stats)) throw new Error(`the answer's stats line is ${JSON.stringify(stats)}`);
    console.log(`        answer seen at ${lengths.length} lengths, ${answer.length} chars; stats "${stats}"`);
    await wb.screenshot('11-chat-answer');
    // The status bar says busy until its next metrics poll sees the stopped answer gone.
    await wb.waitForStatusBar(/Strata: ready/, 15_000).catch((err: Error) => {
      throw new Error(`the server is not ready after cancelling the Stop Server confirmation: ${err.message}`);
    });
    // Regenerate replaces the last answer (the conversation keeps one question and one answer).
    await last.getByRole('button', { name: 'Regenerate answer' }).click();
    await stop.waitFor({ state: 'visible', timeout: 5000 }).catch(() => undefined);
    if (await stop.isVisible()) await stop.click().catch(() => undefined);
    await waitForAnswerEnd(f, 30_000);
    const turns = await log.locator('.turn').count();
    if (turns !== 2) throw new Error(`after Regenerate the chat has ${turns} turns, want 2`);
  }, { needs: [STEP.panel], timeoutMs: 120_000 });

  const sessionName = `e2e-${Date.now().toString(36)}`;
  await t.step(S.session, async () => {
    const f = await panel();
    const chat = await openTab(f, 'Chat');
    const thinking = f.locator('select.thinking-level');
    await thinking.selectOption('high');
    await chat.getByRole('textbox', { name: 'Conversation name' }).fill(sessionName);
    await chat.getByRole('button', { name: 'Save as session' }).click();
    const sessions = await openTab(f, 'Sessions');
    const row = await waitForValue(`"${sessionName}" in the Saved sessions table`, async () => {
      const rows = await tableRows(sessions.getByRole('table', { name: 'Saved sessions' }));
      return rows.find((r) => r[0] === sessionName);
    }, 30_000);
    console.log(`        session: ${row.slice(0, 5).join(' | ')}`);
    await wb.screenshot('12-sessions');
    // Changed after saving, then restored: the conversation comes back with the level it was saved with.
    await openTab(f, 'Chat');
    await thinking.selectOption('auto');
    await (await openTab(f, 'Sessions')).getByRole('button', { name: `Restore session ${sessionName}` }).click();
    await waitForValue('the restored conversation\'s Thinking level (high)', async () => ((await thinking.inputValue()) === 'high' ? true : undefined), 20_000);
    await wb.screenshot('12-session-restored-thinking');
  }, { needs: [STEP.chat] });

  await t.step(S.kv, async () => {
    const kv = await openTab(await panel(), 'KV cache');
    const held = await waitForValue('a slot holding tokens in the Slots table', async () => {
      const rows = await tableRows(kv.getByRole('table', { name: 'Slots' }));
      const best = Math.max(0, ...rows.map((r) => Number(r[2]?.match(/\d+/)?.[0] ?? 0)));
      return best > 0 ? best : undefined;
    }, 20_000);
    console.log(`        most tokens held in a slot: ${held}`);
    await wb.screenshot('13-kv-cache');
  }, { needs: [STEP.chat] });

  await t.step(S.trace, async () => {
    const trace = await openTab(await panel(), 'Trace');
    const chart = trace.getByRole('img', { name: /^Waterfall of request / }).first();
    await chart.waitFor({ timeout: 20_000 });
    const label = (await chart.getAttribute('aria-label')) ?? '';
    if (!/queued .*first token at \d+ ms.*decode/.test(label)) {
      const recent = await tableRows(trace.getByRole('table', { name: 'Recent requests' })).catch(() => []);
      throw new Error(`the waterfall does not list the phases: ${label}; recent: ${JSON.stringify(recent)}`);
    }
    // The chart is in the page before the panel lays it out: wait for the width it gets in a wide panel.
    await waitForValue('the waterfall laid out at least 600 px wide in a wide panel', async () => {
      const box = await chart.boundingBox();
      if (!box || box.width < 600) throw new Error(`the waterfall is ${box?.width ?? 'not yet'} px wide`);
      return box.width;
    }, 10_000);
    const rows = await waitForValue('a row in the Recent requests table', async () => {
      const r = await tableRows(trace.getByRole('table', { name: 'Recent requests' }));
      return r.length ? r : undefined;
    }, 20_000);
    console.log(`        ${label.slice(0, 140)}; recent request: ${rows[0]!.join(' | ')}`);
    await wb.screenshot('14-trace');
  }, { needs: [STEP.chat] });

  await t.step(S.drafts, async () => {
    // A request with a prediction drafts it (the engine verifies the draft whatever the random
    // model answers); the tab shows the server's counts per position once its metrics come.
    const base = await strataUrl(wb);
    await api(base, '/v1/chat/completions', {
      messages: [{ role: 'user', content: 'Write add(a, b).' }], max_tokens: 24, temperature: 0,
      prediction: { type: 'content', content: 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n' },
    });
    const trace = await openTab(await panel(), 'Trace');
    const table = trace.getByRole('table', { name: 'Draft acceptance by position' });
    let served: Array<{ position: number; drafted: number; accepted: number }> = [];
    const rows = await waitForValue('the Draft acceptance by position table with the server\'s counts', async () => {
      served = (await api<{ totals: { draft_positions: typeof served } }>(base, '/metrics')).totals.draft_positions;
      const r = await tableRows(table).catch(() => []);
      const want = served.map((p) => [String(p.position), String(p.drafted), String(p.accepted)]);
      return want.length > 0 && JSON.stringify(r.map((x) => x.slice(0, 3))) === JSON.stringify(want) ? r : undefined;
    }, 20_000).catch((err: Error) => {
      throw new Error(`${err.message}; the server says ${JSON.stringify(served)}`);
    });
    console.log(`        ${rows.length} positions; first: ${rows[0]!.join(' | ')}`);
    await table.scrollIntoViewIfNeeded();
    await wb.screenshot('14-trace-drafts');
  }, { needs: [STEP.chat] });

  await t.step(S.devices, async () => {
    const devices = await openTab(await panel(), 'Devices');
    const row = await waitForValue('the CPU in the Devices table', async () => (await tableRows(devices.getByRole('table', { name: 'Devices' }))).find((r) => r[0] === 'CPU'), 20_000);
    if (!row[1] || row[1] === '–' || row[2] !== 'cpu') throw new Error(`the CPU row lacks its description or type: ${row.join(' | ')}`);
    if (!/RAM \(use not reported\)/.test(row[5] ?? '')) throw new Error(`the CPU's memory reads ${JSON.stringify(row[5])}`);
    // strata.fit 'on': the plan llama.cpp's fitter measured for the CPU, its KV cache per slot and what stays free.
    if (!/\d(\.\d)? [KMG]iB$/.test(row[6] ?? '') || !/[KMG]iB$/.test(row[7] ?? '') || !/[KMG]iB$/.test(row[8] ?? '')) {
      throw new Error(`the CPU row lacks the fit's plan / KV per slot / free after: ${row.join(' | ')}`);
    }
    const fit = devices.getByLabel('Fit of replica 0');
    const text = await waitForValue('the fit to memory below the table', async () => ((await fit.count()) ? await fit.innerText() : undefined), 20_000);
    if (!/fits\s+replica 0: \d+ layers on the CPU · ctx 512 × 2 slots · f16 KV/.test(text)) throw new Error(`the fit reads ${JSON.stringify(text)}`);
    console.log(`        ${row.slice(5).join(' | ')}; ${text.replace(/\s+/g, ' ')}`);
    await wb.screenshot('15-devices');
  }, { needs: [STEP.ready] });

  await t.step(S.httpSession, async () => {
    const base = await strataUrl(wb);
    const name = `e2e-http-${Date.now().toString(36)}`;
    await saveSessionOverHttp(base, name, [{ role: 'user', content: 'Show me a function.' }, { role: 'assistant', content: MARKDOWN_ANSWER }]);
    const f = await panel();
    const sessions = await openTab(f, 'Sessions');
    await sessions.getByRole('button', { name: 'Refresh' }).click();
    await sessions.getByRole('button', { name: `Restore session ${name}` }).click({ timeout: 20_000 });
    const log = f.getByRole('log', { name: 'Conversation' });
    const answer = log.locator('.turn.assistant .content.markdown').last();
    await waitForValue('the restored answer in the chat', async () => ((await answer.innerText().catch(() => '')).includes('the function') ? true : undefined), 20_000)
      .catch(async (e: Error) => { throw new Error(`${e.message}; notice: ${JSON.stringify(await f.locator('.notice').innerText().catch(() => ''))}`); });
    // Saved without a Thinking level (over HTTP): restored as auto.
    const level = await f.locator('select.thinking-level').inputValue();
    if (level !== 'auto') throw new Error(`a session saved without a Thinking level restored with ${level}`);
    const strong = await answer.locator('strong').allInnerTexts();
    const items = await answer.locator('li').allInnerTexts();
    const code = plainSpaces(await answer.locator('.code-block pre').innerText());
    if (!strong.includes('the function') || items.length !== 2 || code.trim() !== CODE) {
      throw new Error(`markdown not rendered: strong ${JSON.stringify(strong)}, items ${JSON.stringify(items)}, code ${JSON.stringify(code)}`);
    }
    if (!(await answer.locator('.code-block .hljs-keyword').count())) throw new Error('the python code block is not highlighted');
    await wb.screenshot('16-restored-markdown');
  }, { needs: [STEP.ready] });

  await t.step(S.copy, async () => {
    const f = await panel();
    await f.locator('.turn.assistant .content.markdown').last().getByRole('button', { name: 'Copy code' }).click();
    const clip = await waitForValue('the code on the clipboard', async () => ((await wb.clipboardText()).includes('def double') ? wb.clipboardText() : undefined), 10_000);
    if (plainSpaces(clip).trim() !== CODE) throw new Error(`the clipboard holds ${JSON.stringify(clip)}`);
  }, { needs: [S.httpSession] });

  await t.step(S.insert, async () => {
    const file = join(workspace, 'e2e_insert.py');
    writeFileSync(file, '# inserted below\n');
    await wb.openFile('e2e_insert.py');
    await wb.focusEditorEnd();
    const f = await panel();
    await f.locator('.turn.assistant .content.markdown').last().getByRole('button', { name: 'Insert code at cursor' }).click();
    await waitForValue('the code in the editor', async () => ((await wb.editorText()).includes('def double') ? true : undefined), 15_000);
    await wb.page.keyboard.press('Control+S');
    const saved = await waitForValue('the file saved with the code', async () => {
      const now = readFileSync(file, 'utf8');
      return now.includes('def double') ? now : undefined;
    }, 10_000);
    if (saved !== `# inserted below\n${CODE}`) throw new Error(`the file is ${JSON.stringify(saved)}`);
    await wb.screenshot('17-inserted');
  }, { needs: [S.httpSession] });

  await t.step(S.context, async () => {
    writeFileSync(join(workspace, 'e2e_ctx.py'), 'import math\n\ndef area(r):\n    return math.pi * r * r\n\nprint(area(2))\n');
    await wb.openFile('e2e_ctx.py');
    await wb.selectLines(3, 4);
    await wb.page.keyboard.press('Control+Alt+A');
    const f = await wb.waitForWebviewFrame('the attached selection', (fr) => fr.getByRole('list', { name: 'Attached context' }).getByRole('listitem'), 30_000, 'strata.strata-vscode');
    const chip = (await f.getByRole('list', { name: 'Attached context' }).getByRole('listitem').first().getAttribute('aria-label')) ?? '';
    if (!/^Selection from e2e_ctx\.py, \d+ tokens$/.test(chip)) throw new Error(`the chip says ${JSON.stringify(chip)}`);
    const chat = f.getByRole('tabpanel').filter({ visible: true }).first();
    await chat.getByRole('textbox', { name: 'Message' }).fill('What does this compute?');
    const cost = await waitForValue('the prompt size before sending', async () => {
      const s = plainSpaces(await f.getByRole('status', { name: 'Prompt size' }).innerText());
      return /\d+ of 384 prompt tokens/.test(s) ? s : undefined;
    }, 20_000);
    await wb.screenshot('18-context-chip');
    await chat.getByRole('button', { name: 'Send', exact: true }).click();
    const question = f.getByRole('log', { name: 'Conversation' }).locator('.turn.user').last();
    await question.getByRole('list', { name: 'Context sent' }).waitFor({ timeout: 10_000 });
    await question.locator('details.sent summary').click();
    const sent = plainSpaces(await waitForValue('the request as sent', async () => {
      const x = await question.locator('pre.sent-text').innerText().catch(() => '');
      return x.includes('def area') ? x : undefined;
    }, 20_000));
    if (!sent.includes('Selected code from e2e_ctx.py (lines 3-4):') || !sent.includes('def area(r):\n    return math.pi * r * r') || !sent.trimEnd().endsWith('What does this compute?')) {
      throw new Error(`the request does not carry the selection: ${JSON.stringify(sent)}`);
    }
    if (sent.includes('print(area(2))')) throw new Error('the request carries lines outside the selection');
    console.log(`        ${chip}; ${cost}`);
    await wb.screenshot('19-context-sent');
    const stop = f.getByRole('button', { name: 'Stop', exact: true });
    if (await stop.isVisible()) await stop.click().catch(() => undefined);
    await waitForAnswerEnd(f, 30_000);
  }, { needs: [STEP.ready], timeoutMs: 120_000 });

  await t.step(S.trim, async () => {
    writeFileSync(join(workspace, 'e2e_big.py'), Array.from({ length: 200 }, (_, i) => `value_${i} = compute(${i}, "item number ${i}")`).join('\n') + '\n');
    const f = await wb.waitForWebviewFrame('the chat with its Add context button', (fr) => fr.getByRole('button', { name: 'Add context (selection or file)' }).filter({ visible: true }), 20_000, 'strata.strata-vscode');
    await f.getByRole('button', { name: 'Add context (selection or file)' }).filter({ visible: true }).click();
    await f.getByRole('menuitem', { name: 'File…' }).click();
    await wb.answerInput('e2e_big.py').catch(() => undefined);
    await waitForValue('the file chip', async () => ((await f.getByRole('listitem', { name: /^File e2e_big\.py/ }).count()) ? true : undefined), 20_000);
    const chat = f.getByRole('tabpanel').filter({ visible: true }).first();
    await chat.getByRole('textbox', { name: 'Message' }).fill('Summarize this file.');
    const note = await waitForValue('the trimming note before sending', async () => {
      const s = plainSpaces(await f.getByRole('status', { name: 'Prompt size' }).innerText());
      return /Trimmed to fit the model's context \(384 prompt tokens\):.*cut e2e_big\.py to \d+ of 200 lines/.test(s) ? s : undefined;
    }, 20_000);
    console.log(`        ${note}`);
    await wb.screenshot('20-trim-note');
    await f.getByRole('button', { name: 'Remove e2e_big.py from the message' }).click();
    await chat.getByRole('textbox', { name: 'Message' }).fill('');
  }, { needs: [S.context] });

  await t.step(S.edit, async () => {
    const original = 'def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n';
    const file = join(workspace, 'e2e_edit.py');
    writeFileSync(file, original);
    await wb.openFile('e2e_edit.py');
    await wb.selectLines(2, 4);
    await wb.page.keyboard.press('Control+Alt+E');
    await wb.answerInput('use the built-in sum');
    const tab = wb.page.locator('.tabs-container [role="tab"][aria-label*="Strata proposal"]').first();
    await tab.waitFor({ timeout: 90_000 });
    if (!/lines 2-4/.test((await tab.getAttribute('aria-label')) ?? '')) throw new Error(`the diff is titled ${await tab.getAttribute('aria-label')}`);
    // Both sides drawn: the original on the left, the proposal on the right.
    await waitForValue('the diff editor to show both sides', async () => {
      const sides = await wb.page.locator('.editor-group-container.active .monaco-diff-editor .view-lines').allInnerTexts();
      return sides.filter((x) => plainSpaces(x).includes('def total')).length >= 2 ? true : undefined;
    }, 20_000);
    const note = await wb.waitForNotification(/Strata proposes an edit of e2e_edit\.py/, 10_000);
    if (!note.buttons.includes('Accept') || !note.buttons.includes('Reject')) throw new Error(`the proposal's notification offers ${note.buttons.join(', ')}`);
    await wb.screenshot('21-edit-diff');
    await wb.runCommand('Strata: Accept Edit');
    // Accept closes the diff and comes back to the file's own editor.
    await waitForValue('the diff to close', async () => ((await tab.count()) === 0 ? true : undefined), 10_000);
    await wb.page.locator('.tabs-container [role="tab"][aria-selected="true"][aria-label^="e2e_edit.py"]').first().waitFor({ timeout: 10_000 });
    const saved = async (): Promise<string> => {
      await wb.page.keyboard.press('Control+S');
      return readFileSync(file, 'utf8');
    };
    const after = await waitForValue('the accepted edit in the file', async () => {
      const now = await saved();
      return now !== original ? now : undefined;
    }, 20_000);
    if (!after.startsWith('def total(xs):\n') || !after.endsWith('    return s\n')) throw new Error(`the edit changed lines outside the selection: ${JSON.stringify(after)}`);
    await wb.screenshot('22-edit-accepted');
    await wb.page.keyboard.press('Control+Z');
    await waitForValue('the original text after undo', async () => ((await saved()) === original ? true : undefined), 10_000);
    await wb.screenshot('23-edit-undone');
  }, { needs: [STEP.ready], timeoutMs: 150_000 });
}
