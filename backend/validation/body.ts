// Request body -> parsed JSON, with the status a client can act on: 415 wrong content type,
// 413 too large, 400 not UTF-8 or not JSON.
import { apiError } from './errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** True for application/json and application/*+json; a missing header counts as JSON (curl, simple clients). */
function isJsonType(contentType: string | undefined): { ok: true } | { ok: false; reason: string } {
  if (contentType === undefined || contentType.trim() === '') return { ok: true };
  const [mediaType = '', ...params] = contentType.split(';').map((s) => s.trim());
  const type = mediaType.toLowerCase();
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    return { ok: false, reason: `Content-Type must be application/json, got ${mediaType || '(empty)'}` };
  }
  for (const p of params) {
    const [name = '', value = ''] = p.split('=').map((s) => s.trim());
    const charset = value.replace(/^"|"$/g, '').toLowerCase();
    if (name.toLowerCase() === 'charset' && charset !== 'utf-8' && charset !== 'utf8') {
      return { ok: false, reason: `Content-Type charset must be utf-8, got ${value}` };
    }
  }
  return { ok: true };
}

/**
 * Parses a JSON request body. The caller should also stop reading a body once it passes
 * limitBytes (this checks the bytes it is given).
 */
export function parseJsonBody(raw: Buffer, contentType: string | undefined, limitBytes: number): unknown {
  const type = isJsonType(contentType);
  if (!type.ok) throw apiError('unsupported_media_type', type.reason);
  if (raw.length > limitBytes) {
    throw apiError('request_too_large', `request body is ${raw.length} bytes; the limit is ${limitBytes} bytes`);
  }
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw apiError('invalid_json', 'malformed JSON: the body is not valid UTF-8');
  }
  if (text.trim() === '') throw apiError('invalid_json', 'malformed JSON: the body is empty');
  try {
    return JSON.parse(text);
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    throw apiError('invalid_json', `malformed JSON: ${detail}`);
  }
}
