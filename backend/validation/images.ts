// Images in requests: a data URL (OpenAI's image_url, the Responses API's input_image) or base64
// data with its media type (Anthropic's image blocks) becomes the image file's bytes, checked
// here: a remote URL is refused (the server fetches nothing), the base64 must be well formed, the
// file a PNG, JPEG, GIF or BMP within MAX_IMAGE_BYTES. The pixel limit is checked when the engine
// reads the image's header (MAX_IMAGE_PIXELS), before it decodes it.
import type { ImagePart } from '../chat/chat-types.js';
import { MAX_IMAGE_BYTES, MAX_IMAGES_PER_REQUEST } from './limits.js';
import { fail } from './validate.js';

/** What the engine decodes, by magic bytes (stb_image's formats less those it cannot read safely). */
const FORMATS: Array<{ name: string; magic: number[] }> = [
  { name: 'png', magic: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { name: 'jpeg', magic: [0xff, 0xd8, 0xff] },
  { name: 'gif', magic: [0x47, 0x49, 0x46, 0x38] },
  { name: 'bmp', magic: [0x42, 0x4d] },
];

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The image format of `bytes` (png, jpeg, gif, bmp), or null. */
export function imageFormat(bytes: Uint8Array): string | null {
  return FORMATS.find((f) => f.magic.length <= bytes.length && f.magic.every((b, i) => bytes[i] === b))?.name ?? null;
}

/** Base64 (standard alphabet, padding optional) to bytes, or a 400 naming `path`. */
export function decodeBase64Image(text: string, path: string): Uint8Array {
  const clean = text.replace(/\s+/g, '');
  if (clean.length === 0) fail(path, 'holds no image data');
  if (!BASE64.test(clean) || clean.length % 4 === 1) fail(path, 'is not valid base64');
  // Checked before decoding: base64 is 4/3 of the bytes.
  if (Math.floor(clean.length * 3 / 4) > MAX_IMAGE_BYTES + 2) {
    fail(path, `the image is larger than the limit of ${MAX_IMAGE_BYTES} bytes`, 'image_too_large');
  }
  const bytes = new Uint8Array(Buffer.from(clean, 'base64'));
  if (bytes.length > MAX_IMAGE_BYTES) fail(path, `the image is ${bytes.length} bytes, more than the limit of ${MAX_IMAGE_BYTES}`, 'image_too_large');
  if (imageFormat(bytes) === null) fail(path, 'is not a PNG, JPEG, GIF or BMP image (WebP and other formats are not read)', 'invalid_image');
  return bytes;
}

/**
 * A data URL's image: data:image/<type>;base64,<data>. Any other URL (http, https, file) is refused
 * by name: the server never fetches anything a request points at.
 */
export function imageFromUrl(url: string, path: string): ImagePart {
  if (!url.startsWith('data:')) {
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1];
    fail(path, `${scheme ? `${scheme} URLs are` : 'a URL that is not a data URL is'} not fetched: the server fetches nothing a request points at; send the image inline as a data URL (data:image/png;base64,...)`, 'remote_image_not_supported');
  }
  const m = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!m) fail(path, 'is not a well-formed data URL (data:image/png;base64,...)', 'invalid_image');
  const mediaType = m[1]!.trim().toLowerCase();
  if (mediaType !== '' && !mediaType.startsWith('image/')) fail(path, `is a data URL of ${mediaType}, not of an image`, 'invalid_image');
  if (!m[2]!.split(';').includes('base64')) fail(path, 'must be a base64 data URL (data:image/png;base64,...)', 'invalid_image');
  return { type: 'image', data: decodeBase64Image(m[3]!, path) };
}

/** Counts a request's images as its parts are parsed; the one past MAX_IMAGES_PER_REQUEST is refused by its path. */
export class ImageCounter {
  private n = 0;
  add(path: string): void {
    if (++this.n > MAX_IMAGES_PER_REQUEST) fail(path, `more than ${MAX_IMAGES_PER_REQUEST} images in one request`, 'too_many_images');
  }
}
