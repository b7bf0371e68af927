// The image limits and forms of backend/validation/images.ts, each with the input that breaks it:
// bytes over MAX_IMAGE_BYTES, more than MAX_IMAGES_PER_REQUEST images, remote and malformed URLs,
// files that are no image the engine reads. (The pixel limit is the engine's: server-images.test.ts.)
import { describe, expect, it } from 'vitest';
import { parseChatRequest } from '../../backend/validation/schemas.js';
import { parseMessagesRequest } from '../../backend/validation/anthropic-schema.js';
import { decodeBase64Image, imageFormat, imageFromUrl } from '../../backend/validation/images.js';
import { MAX_IMAGE_BYTES, MAX_IMAGES_PER_REQUEST } from '../../backend/validation/limits.js';
import { ApiError } from '../../backend/validation/errors.js';
import { pngDataUrl, testPicture } from '../helpers/images.js';

function refusal(f: () => unknown): string {
  try { f(); } catch (e) {
    if (e instanceof ApiError) return `${e.status} ${e.message} [${e.param ?? ''}] ${e.code}`;
    throw e;
  }
  return 'accepted';
}

const PNG = testPicture(1, 8);

describe('image data', () => {
  it('reads a PNG data URL into its bytes', () => {
    const part = imageFromUrl(pngDataUrl(PNG), 'u');
    expect(part.type).toBe('image');
    expect(Buffer.from(part.data).equals(PNG)).toBe(true);
    expect(imageFormat(part.data)).toBe('png');
  });

  it('knows PNG, JPEG, GIF and BMP by their bytes, nothing else', () => {
    expect(imageFormat(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('jpeg');
    expect(imageFormat(Buffer.from('GIF89a'))).toBe('gif');
    expect(imageFormat(Buffer.from('BM....'))).toBe('bmp');
    expect(imageFormat(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBeNull();
    expect(refusal(() => decodeBase64Image(Buffer.from('RIFF\0\0\0\0WEBPVP8 ').toString('base64'), 'p')))
      .toBe('400 p: is not a PNG, JPEG, GIF or BMP image (WebP and other formats are not read) [p] invalid_image');
  });

  it('refuses an image one byte over MAX_IMAGE_BYTES, and takes one at the limit', () => {
    const at = Buffer.alloc(MAX_IMAGE_BYTES);
    PNG.copy(at);
    expect(decodeBase64Image(at.toString('base64'), 'p').length).toBe(MAX_IMAGE_BYTES);
    const over = Buffer.alloc(MAX_IMAGE_BYTES + 1);
    PNG.copy(over);
    expect(refusal(() => decodeBase64Image(over.toString('base64'), 'p'))).toMatch(/^400 p: the image is 10485761 bytes, more than the limit of 10485760 \[p\] image_too_large$/);
    // Far over: refused from the base64's length, before decoding.
    expect(refusal(() => decodeBase64Image('A'.repeat(4 * MAX_IMAGE_BYTES), 'p'))).toMatch(/larger than the limit of 10485760 bytes/);
  });

  it('refuses remote URLs by scheme without touching them', () => {
    expect(refusal(() => imageFromUrl('http://127.0.0.1:1/x.png', 'u'))).toMatch(/^400 u: http URLs are not fetched/);
    expect(refusal(() => imageFromUrl('file:///etc/passwd', 'u'))).toMatch(/^400 u: file URLs are not fetched.*remote_image_not_supported$/);
  });
});

describe('images per request', () => {
  const part = { type: 'image_url', image_url: { url: pngDataUrl(PNG) } };

  it(`takes ${MAX_IMAGES_PER_REQUEST} images over several messages and refuses one more, naming it`, () => {
    const half = Array.from({ length: MAX_IMAGES_PER_REQUEST / 2 }, () => part);
    const ok = parseChatRequest({ messages: [{ role: 'user', content: half }, { role: 'user', content: half }] });
    expect(ok.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((p) => p.type === 'image')).toHaveLength(MAX_IMAGES_PER_REQUEST);
    expect(refusal(() => parseChatRequest({ messages: [{ role: 'user', content: half }, { role: 'user', content: [...half, part] }] })))
      .toBe(`400 messages[1].content[${MAX_IMAGES_PER_REQUEST / 2}]: more than ${MAX_IMAGES_PER_REQUEST} images in one request [messages[1].content[${MAX_IMAGES_PER_REQUEST / 2}]] too_many_images`);
  });

  it('counts Anthropic image blocks the same way', () => {
    const block = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } };
    const blocks = Array.from({ length: MAX_IMAGES_PER_REQUEST + 1 }, () => block);
    expect(refusal(() => parseMessagesRequest({ max_tokens: 1, messages: [{ role: 'user', content: blocks }] })))
      .toMatch(new RegExp(`^400 messages\\[0\\]\\.content\\[${MAX_IMAGES_PER_REQUEST}\\]: more than ${MAX_IMAGES_PER_REQUEST} images`));
  });
});

describe('Anthropic image blocks', () => {
  const msg = (source: unknown, role = 'user') => ({ max_tokens: 1, messages: [{ role, content: [{ type: 'text', text: 'see' }, { type: 'image', source }] }] });

  it('become an image part after the text', () => {
    const r = parseMessagesRequest(msg({ type: 'base64', media_type: 'image/png', data: PNG.toString('base64') }));
    expect(r.messages[0]!.content).toEqual([{ type: 'text', text: 'see' }, { type: 'image', data: new Uint8Array(PNG) }]);
  });

  it('refuse url sources, non-image media types, bad base64 and other roles', () => {
    expect(refusal(() => parseMessagesRequest(msg({ type: 'url', url: 'https://x/y.png' }))))
      .toMatch(/^400 messages\[0\]\.content\[1\]\.source\.type: url image sources are not fetched/);
    expect(refusal(() => parseMessagesRequest(msg({ type: 'base64', media_type: 'text/plain', data: 'aGk=' }))))
      .toMatch(/^400 messages\[0\]\.content\[1\]\.source\.media_type: must be an image type/);
    expect(refusal(() => parseMessagesRequest(msg({ type: 'base64', media_type: 'image/png', data: '%%%' }))))
      .toBe('400 messages[0].content[1].source.data: is not valid base64 [messages[0].content[1].source.data] invalid_value');
    expect(refusal(() => parseMessagesRequest(msg({ type: 'base64', media_type: 'image/png', data: PNG.toString('base64') }, 'assistant'))))
      .toMatch(/^400 messages\[0\]\.content\[1\]\.type: image blocks belong to user messages/);
  });
});
