// UI steps of Strata: Choose Models against a stand-in Hub (test/helpers/fake-hub.ts) that the
// runner starts before VS Code and names in HF_ENDPOINT: the roles, a role's catalogue, and a
// repository's files with their sizes and fit to this machine, one of them too big with the file
// that would fit named; next edit's catalogue (Zeta), the expected speed on the CPU from what the
// managed server measured, and a pull held half-way so its progress notification shows, then
// served by the restarted server; an `hf:` reference in a model setting, pulled with progress when
// the server starts. Then a role on a second server: chat pointed (in user settings) at a scripted
// OpenAI-compatible server, whose sensible answer shows in the panel.
import { readFileSync } from 'node:fs';
import { FakeHub } from '../helpers/fake-hub.js';
import { ScriptedModelServer } from '../helpers/scripted-model-server.js';
import { waitForAnswerEnd, openTab } from './lib/panel.js';
import { api, strataUrl } from './lib/strata-api.js';
import { plainSpaces, settingsApplied, StopWaiting, waitForValue } from './lib/workbench.js';
import type { UiContext } from './ui.suite.js';

export const E2E_HUB_REPO = 'strata-e2e/coder-GGUF';
/** A repository whose one file is the run's test model: pulled for real, then served. */
export const E2E_PULL_REPO = 'strata-e2e/tiny-GGUF';
const PULL_FILE = 'tiny-Q8_0.gguf';
/** The same model again, named in a model setting as `hf:` (pulled when the server starts). */
const SETTING_REPO = 'strata-e2e/tiny-setting-GGUF';
const SETTING_FILE = 'tiny-setting-Q8_0.gguf';
let hub: FakeHub | undefined;

const GIB = 2 ** 30;
const S = {
  roles: 'Choose Models: the roles (still open when focus moves), then a role\'s catalogue',
  fit: 'Choose Models: a Hub repository\'s files with size and fit, a too-big one naming what would fit',
  speed: 'Choose Models: next edit offers Zeta; on the CPU a file\'s fit shows the speed scaled from what the server measured',
  pull: 'Choose Models: the pull shows its progress in a notification, then the restarted server serves the file',
  hfSetting: 'an hf: model setting: the server\'s start pulls it with progress in a notification, then serves it',
  roleServer: 'a role on a second server: chat answers from another OpenAI-compatible server set in user settings',
};

/**
 * The Hub the extension host is pointed at: small files, a split F16 the listing says is 2 x 400 GiB,
 * and a repository holding the run's test model (`modelPath`) to pull for real.
 */
export async function startModelsHub(modelPath?: string): Promise<FakeHub> {
  hub = await FakeHub.start();
  const file = (path: string, listedSize: number) => ({ path, body: Buffer.alloc(1024), listedSize });
  hub.addRepo(E2E_HUB_REPO, [
    // Small enough to fit a busy machine's free RAM (each needs its size + 512 MiB).
    file('coder-Q2_K.gguf', 0.1 * GIB), file('coder-Q4_K_M.gguf', 0.2 * GIB), file('coder-Q8_0.gguf', 0.4 * GIB),
    file('F16/coder-F16-00001-of-00002.gguf', 400 * GIB), file('F16/coder-F16-00002-of-00002.gguf', 400 * GIB),
  ]);
  if (modelPath) {
    hub.addRepo(E2E_PULL_REPO, [{ path: PULL_FILE, body: readFileSync(modelPath) }]);
    hub.addRepo(SETTING_REPO, [{ path: SETTING_FILE, body: readFileSync(modelPath) }]);
  }
  return hub;
}

async function quickRows(ctx: UiContext, what: string, ready: (rows: string[]) => boolean): Promise<string[]> {
  return waitForValue(what, async () => {
    const rows = (await ctx.wb.page.locator('.quick-input-list').getByRole('option').allInnerTexts()).map(plainSpaces);
    return ready(rows) ? rows : undefined;
  }, 30_000);
}

export async function modelsSteps(ctx: UiContext): Promise<void> {
  const { t, wb } = ctx;
  await t.step(S.roles, async () => {
    // The palette lists the extension's commands once it is active (its status bar item shows).
    await wb.waitForStatusBar(/Strata/, 60_000);
    await wb.runCommand('Strata: Choose Models', 20_000, true);
    const roles = await quickRows(ctx, 'the roles', (r) => r.some((x) => x.startsWith('Inline completion')));
    for (const role of ['Chat and agent', 'Inline completion', 'Codebase search (embeddings)', 'Codebase search (reranker)']) {
      if (!roles.some((r) => r.startsWith(role))) throw new Error(`no role "${role}" in ${JSON.stringify(roles)}`);
    }
    // Focus moving elsewhere (a click in the side bar's view) leaves the pick open. Forced: the
    // view's webview lies over the side bar part (a user's click lands in it the same way).
    await wb.page.locator('#workbench\\.parts\\.sidebar').click({ force: true });
    await waitForValue('focus in the side bar\'s webview', async () => ((await wb.page.evaluate<string>('document.activeElement?.tagName ?? ""')) === 'IFRAME' ? true : undefined), 10_000);
    await wb.pickQuickItem(/^Inline completion/).catch(async (err: Error) => {
      throw (await wb.page.locator('.quick-input-widget').isVisible()) ? err : new Error('Choose Models closed when focus moved to the side bar');
    });
    await quickRows(ctx, 'the completion catalogue', (r) => r.some((x) => x.includes('ggml-org/Qwen2.5-Coder-1.5B-Q8_0-GGUF')));
    await wb.screenshot('choose-models-catalogue');
  });

  await t.step(S.fit, async () => {
    await wb.pickQuickItem(/Another Hub model/);
    // Answer the input box, not the filter of the list it replaces (both are a quick input's text field).
    await wb.page.locator('.quick-input-widget').filter({ hasText: 'ORG/REPO:QUANT' }).waitFor({ state: 'visible', timeout: 20_000 });
    // With a quantisation, as the catalogue's entries carry one: that file is listed first.
    await wb.answerInput(`${E2E_HUB_REPO}:Q8_0`);
    const rows = await quickRows(ctx, 'the repository\'s files with their fit', (r) => r.length === 4 && r.every((x) => /fits|too big/.test(x)));
    await wb.screenshot('choose-models-fit');
    await wb.dismissQuickInput();
    const f16 = rows.find((r) => r.includes('coder-F16-00001-of-00002.gguf'));
    if (!f16 || !/800\.00 GiB, 2 parts/.test(f16) || !/too big: needs about .* would fit/.test(f16)) throw new Error(`the split F16 row does not say it is too big and what fits: ${f16}`);
    if (!rows[0]!.includes('coder-Q8_0.gguf')) throw new Error(`the quantisation asked for (Q8_0) is not first: ${rows[0]}`);
  });

  await t.step(S.speed, async () => {
    // The server measures its decode speed on what it generates: one short answer first.
    await wb.waitForStatusBar(/Strata: ready/, 120_000);
    const url = await strataUrl(wb);
    await api(url, '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, temperature: 0 });
    await wb.runCommand('Strata: Choose Models', 20_000, true);
    await quickRows(ctx, 'the roles', (r) => r.some((x) => x.startsWith('Next-edit suggestions')));
    await wb.pickQuickItem(/^Next-edit suggestions/);
    await quickRows(ctx, 'the next-edit catalogue', (r) => r.some((x) => x.includes('lmstudio-community/zeta-GGUF')));
    await wb.screenshot('choose-models-next-edit-catalogue');
    await wb.pickQuickItem(/Another Hub model/);
    await wb.page.locator('.quick-input-widget').filter({ hasText: 'ORG/REPO:QUANT' }).waitFor({ state: 'visible', timeout: 20_000 });
    await wb.answerInput(E2E_PULL_REPO);
    const rows = await quickRows(ctx, 'the file with its fit and speed', (r) => r.length === 1 && /tok\/s/.test(r[0]!));
    await wb.screenshot('choose-models-speed');
    if (!/fits in RAM on the CPU .*; about [\d.]+ tok\/s \(scaled by size from [\d.]+ tok\/s the server measured with .+\)/.test(rows[0]!)) {
      throw new Error(`the CPU row does not give the expected speed and where it comes from: ${rows[0]}`);
    }
  });

  await t.step(S.pull, async () => {
    const held = hub!.holdNext(1 << 20);
    let toast: Awaited<ReturnType<typeof wb.waitForNotification>>;
    try {
      await wb.pickQuickItem(new RegExp(PULL_FILE.replace('.', '\\.')));
      await held.reached;
      toast = await wb.waitForNotification(/pulling strata-e2e\/tiny-GGUF.*MiB of/, 30_000);
      await wb.screenshot('choose-models-pull-progress');
    } finally {
      // Also on failure: a pull held forever keeps its toast over later steps' buttons.
      held.release();
    }
    if (!toast.buttons.includes('Cancel')) throw new Error(`the pull's notification has no Cancel: ${toast.buttons.join(', ')}`);
    // Set as the next-edit model, the file is loaded by the restarted server beside the main model.
    await waitForValue('the pulled model served', async () => {
      const models = await api<{ data: Array<{ id: string }> }>(await strataUrl(wb), '/v1/models').catch(() => null);
      return models?.data.some((m) => m.id === PULL_FILE.replace(/\.gguf$/, '')) ? true : undefined;
    }, 120_000);
    await wb.waitForStatusBar(/Strata: ready/, 60_000);
  }, { needs: [S.speed], timeoutMs: 240_000 });

  /** Clicks Restart on the "settings changed" toast. */
  const restartAsked = async (): Promise<void> => {
    const ask = await wb.waitForNotification(/Strata server settings changed/, 60_000);
    await ask.item.locator('.notification-list-item-buttons-container .monaco-button').filter({ hasText: 'Restart' }).click();
  };
  const served = async (): Promise<string[]> => {
    const models = await api<{ data: Array<{ id: string }> }>(await strataUrl(wb), '/v1/models').catch(() => null);
    return models?.data.map((m) => m.id) ?? [];
  };
  await t.step(S.hfSetting, async () => {
    await wb.clearNotifications();
    const held = hub!.holdNext(1 << 20);
    try {
      ctx.userSettings({ 'strata.completionModel': `hf:${SETTING_REPO}` });
      await restartAsked();
      await held.reached;
      await wb.waitForNotification(/pulling strata-e2e\/tiny-setting-GGUF \(strata\.completionModel\).*MiB of/, 30_000);
      // The status bar says why the start waits.
      await wb.waitForStatusBar(/Strata server starting \(pulling strata-e2e\/tiny-setting-GGUF\)/, 10_000);
      await wb.screenshot('hf-setting-pull-progress');
    } finally {
      held.release();
    }
    const name = SETTING_FILE.replace(/\.gguf$/, '');
    await waitForValue('the hf: model served', async () => ((await served()).includes(name) ? true : undefined), 120_000);
    // Completions back on the main model for the later areas.
    await wb.clearNotifications();
    ctx.userSettings({ 'strata.completionModel': '' });
    await restartAsked();
    await waitForValue('the hf: model no longer served', async () => {
      const now = await served();
      return now.length && !now.includes(name) ? true : undefined;
    }, 120_000);
    await wb.waitForStatusBar(/Strata: ready/, 60_000);
  }, { timeoutMs: 300_000 });

  const scripted = new ScriptedModelServer({ chat: () => ({ text: 'Answered by the team server.' }) });
  const teamUrl = await scripted.start();
  try {
    await t.step(S.roleServer, async () => {
      // In user settings: a repository's settings cannot move a role (extension-agent-settings.test.ts).
      // Ask only once the chat role has connected there (the status bar's tooltip says where the role runs).
      await settingsApplied(ctx.userSettings, { 'strata.chatServerUrl': teamUrl }, 'the chat role\'s server in the status bar tooltip', async () =>
        (await wb.statusBarTexts()).some((x) => x.includes(`chat, the agent and inline edits: ${teamUrl} (ready, scripted)`)), 45_000);
      const f = await ctx.panel();
      const tab = await openTab(f, 'Chat');
      await tab.getByRole('textbox', { name: 'Message' }).fill('Who answers this?');
      await tab.getByRole('button', { name: 'Send', exact: true }).click();
      const answer = await waitForAnswerEnd(f, 60_000);
      const text = plainSpaces(await answer.innerText());
      await wb.screenshot('role-chat-on-second-server');
      if (!text.includes('Answered by the team server.')) throw new Error(`the chat did not answer from the second server: ${text}`);
      if (scripted.of('/v1/infill').length) throw new Error('an inline completion went to the chat role\'s server');
      const asked = [...new Set(scripted.requests.map((r) => r.path))].sort();
      for (const p of asked) if (!['/health', '/props', '/v1/chat/completions', '/v1/models', '/v1/tokenize'].includes(p)) throw new StopWaiting(`the chat role's server was asked ${p}`);
    }, { timeoutMs: 120_000 });
  } finally {
    // The areas after this one chat with the managed server: wait until the chat role is back on it.
    await settingsApplied(ctx.userSettings, { 'strata.chatServerUrl': '' }, 'the chat role back on the managed server (status bar tooltip)', async () =>
      !(await wb.statusBarTexts()).some((x) => x.includes(teamUrl)), 45_000);
    await scripted.close();
  }
}
