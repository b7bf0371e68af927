// UI steps of Agent mode, against a scripted model server the steps start
// (test/helpers/scripted-model-server.ts): the tiny test model's answers are noise, and these steps
// need a model that reads a file, proposes an edit and runs a command, so the scripted server
// plays the model's turns (each chosen by what the conversation holds so far). The extension is
// switched to `strata.serverMode: remote` at it through the user's settings, so these steps run
// last. Everything else is real: VS Code, the extension, the agent loop and its tools, the panel,
// the WorkspaceEdit, the terminal.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedModelServer, type ChatTurnScript } from '../helpers/scripted-model-server.js';
import { SUMMARY_PROMPT } from '../../extension/agent/compaction.js';
import { waitForAnswerEnd } from './lib/panel.js';
import { plainSpaces, waitForValue } from './lib/workbench.js';
import type { UiContext } from './ui.suite.js';

const S = {
  connect: 'agent: the extension connects to a scripted model server (remote mode)',
  thinking: 'chat: a reasoning model\'s thinking streams in a collapsed block with its token count and time; the conversation\'s Thinking control (low, off) goes with the request as reasoning_effort',
  read: 'agent: in Agent mode the model reads a file; the step shows the tool, its arguments and a collapsible result',
  diff: 'agent: the edit it proposes shows as a diff with Accept / Reject (and in VS Code\'s diff editor); the file is unchanged',
  accept: 'agent: Accept applies the change (the file holds it)',
  command: 'agent: run_command waits for Run / Skip (nothing ran yet; a bidi control in it shown escaped); Run runs it and the answer ends',
  undo: 'agent: Ctrl+Z in the editor takes the accepted change back in one step',
  rulesTodo: 'agent: AGENTS.md shows as a rules chip with its token count and reaches the system message; the plan (todo tool) is pinned above the message box and updates live',
  restore: 'agent: Restore to here lists the files changed after the step with their diffs and says commands cannot be undone; confirming puts them back on disk and cuts the conversation there',
  meter: 'agent: a task whose results overflow the context compacts older results; the panel shows the context meter and a marker where it compacted',
  compact: 'agent: Compact summarises the conversation; its marker opens to the summary',
};

export const AGENT_FILE = 'e2e_agent.py';
const SRC = 'def greet(name):\n    return "Hello " + name\n\n\nprint(greet("VS Code"))\n';
const EDITED = SRC.replace('"Hello "', '"Hi "');
const MARKER = 'e2e_agent_ran.txt';
/**
 * ~1,000 tokens for the scripted server's tokenizer (4 characters a token): the system message and the tools take
 * ~1,500 more, so the sixth read passes 85% of 8,192 and older results become stubs; Compact then has steps to summarise.
 */
const LONG_FILE = 'e2e_long.txt';
const LONG_READS = 7;
const SLOT_CONTEXT = 8192;
const SUMMARY = '## Task: read e2e_long.txt.\n## Learned: it holds numbered lines.\n## Files changed: none.\n## Left to do: nothing.';

/** Reads of the long file so far (compaction takes results out of the conversation, so they are counted here). */
let longReads = 0;
/** A right-to-left override in a shell comment: shown as it is, it would turn the text after it around. */
const HIDDEN_TAIL = ' # \u202e txt.exe';

/** A question the scripted model thinks about before it answers (the Ask mode's thinking block). */
const THINK_TASK = '(thinking task)';
const THOUGHTS = ['The sky ', 'scatters ', 'short ', 'blue ', 'light ', 'most.'];
const isThinkingTask = (body: Record<string, unknown>): boolean => (body.messages as Array<{ role: string; content: string }>).at(-1)!.content.includes(THINK_TASK);

/** The scripted model: read the file, then edit it, then run a command, then answer. */
function agentTurn(body: Record<string, unknown>): ChatTurnScript {
  const msgs = body.messages as Array<{ role: string; content: string }>;
  const results = msgs.filter((m) => m.role === 'tool').length;
  if (msgs.at(-1)!.content === SUMMARY_PROMPT) return { text: SUMMARY };
  // The long task: read the long file again and again, then answer.
  if (msgs.some((m) => m.role === 'user' && m.content.includes(LONG_FILE))) {
    return longReads++ < LONG_READS ? { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: LONG_FILE }) }] } : { text: `Read ${LONG_FILE} ${LONG_READS} times.` };
  }
  if (results === 0) return { text: 'I will read the file first.', toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: AGENT_FILE }) }] };
  if (results === 1) return { text: 'Now the change.', toolCalls: [{ name: 'edit_file', arguments: JSON.stringify({ path: AGENT_FILE, edits: [{ search: '"Hello "', replace: '"Hi "' }] }) }] };
  if (results === 2) return { text: 'And a check.', toolCalls: [{ name: 'run_command', arguments: JSON.stringify({ command: `echo agent-ran > ${MARKER}${HIDDEN_TAIL}` }) }] };
  return { text: `Done: greet now says "Hi". The last result was: ${msgs.at(-1)!.content.split('\n')[0]}` };
}

// A second task, for checkpoints, rules and the plan: the question names it.
const CP_TASK = 'Rename greet to welcome and add a helper (checkpoint task).';
const CP_FILE = 'e2e_cp.py';
const CP_HELPER = 'e2e_cp_helper.py';
const CP_SRC = 'def greet(name):\n    return "Hello " + name\n';
const CP_1 = CP_SRC.replace('def greet', 'def welcome');
const CP_2 = CP_1.replace('"Hello "', '"Welcome "');
const RULES = '# Agent rules\nKeep functions short and name them with verbs.\n';
const plan = (...states: string[]) => JSON.stringify({ items: ['Rename greet', 'Add a helper', 'Check the result'].map((text, i) => ({ text, state: states[i] })) });

/** The scripted model of the checkpoint task: plan + edit; plan + edit + new file; plan all done; answer. */
function checkpointTurn(body: Record<string, unknown>): ChatTurnScript {
  const results = (body.messages as Array<{ role: string }>).filter((m) => m.role === 'tool').length;
  if (results === 0) return { text: 'Plan first.', toolCalls: [{ name: 'todo', arguments: plan('in_progress', 'pending', 'pending') }, { name: 'edit_file', arguments: JSON.stringify({ path: CP_FILE, edits: [{ search: 'def greet', replace: 'def welcome' }] }) }] };
  if (results === 2) {
    return { text: 'Next.', toolCalls: [
      { name: 'todo', arguments: plan('done', 'in_progress', 'pending') },
      { name: 'edit_file', arguments: JSON.stringify({ path: CP_FILE, edits: [{ search: '"Hello "', replace: '"Welcome "' }] }) },
      { name: 'create_file', arguments: JSON.stringify({ path: CP_HELPER, content: 'def shout(s):\n    return s.upper()\n' }) },
    ] };
  }
  if (results === 5) return { toolCalls: [{ name: 'todo', arguments: plan('done', 'done', 'done') }] };
  return { text: 'Done: welcome and a helper.' };
}
const isCheckpointTask = (body: Record<string, unknown>): boolean => (body.messages as Array<{ role: string; content: string }>).some((m) => m.role === 'user' && m.content.includes('(checkpoint task)'));

export async function agentSteps({ t, wb, workspace, panel, userSettings }: UiContext): Promise<void> {
  const scripted = new ScriptedModelServer({
    chat: (b) => (isThinkingTask(b) ? { reasoning: THOUGHTS, reasoningDelayMs: 150, text: 'Because of Rayleigh scattering.' } : isCheckpointTask(b) ? checkpointTurn(b) : agentTurn(b)),
    slotContext: SLOT_CONTEXT,
  });
  const url = await scripted.start();
  const file = join(workspace, AGENT_FILE);
  const stepEl = async (tool: string) => (await panel()).locator(`.agent-step:has(.step-tool:text-is("${tool}"))`).last();
  try {
    await t.step(S.connect, async () => {
      // Switch only once the managed server is up (as after the other areas): a settings change
      // while it still starts would race its start.
      await wb.waitForStatusBar(/Strata: ready/, 180_000);
      // User settings: a workspace's .vscode/settings.json cannot pick the server.
      userSettings({ 'strata.serverMode': 'remote', 'strata.remoteUrl': url });
      const toast = await wb.waitForNotification(/Strata server settings changed/, 60_000);
      await toast.item.locator('.notification-list-item-buttons-container .monaco-button').filter({ hasText: 'Restart' }).click();
      await wb.waitForStatusBar(/Strata: ready · scripted/, 90_000);
      await wb.clearNotifications();
    }, { timeoutMs: 360_000 });

    await t.step(S.thinking, async () => {
      const frame = await panel();
      await frame.getByRole('tab', { name: 'Chat', exact: true }).click();
      await frame.getByRole('button', { name: 'New chat' }).click();
      await frame.locator('button.mode[data-mode="ask"]').click();
      const control = frame.getByRole('combobox', { name: 'Thinking' });
      await control.selectOption('low');
      const input = frame.getByRole('textbox', { name: 'Message' });
      const ask = async (question: string): Promise<Record<string, unknown>> => {
        const before = scripted.of('/v1/chat/completions').length;
        await input.fill(question);
        await input.press('Enter');
        await waitForAnswerEnd(frame, 30_000);
        const sent = scripted.of('/v1/chat/completions').slice(before);
        if (sent.length !== 1) throw new Error(`expected one chat request, the server read ${sent.length}`);
        return sent[0]!.body;
      };
      const body = await ask(`Why is the sky blue? ${THINK_TASK}`);
      if (body.reasoning_effort !== 'low') throw new Error(`the request's reasoning_effort is ${String(body.reasoning_effort)}, not low`);
      const block = frame.locator('.turn.assistant details.thinking').last();
      const label = plainSpaces(await block.locator('summary').innerText());
      // Six thinking pieces 150 ms apart: the server's count, and the time from the first to the last.
      if (!/^Thought for \d+\.\d s · 6 tokens$/.test(label)) throw new Error(`the thinking block's label is "${label}"`);
      const seconds = Number(/for (\d+\.\d) s/.exec(label)![1]);
      if (seconds < 0.7) throw new Error(`the thinking took at least 0.75 s, the label says ${seconds} s`);
      if ((await block.getAttribute('open')) !== null) throw new Error('the thinking block is open; it should stream collapsed');
      const answer = plainSpaces(await frame.locator('.turn.assistant .content').last().innerText());
      if (answer !== 'Because of Rayleigh scattering.') throw new Error(`the answer shows "${answer}"`);
      await wb.screenshot('59-chat-thinking-collapsed');
      await block.locator('summary').click();
      const thoughts = plainSpaces(await block.locator('.thinking-text').innerText());
      if (thoughts !== plainSpaces(THOUGHTS.join(''))) throw new Error(`the thinking block shows "${thoughts}"`);
      await wb.screenshot('59-chat-thinking-block');
      // Off: the request turns thinking off (reasoning_effort none); back to auto: nothing sent.
      await control.selectOption('off');
      const off = await ask('And at sunset?');
      if (off.reasoning_effort !== 'none') throw new Error(`with Thinking off the request's reasoning_effort is ${String(off.reasoning_effort)}`);
      await control.selectOption('auto');
      const auto = await ask('Thanks.');
      if ('reasoning_effort' in auto) throw new Error(`with Thinking auto the request sent reasoning_effort ${String(auto.reasoning_effort)}`);
    }, { needs: [S.connect], timeoutMs: 90_000 });

    await t.step(S.read, async () => {
      writeFileSync(file, SRC);
      const frame = await panel();
      await frame.getByRole('tab', { name: 'Chat', exact: true }).click();
      await frame.getByRole('button', { name: 'New chat' }).click();
      await frame.locator('button.mode[data-mode="agent"]').click();
      await waitForValue('the Agent toggle pressed', async () => ((await frame.locator('button.mode[data-mode="agent"]').getAttribute('aria-pressed')) === 'true' ? true : undefined), 10_000);
      const input = frame.getByRole('textbox', { name: 'Message' });
      await input.fill('Make greet say Hi instead of Hello, then check it.');
      await input.press('Enter');
      const read = await stepEl('read_file');
      await waitForValue('the read_file step done', async () => ((await read.locator('.step-status').innerText()).trim() === 'done' ? true : undefined), 30_000);
      await read.locator('details.step-result summary').click();
      const result = plainSpaces(await read.locator('details.step-result pre').innerText());
      if (!result.includes('return "Hello " + name')) throw new Error(`the read_file result does not show the file: ${result.slice(0, 200)}`);
      if (!(await read.locator('.step-arg').innerText()).includes(AGENT_FILE)) throw new Error('the step does not name the file it read');
      await wb.screenshot('60-agent-read-file');
    }, { needs: [S.connect], timeoutMs: 90_000 });

    await t.step(S.diff, async () => {
      const edit = await stepEl('edit_file');
      await edit.getByRole('button', { name: `Accept the change to ${AGENT_FILE}` }).waitFor({ timeout: 30_000 });
      const diff = plainSpaces(await edit.locator('pre.agent-diff').innerText());
      if (!diff.includes('-    return "Hello " + name') || !diff.includes('+    return "Hi " + name')) throw new Error(`the diff is not the proposed change: ${diff}`);
      if (readFileSync(file, 'utf8') !== SRC) throw new Error('the file changed before the change was accepted');
      await wb.screenshot('61-agent-edit-proposed');
      await edit.getByRole('button', { name: `Open the change to ${AGENT_FILE} in a diff editor` }).click();
      await wb.page.locator('.tabs-container [role="tab"][aria-label*="Strata agent proposal"]').first().waitFor({ timeout: 20_000 });
      // Both sides drawn: the file as it is, and the proposal.
      await waitForValue('the diff editor showing both sides', async () => {
        const sides = (await wb.page.locator('.editor-group-container.active .monaco-diff-editor .view-lines').allInnerTexts()).map(plainSpaces);
        return sides.some((t) => t.includes('return "Hello " + name')) && sides.some((t) => t.includes('return "Hi " + name')) ? true : undefined;
      }, 20_000);
      await wb.screenshot('62-agent-edit-diff-editor');
    }, { needs: [S.read], timeoutMs: 90_000 });

    await t.step(S.accept, async () => {
      const edit = await stepEl('edit_file');
      await edit.getByRole('button', { name: `Accept the change to ${AGENT_FILE}` }).click();
      await waitForValue('the accepted change in the file on disk', async () => (readFileSync(file, 'utf8') === EDITED ? true : undefined), 20_000);
      await waitForValue('the step marked accepted', async () => ((await edit.locator('.step-status').innerText()).trim() === 'accepted' ? true : undefined), 10_000);
      // The decided change's diff editor closes.
      await waitForValue('the proposal\'s diff editor closed', async () => ((await wb.page.locator('.tabs-container [role="tab"][aria-label*="Strata agent proposal"]').count()) === 0 ? true : undefined), 10_000);
      await wb.screenshot('63-agent-edit-accepted');
    }, { needs: [S.diff], timeoutMs: 60_000 });

    await t.step(S.command, async () => {
      const cmd = await stepEl('run_command');
      await cmd.getByRole('button', { name: 'Run the command' }).waitFor({ timeout: 30_000 });
      const shown = await cmd.locator('pre.step-command').innerText();
      if (!shown.includes(`echo agent-ran > ${MARKER}`)) throw new Error('the command is not shown');
      if (!shown.includes(' # \\u202e txt.exe') || shown.includes('\u202e')) throw new Error(`the bidi control is not shown escaped: ${JSON.stringify(shown)}`);
      if (existsSync(join(workspace, MARKER))) throw new Error('the command ran before Run was pressed');
      await wb.screenshot('64-agent-command-waits');
      await cmd.getByRole('button', { name: 'Run the command' }).click();
      const answer = await waitForAnswerEnd(await panel(), 60_000);
      if (!existsSync(join(workspace, MARKER))) throw new Error('Run did not run the command');
      const text = plainSpaces(await answer.innerText());
      if (!text.includes('Done: greet now says "Hi". The last result was: exit code: 0')) throw new Error(`the answer after the command: ${text.slice(-300)}`);
      await cmd.locator('details.step-result summary').click();
      console.log(`        run_command result: ${plainSpaces(await cmd.locator('details.step-result pre').innerText()).slice(0, 200)}`);
      await wb.screenshot('65-agent-command-ran');
    }, { needs: [S.accept], timeoutMs: 120_000 });

    await t.step(S.undo, async () => {
      // From the Explorer: Quick Open's history also holds the proposal's virtual document of the same name.
      await wb.runCommand('View: Show Explorer');
      // The command's marker file joins the list above the agent's file when the watcher sees it; a row
      // clicked before that lands on the file below (CI opened e2e_big.py), so wait for it first.
      const explorer = wb.page.locator('.explorer-folders-view');
      if (existsSync(join(workspace, MARKER))) await explorer.getByRole('treeitem', { name: MARKER, exact: true }).waitFor({ timeout: 20_000 });
      await explorer.getByRole('treeitem', { name: AGENT_FILE, exact: true }).dblclick();
      await wb.page.locator(`.tabs-container [role="tab"][aria-label^="${AGENT_FILE}"]`).first().waitFor({ timeout: 20_000 });
      await wb.activeEditor().waitFor({ state: 'visible', timeout: 20_000 });
      await waitForValue('the edited text in the editor', async () => ((await wb.editorText()).includes('return "Hi " + name') ? true : undefined), 10_000);
      await wb.activeEditor().locator('.view-lines').click();
      await wb.page.keyboard.press('Control+Z');
      await waitForValue('the original text back after one Ctrl+Z', async () => ((await wb.editorText()).includes('return "Hello " + name') ? true : undefined), 10_000);
      await wb.page.keyboard.press('Control+S');
      await waitForValue('the original text saved', async () => (readFileSync(file, 'utf8') === SRC ? true : undefined), 10_000);
      await wb.screenshot('66-agent-undone');
    }, { needs: [S.accept], timeoutMs: 60_000 });

    await t.step(S.rulesTodo, async () => {
      // The terminal of the command steps above would take half of the pictures.
      if (await wb.page.locator('.part.panel').isVisible()) await wb.runCommand('View: Toggle Panel Visibility');
      writeFileSync(join(workspace, 'AGENTS.md'), RULES);
      writeFileSync(join(workspace, CP_FILE), CP_SRC);
      const frame = await panel();
      await frame.getByRole('tab', { name: 'Chat', exact: true }).click();
      await frame.getByRole('button', { name: 'New chat' }).click();
      await frame.locator('button.mode[data-mode="agent"]').click();
      const input = frame.getByRole('textbox', { name: 'Message' });
      await input.fill(CP_TASK);
      await input.press('Enter');
      const first = frame.locator('.agent-step[data-step="s1-1"]');
      await first.getByRole('button', { name: `Accept the change to ${CP_FILE}` }).waitFor({ timeout: 30_000 });
      // The plan, pinned above the message box while the agent runs.
      const todo = frame.getByRole('region', { name: 'Agent plan' });
      await todo.waitFor({ timeout: 10_000 });
      const states = async (): Promise<string> => {
        const items = todo.locator('li.todo-item');
        const out: Array<string | null> = [];
        for (let i = 0; i < (await items.count()); i++) out.push(await items.nth(i).getAttribute('data-state'));
        return out.join(',');
      };
      if (await states() !== 'in_progress,pending,pending') throw new Error(`the plan's states: ${await states()}`);
      // The rules chip with its token count, and the rules in the system message the model got.
      const chip = frame.getByRole('list', { name: 'Rules the agent follows' }).getByRole('listitem').first();
      const chipText = plainSpaces(await chip.innerText());
      if (!/AGENTS\.md\s*\d+ tok/.test(chipText)) throw new Error(`the rules chip: ${chipText}`);
      const system = (scripted.of('/v1/chat/completions').at(-1)!.body.messages as Array<{ role: string; content: string }>)[0]!;
      if (system.role !== 'system' || !system.content.includes('Keep functions short and name them with verbs.')) throw new Error(`AGENTS.md is not in the system message: ${system.content.slice(-300)}`);
      console.log(`        rules chip: ${chipText.replace(/\s+/g, ' ')}`);
      await wb.screenshot('67-agent-rules-chip-and-plan');
      await first.getByRole('button', { name: `Accept the change to ${CP_FILE}` }).click();
      // Each waiting change offers Accept all; one press accepts both.
      const acceptAll = frame.getByRole('button', { name: 'Accept all proposed changes' }).first();
      await acceptAll.waitFor({ timeout: 30_000 });
      await waitForValue('the plan updated live', async () => ((await states()) === 'done,in_progress,pending' ? true : undefined), 10_000);
      await wb.screenshot('68-agent-plan-updated');
      await acceptAll.click();
      await waitForAnswerEnd(frame, 60_000);
      if (readFileSync(join(workspace, CP_FILE), 'utf8') !== CP_2 || !existsSync(join(workspace, CP_HELPER))) throw new Error('the accepted changes are not on disk');
    }, { needs: [S.connect], timeoutMs: 120_000 });

    await t.step(S.restore, async () => {
      const frame = await panel();
      const first = frame.locator('.agent-step[data-step="s1-1"]');
      await first.getByRole('button', { name: /^Restore to here/ }).click();
      const dialog = frame.getByRole('dialog', { name: 'Restore to here' });
      await dialog.waitFor({ timeout: 20_000 });
      const files = (await dialog.getByRole('list', { name: 'Files to restore' }).locator('.restore-path').allInnerTexts()).map((x) => x.trim());
      if ([...files].sort().join(',') !== [CP_FILE, CP_HELPER].sort().join(',')) throw new Error(`the files to restore: ${files.join(',')}`);
      const text = plainSpaces(await dialog.innerText());
      if (!text.includes('cannot be undone')) throw new Error(`the dialog does not say commands cannot be undone: ${text}`);
      const row = dialog.locator(`li:has(.restore-path:text-is("${CP_FILE}"))`);
      await row.locator('details.restore-diff summary').click();
      const diff = plainSpaces(await row.locator('pre.agent-diff').innerText());
      if (!diff.includes('-    return "Welcome " + name') || !diff.includes('+    return "Hello " + name')) throw new Error(`the restore diff: ${diff}`);
      // Nothing changed before the confirmation.
      if (readFileSync(join(workspace, CP_FILE), 'utf8') !== CP_2 || !existsSync(join(workspace, CP_HELPER))) throw new Error('the files changed before Restore was confirmed');
      await wb.screenshot('69-agent-restore-before');
      await dialog.getByRole('button', { name: 'Confirm Restore to here' }).click();
      await waitForValue('the file back as it was after the first edit', async () => (readFileSync(join(workspace, CP_FILE), 'utf8') === CP_1 ? true : undefined), 20_000);
      await waitForValue('the created file deleted', async () => (!existsSync(join(workspace, CP_HELPER)) ? true : undefined), 20_000);
      // The conversation is cut at the step: the later steps are gone, a note says what happened.
      await waitForValue('the later steps gone', async () => ((await frame.locator('.agent-step[data-step="s2-1"]').count()) === 0 ? true : undefined), 10_000);
      const note = plainSpaces(await frame.locator('.turn.assistant .note').last().innerText());
      if (!note.includes('put back') || !note.includes(CP_FILE) || !note.includes(CP_HELPER)) throw new Error(`the restore note: ${note}`);
      console.log(`        ${CP_FILE} on disk after the restore: ${JSON.stringify(readFileSync(join(workspace, CP_FILE), 'utf8'))}`);
      await wb.screenshot('70-agent-restore-after');
    }, { needs: [S.rulesTodo], timeoutMs: 60_000 });

    await t.step(S.meter, async () => {
      writeFileSync(join(workspace, LONG_FILE), Array.from({ length: 160 }, (_, i) => `line ${String(i + 1).padStart(3, '0')}: the long file for the context budget`).join('\n').slice(0, 4000));
      const frame = await panel();
      await frame.getByRole('tab', { name: 'Chat', exact: true }).click();
      await frame.getByRole('button', { name: 'New chat' }).click();
      await frame.locator('button.mode[data-mode="agent"]').click();
      const input = frame.getByRole('textbox', { name: 'Message' });
      await input.fill(`Read ${LONG_FILE} ${LONG_READS} times.`);
      await input.press('Enter');
      const answer = await waitForAnswerEnd(frame, 60_000);
      const text = plainSpaces(await answer.innerText());
      if (!text.includes(`Read ${LONG_FILE} ${LONG_READS} times.`)) throw new Error(`the long task did not finish: ${text.slice(-300)}`);
      const marker = answer.locator('details.agent-compaction').first();
      const label = plainSpaces(await marker.locator('summary').innerText());
      if (!/Context compacted: \d+ tool results? elided/.test(label)) throw new Error(`the compaction marker says: ${label}`);
      const meter = plainSpaces(await frame.locator('.agent-context span').first().innerText());
      const m = /^Context ([\d,]+) \/ 8,192 tokens$/.exec(meter);
      if (!m || Number(m[1]!.replace(/,/g, '')) >= SLOT_CONTEXT) throw new Error(`the context meter says: ${meter}`);
      // Every request the loop sent fitted the context (the scripted server refuses one that does not).
      const chats = scripted.of('/v1/chat/completions').filter((r) => JSON.stringify(r.body.messages).includes(LONG_FILE));
      if (chats.length < LONG_READS + 1) throw new Error(`the long task sent ${chats.length} requests`);
      await marker.locator('summary').click();
      // The terminal the command step opened would hide the message box with the meter.
      if (await wb.page.locator('.part.panel').first().isVisible()) await wb.runCommand('View: Toggle Panel Visibility');
      await wb.screenshot('71-agent-context-meter-and-marker');
    }, { needs: [S.connect], timeoutMs: 120_000 });

    await t.step(S.compact, async () => {
      const frame = await panel();
      await frame.locator('.agent-context').getByRole('button', { name: 'Compact' }).click();
      const summary = frame.locator('details.agent-compaction').filter({ hasText: 'the conversation summarised' }).last();
      await summary.waitFor({ timeout: 30_000 });
      await summary.locator('summary').click();
      const body = plainSpaces(await summary.locator('.compaction-summary').innerText());
      if (!body.includes('## Task: read e2e_long.txt.')) throw new Error(`the marker does not open to the summary: ${body.slice(0, 200)}`);
      const meter = plainSpaces(await frame.locator('.agent-context span').first().innerText());
      await wb.screenshot('72-agent-compaction-summary');
      console.log(`        after Compact: ${meter}`);
    }, { needs: [S.meter], timeoutMs: 60_000 });
  } finally {
    await scripted.close();
  }
}
