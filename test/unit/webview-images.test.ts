// Images in the panel's chat: attached to the draft (checked: type and size), counted by the
// extension, sent with the question as image parts, kept with the conversation, and the chat
// client's wire form (image_url parts after the text).
import { describe, expect, it } from 'vitest';
import { addImage, conversation, estimateRequest, initialState, reduce, regenerate, removeImage, sendChat, type ViewState } from '../../webview/state.js';
import type { ImageAttachment } from '../../contract/chat.js';
import { toWireMessage } from '../../extension/client/client.js';

const img = (id: string, bytes = 2048): ImageAttachment => ({ id, name: `${id}.png`, dataUrl: 'data:image/png;base64,iVBORw0KGgo=', bytes, tokens: null });

describe('images in the draft', () => {
  it('attaches a PNG and asks the extension to count it; the count shows on the chip', () => {
    const r = addImage(initialState(undefined), img('a'), 'image/png');
    expect(r.out).toEqual({ type: 'imageCount', id: 'a', dataUrl: img('a').dataUrl });
    const s = reduce(r.state, { type: 'imageCounted', id: 'a', tokens: 576, error: null });
    expect(s.draftImages).toEqual([{ ...img('a'), tokens: 576 }]);
    expect(removeImage(s, 'a').draftImages).toEqual([]);
  });

  it('refuses what the server would: other types and files over 10 MiB, saying why', () => {
    const webp = addImage(initialState(undefined), img('w'), 'image/webp');
    expect(webp.out).toBeNull();
    expect(webp.state.notice).toEqual({ level: 'error', text: 'w.png: image/webp is not an image the model reads (PNG, JPEG, GIF or BMP)' });
    const big = addImage(initialState(undefined), img('b', 10 * 1024 * 1024 + 1), 'image/png');
    expect(big.out).toBeNull();
    expect(big.state.notice?.text).toBe('b.png is 10.0 MiB; images up to 10 MiB are sent');
  });

  it('an image the server refuses (a model without a projector) leaves the draft with the reason', () => {
    const s = reduce(addImage(initialState(undefined), img('a'), 'image/png').state, { type: 'imageCounted', id: 'a', tokens: null, error: "the model 'm' reads text only" });
    expect(s.draftImages).toEqual([]);
    expect(s.notice).toEqual({ level: 'error', text: "The image was not attached: the model 'm' reads text only" });
  });
});

describe('sending images', () => {
  it('goes with the question, alone too, stays in the conversation and in a regenerate', () => {
    let s: ViewState = { ...addImage(initialState(undefined), img('a'), 'image/png').state, chatName: 'pics' };
    s = reduce(s, { type: 'imageCounted', id: 'a', tokens: 16, error: null });
    expect(estimateRequest(s, 1)).toMatchObject({ messages: [{ role: 'user', content: '', images: [{ id: 'a', tokens: 16 }] }] });
    const sent = sendChat(s, 'c1');
    expect(sent.out).toEqual({ type: 'chatSend', chatId: 'c1', name: 'pics', messages: [{ role: 'user', content: '', images: [{ ...img('a'), tokens: 16 }] }] });
    expect(sent.state.draftImages).toEqual([]);
    expect(sent.state.turns[0]).toMatchObject({ role: 'user', images: [{ id: 'a' }] });
    let done = reduce(sent.state, { type: 'chatDelta', chatId: 'c1', text: 'A cat.' });
    done = reduce(done, { type: 'chatEnd', chatId: 'c1', end: { usage: null, timings: null, error: null, cancelled: false } });
    expect(conversation(done.turns)).toEqual([{ role: 'user', content: '', images: [{ ...img('a'), tokens: 16 }] }, { role: 'assistant', content: 'A cat.' }]);
    const again = regenerate(done, 'c2');
    expect(again.out && again.out.type === 'chatSend' && again.out.messages[0]).toEqual({ role: 'user', content: '', images: [{ ...img('a'), tokens: 16 }] });
  });

  it('the chat client sends them as image_url parts after the text', () => {
    expect(toWireMessage({ role: 'user', content: 'What is this?', images: [img('a')] })).toEqual({
      role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: img('a').dataUrl } }],
    });
    expect(toWireMessage({ role: 'user', content: '', images: [img('a')] })).toEqual({ role: 'user', content: [{ type: 'image_url', image_url: { url: img('a').dataUrl } }] });
    expect(toWireMessage({ role: 'user', content: 'plain' })).toEqual({ role: 'user', content: 'plain' });
  });
});

describe('the extension checks what the webview sends', () => {
  it('takes an image count and images in messages, refuses other data URLs', async () => {
    const { validateFromWebview } = await import('../../contract/panel.js');
    expect(validateFromWebview({ type: 'imageCount', id: 'a', dataUrl: img('a').dataUrl }).ok).toBe(true);
    expect(validateFromWebview({ type: 'imageCount', id: 'a', dataUrl: 'https://example.com/a.png' })).toEqual({ ok: false, reason: 'imageCount needs an id and a base64 PNG, JPEG, GIF or BMP data URL of at most 10 MiB' });
    expect(validateFromWebview({ type: 'imageCount', id: 'a', dataUrl: 'data:image/svg+xml;base64,PHN2Zz4=' }).ok).toBe(false);
    const send = (images: unknown) => validateFromWebview({ type: 'chatSend', chatId: 'c', name: 'n', messages: [{ role: 'user', content: 'q', images }] });
    expect(send([img('a')]).ok).toBe(true);
    expect(send([{ ...img('a'), dataUrl: 'file:///etc/passwd' }]).ok).toBe(false);
    expect(send(Array.from({ length: 17 }, (_, i) => img(String(i)))).ok).toBe(false);
  });
});
