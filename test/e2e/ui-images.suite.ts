// UI steps of images in the chat (the server runs the test model with its generated projector,
// strata.chatModelProjector): an image pasted into the message box shows as a chip with its size
// and tokens, goes with the question, and the sent message keeps its chip.
import { openTab, waitForAnswerEnd } from './lib/panel.js';
import { StopWaiting, waitForValue } from './lib/workbench.js';
import { testPicture } from '../helpers/images.js';
import type { UiContext } from './ui.suite.js';

const S = {
  paste: 'an image pasted into the message box shows as a chip with its size and tokens',
  sent: 'the image goes with the question: the sent message shows its chip, and the model answers',
};

export async function imageSteps({ t, wb, panel }: UiContext): Promise<void> {
  await t.step(S.paste, async () => {
    const f = await panel();
    const tab = await openTab(f, 'Chat');
    const box = tab.getByRole('textbox', { name: 'Message' });
    await box.click();
    // A real paste event with the PNG as a file on its clipboard data (what a screenshot paste is).
    const b64 = testPicture(5, 48).toString('base64');
    await f.evaluate<void>(`(() => {
      const el = [...document.querySelectorAll('textarea[aria-label="Message"]')].find((e) => e.offsetParent !== null);
      const bytes = Uint8Array.from(atob('${b64}'), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'screenshot.png', { type: 'image/png' }));
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    })()`);
    const chip = tab.getByRole('listitem').filter({ hasText: 'screenshot.png' });
    const label = await waitForValue('the image chip to show its tokens', async () => {
      const notice = await f.getByRole('alert').allInnerTexts().catch(() => []);
      if (notice.some((n) => /image was not attached/i.test(n))) throw new StopWaiting(`the image was refused: ${notice.join(' / ')}`);
      const l = await chip.getAttribute('aria-label').catch(() => null);
      return l && /tokens/.test(l) ? l : undefined;
    }, 30_000);
    if (!/^Image screenshot\.png, \d+ KB, 1[6-8] tokens$/.test(label)) throw new Error(`the chip says '${label}', not the image's size and its 16 positions (and a joining newline)`);
    await wb.screenshot('15-chat-image-chip');
  });

  await t.step(S.sent, async () => {
    const f = await panel();
    const tab = await openTab(f, 'Chat');
    await tab.getByRole('textbox', { name: 'Message' }).fill('What is in this picture?');
    await tab.getByRole('button', { name: 'Send', exact: true }).click();
    const log = f.getByRole('log', { name: 'Conversation' });
    const sent = log.getByRole('list', { name: 'Images sent' }).last();
    await waitForValue('the sent message to show its image', async () => ((await sent.count()) > 0 ? true : undefined), 10_000);
    // The random model rarely stops by itself: once the answer streams, stop it.
    const stop = f.getByRole('button', { name: 'Stop', exact: true });
    await waitForValue('the answer to start', async () => {
      const err = await log.getByRole('alert').allInnerTexts();
      if (err.length) throw new StopWaiting(`the chat answered with an error: ${err.join(' / ')}`);
      const text = await log.locator('.turn.assistant .content').last().innerText().catch(() => '');
      return text.replace('thinking…', '').trim() || !(await stop.isVisible()) ? true : undefined;
    }, 90_000);
    if (await stop.isVisible()) await stop.click().catch(() => undefined);
    await waitForAnswerEnd(f, 30_000);
    const chipText = await sent.getByRole('listitem').first().getAttribute('aria-label');
    if (!chipText || !/screenshot\.png/.test(chipText)) throw new Error(`the sent message's image chip says '${chipText}'`);
    // The draft's chips left with the question.
    if (await tab.locator('.ctx-row .image-chip').count()) throw new Error('the image chip stayed in the message box after sending');
    await wb.screenshot('16-chat-image-sent');
  }, { needs: [S.paste] });
}
