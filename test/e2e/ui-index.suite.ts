// UI steps of the codebase index: a file added to the workspace is indexed with progress in the
// status bar and the Index tab (files, chunks, vectors, store size, model); a search in the Index
// tab shows hits with their full-text, vector, fused and rerank scores; a chat question that says
// @codebase goes with the index's chunks, shown as context chips and in what was sent. The run
// serves a generated embedding model and reranker beside the chat model (random weights: the
// scores are real numbers from real models, their order means nothing; full-text hits do).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openTab, waitForAnswerEnd } from './lib/panel.js';
import { plainSpaces, waitForValue } from './lib/workbench.js';
import { STEP, type UiContext } from './ui.suite.js';

const S = {
  build: 'codebase index: a new file is indexed with progress shown (status bar, Index tab)',
  search: 'codebase index: the Index tab search shows hits with full-text, vector and rerank scores',
  ask: 'codebase index: an @codebase question goes with the chunks, shown as context',
};

/** Enough distinct functions that embedding them takes some seconds on the tiny models. */
function fixture(): string {
  const parts = ['"""Geometry helpers for the e2e codebase index."""', '', 'import math', ''];
  parts.push('def compute_circle_area(radius):', '    """Area of a circle of the given radius."""', '    return math.pi * radius * radius', '');
  for (let i = 0; i < 100; i++) {
    parts.push(`def helper_${i}(value):`, `    """Helper number ${i}: scales the value by ${i + 2} and adds an offset."""`, `    offset = ${i} * 3 + len(str(value))`, `    return value * ${i + 2} + offset`, '');
  }
  return parts.join('\n');
}

export async function indexSteps({ t, wb, workspace, panel }: UiContext): Promise<void> {
  await t.step(S.build, async () => {
    writeFileSync(join(workspace, 'e2e_geometry.py'), fixture());
    const status = await wb.waitForStatusBar(/Index \d+\/\d+ chunks|Index \d+\/\d+ files|Index scanning/, 60_000);
    await wb.screenshot('40-index-progress-status-bar');
    const f = await panel();
    const tab = await openTab(f, 'Index');
    const progress = plainSpaces(await tab.getByRole('status', { name: 'Index progress' }).innerText());
    await wb.screenshot('41-index-tab-progress');
    const facts = await waitForValue('the index to be up to date with vectors', async () => {
      const line = plainSpaces(await tab.getByRole('status', { name: 'Index progress' }).innerText());
      const cells = await tab.getByRole('table', { name: 'Index' }).locator('tbody td').allInnerTexts();
      const chunks = Number(cells[1]?.replace(/\D/g, ''));
      return line === 'Up to date' && chunks >= 15 && Number(cells[2]?.replace(/\D/g, '')) === chunks ? cells : undefined;
    }, 240_000);
    if (!facts[4] || /none/.test(facts[4])) throw new Error(`the Index tab names no embedding model: ${facts.join(' | ')}`);
    console.log(`        status bar "${status}"; tab "${progress}"; then ${facts.join(' | ')}`);
    await wb.screenshot('42-index-tab-built');
  }, { needs: [STEP.ready, STEP.panel], timeoutMs: 300_000 });

  await t.step(S.search, async () => {
    const f = await panel();
    const tab = await openTab(f, 'Index');
    await tab.locator('input[aria-label="Search the codebase"]').fill('compute_circle_area radius');
    await tab.getByRole('button', { name: 'Search', exact: true }).click();
    const first = await waitForValue('search hits', async () => {
      const hits = tab.getByRole('list', { name: 'Search results' }).getByRole('listitem');
      return (await hits.count()) > 0 ? plainSpaces(await hits.first().innerText()) : undefined;
    }, 60_000);
    const said = plainSpaces(await tab.locator('p[role="status"]').filter({ hasText: 'hits for' }).innerText());
    if (!/fullText \+ vector \+ rerank/.test(said)) throw new Error(`the search ran ${JSON.stringify(said)}, want full text, vector and rerank`);
    const hitsText = plainSpaces(await tab.getByRole('list', { name: 'Search results' }).innerText());
    // The reranker's random weights order the hits (the top 10 of 29 chunks), so which chunk is
    // shown is not checked here; full-text retrieval itself is unit-tested and measured (recall@10).
    if (!/\.py:\d+-\d+/.test(hitsText)) throw new Error(`no hit names its file and lines: ${hitsText.slice(0, 300)}`);
    if (!/rerank -?\d/.test(first) || !/full text|vector/.test(first)) throw new Error(`the first hit's scores: ${first.slice(0, 200)}`);
    console.log(`        ${said}; first: ${first.slice(0, 160)}`);
    await wb.screenshot('43-index-search-scores');
  }, { needs: [S.build] });

  await t.step(S.ask, async () => {
    const f = await panel();
    const chat = await openTab(f, 'Chat');
    const fresh = chat.getByRole('button', { name: 'New chat' });
    await fresh.click().catch(() => undefined);
    await chat.getByRole('textbox', { name: 'Message' }).fill('@codebase where is compute_circle_area defined?');
    await chat.getByRole('button', { name: 'Send', exact: true }).click();
    const question = f.getByRole('log', { name: 'Conversation' }).locator('.turn.user').last();
    const chips = question.getByRole('list', { name: 'Context sent' }).getByRole('listitem');
    await chips.first().waitFor({ timeout: 60_000 });
    const labels: string[] = [];
    for (let i = 0; i < await chips.count(); i++) labels.push((await chips.nth(i).getAttribute('aria-label')) ?? '');
    if (!labels.length || !labels.every((l) => /^From the codebase index: .+, \d+ tokens$/.test(l))) throw new Error(`the chips say ${JSON.stringify(labels)}`);
    await question.locator('details.sent summary').click();
    const sent = plainSpaces(await waitForValue('the request as sent', async () => {
      const x = await question.locator('pre.sent-text').innerText().catch(() => '');
      return x.includes('From the codebase') ? x : undefined;
    }, 20_000));
    // The chunks as sent: each names its lines, and its text is those lines of the file (the
    // reranker's random weights decide which chunks come first, so not which function they hold).
    const parts = [...sent.matchAll(/From the codebase (\S+\.py) \(lines (\d+)-(\d+)\)[^\n]*\n```py\n/g)];
    if (!parts.length) throw new Error(`the request carries no chunk of the workspace: ${JSON.stringify(sent.slice(0, 400))}`);
    for (const m of parts) {
      const lines = readFileSync(join(workspace, m[1]!), 'utf8').split('\n');
      const from = Number(m[2]);
      const head = lines.slice(from - 1, from + 1).join('\n');
      if (!sent.slice(m.index! + m[0].length).startsWith(head)) {
        throw new Error(`the chunk sent as ${m[1]} lines ${m[2]}-${m[3]} does not start with those lines (${JSON.stringify(head)}): ${JSON.stringify(sent.slice(m.index!, m.index! + 300))}`);
      }
    }
    console.log(`        ${labels.length} chunks: ${labels.slice(0, 3).join('; ')}`);
    await wb.screenshot('44-codebase-question-context');
    const stop = f.getByRole('button', { name: 'Stop', exact: true });
    if (await stop.isVisible()) await stop.click().catch(() => undefined);
    await waitForAnswerEnd(f, 30_000);
  }, { needs: [S.build] });
}
