// UI steps of Strata: Choose Models against a stand-in Hub (test/helpers/fake-hub.ts) that the
// runner starts before VS Code and names in HF_ENDPOINT: the roles, a role's catalogue, and a
// repository's files with their sizes and fit to this machine, one of them too big with the file
// that would fit named. Nothing is pulled (the pull itself is covered by test/unit/hub-pull).
import { FakeHub } from '../helpers/fake-hub.js';
import { plainSpaces, waitForValue } from './lib/workbench.js';
import type { UiContext } from './ui.suite.js';

export const E2E_HUB_REPO = 'strata-e2e/coder-GGUF';

const GIB = 2 ** 30;
const S = {
  roles: 'Choose Models: the roles, then a role\'s catalogue',
  fit: 'Choose Models: a Hub repository\'s files with size and fit, a too-big one naming what would fit',
};

/** The Hub the extension host is pointed at: small files, and a split F16 the listing says is 2 x 400 GiB. */
export async function startModelsHub(): Promise<FakeHub> {
  const hub = await FakeHub.start();
  const file = (path: string, listedSize: number) => ({ path, body: Buffer.alloc(1024), listedSize });
  hub.addRepo(E2E_HUB_REPO, [
    // Small enough to fit a busy machine's free RAM (each needs its size + 512 MiB).
    file('coder-Q2_K.gguf', 0.1 * GIB), file('coder-Q4_K_M.gguf', 0.2 * GIB), file('coder-Q8_0.gguf', 0.4 * GIB),
    file('F16/coder-F16-00001-of-00002.gguf', 400 * GIB), file('F16/coder-F16-00002-of-00002.gguf', 400 * GIB),
  ]);
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
    await wb.runCommand('Strata: Choose Models', 20_000, true);
    const roles = await quickRows(ctx, 'the roles', (r) => r.some((x) => x.startsWith('Inline completion')));
    for (const role of ['Chat and agent', 'Inline completion', 'Codebase search (embeddings)', 'Codebase search (reranker)']) {
      if (!roles.some((r) => r.startsWith(role))) throw new Error(`no role "${role}" in ${JSON.stringify(roles)}`);
    }
    await wb.pickQuickItem(/^Inline completion/);
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
}
