// Images through the HTTP routes on the real engine (tiny random-weight model with its generated
// projector): OpenAI image_url parts through the official client, Anthropic image blocks, the
// Responses API's input_image; image tokens counted in usage and count_tokens; the conversation's
// KV reused on turn 2; remote URLs, malformed data URLs, unreadable images and a model without a
// projector refused with 400s naming the field or the model; decompression bombs refused at once,
// with the engine host's peak memory unchanged and a text chat beside them answered. The model
// answers noise: the tests check statuses, token counts and reuse, never what the answer says.
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { ensureTestModel, ensureTestModelWithProjector } from '../helpers/models.js';
import { gifBomb, pngBomb, pngDataUrl, pngHeaderOnly, testPicture } from '../helpers/images.js';
import { json, startServer, type Running } from './server-helpers.js';

let srv: Running;
let textOnly: Running;

beforeAll(async () => {
  const { model, mmproj } = await ensureTestModelWithProjector();
  srv = await startServer(model, { mmproj, slots: 2 });
  textOnly = await startServer(await ensureTestModel({}), { slots: 1 });
}, 180_000);
afterAll(async () => {
  await srv?.close();
  await textOnly?.close();
});

const IMAGE_TOKENS = 16;  // the generated projector: 32x32 images in 8x8 patches

function userWithImage(text: string, url: string): OpenAI.Chat.ChatCompletionMessageParam {
  return { role: 'user', content: [{ type: 'text', text }, { type: 'image_url', image_url: { url } }] };
}

describe('OpenAI chat: image_url parts', () => {
  it('answers a question about an image; its tokens are in usage; turn 2 reuses the KV', async () => {
    const url = pngDataUrl(testPicture(11));
    const textTokens = (await srv.openai.chat.completions.create({
      model: 'm', messages: [{ role: 'user', content: 'What is in this picture?' }], max_tokens: 1,
    })).usage!.prompt_tokens;
    const first = await srv.openai.chat.completions.create({
      model: 'm', messages: [userWithImage('What is in this picture?', url)], max_tokens: 8, temperature: 0,
    });
    expect(first.choices[0]!.message.content).toEqual(expect.any(String));
    // The image's positions, and the newline the parts are joined with.
    expect(first.usage!.prompt_tokens).toBeGreaterThanOrEqual(textTokens + IMAGE_TOKENS);
    expect(first.usage!.prompt_tokens).toBeLessThanOrEqual(textTokens + IMAGE_TOKENS + 2);

    const second = await srv.openai.chat.completions.create({
      model: 'm', temperature: 0, max_tokens: 4,
      messages: [userWithImage('What is in this picture?', url), first.choices[0]!.message, { role: 'user', content: 'And its colours?' }],
    });
    // The first turn's prompt, the image included, comes from the KV.
    expect(second.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(first.usage!.prompt_tokens - 1);
  });

  it('streams, and the same request answers the same', async () => {
    const messages = [userWithImage('Describe it.', pngDataUrl(testPicture(12)))];
    const whole = await srv.openai.chat.completions.create({ model: 'm', messages, max_tokens: 6, temperature: 0 });
    let streamed = '';
    for await (const c of await srv.openai.chat.completions.create({ model: 'm', messages, max_tokens: 6, temperature: 0, stream: true })) {
      streamed += c.choices[0]?.delta.content ?? '';
    }
    expect(streamed).toBe(whole.choices[0]!.message.content);
  });

  it('refuses a remote URL without fetching it, naming the field', async () => {
    const r = await json(srv.port, 'POST', '/v1/chat/completions', {
      messages: [userWithImage('see', 'https://example.invalid/cat.png')], max_tokens: 1,
    });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('messages[0].content[1].image_url.url');
    expect(r.body.error.message).toMatch(/https URLs are not fetched/);
  });

  it.each([
    ['not a data URL at all', 'data:image/png;base64', /well-formed data URL/],
    ['not base64', 'data:image/png;base64,@@@@', /not valid base64/],
    ['base64 of no image', `data:image/png;base64,${Buffer.from('hello world, no picture').toString('base64')}`, /not a PNG, JPEG, GIF or BMP/],
    ['a data URL of text', 'data:text/plain;base64,aGVsbG8=', /not of an image/],
    ['not base64-encoded', 'data:image/png,rawbytes', /must be a base64 data URL/],
  ])('refuses a malformed data URL (%s) with 400 naming the field', async (_what, url, message) => {
    const r = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [userWithImage('see', url)], max_tokens: 1 });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('messages[0].content[1].image_url.url');
    expect(r.body.error.message).toMatch(message);
  });

  it('refuses a PNG whose pixels are over the limit before decoding it', async () => {
    const r = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [userWithImage('see', pngDataUrl(pngHeaderOnly(4097, 4096)))], max_tokens: 1 });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/4097x4096 = 16781312 pixels, more than the limit of 16777216/);
  });

  it('refuses image parts outside user messages', async () => {
    const r = await json(srv.port, 'POST', '/v1/chat/completions', {
      messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: pngDataUrl(testPicture(1)) } }] }, { role: 'user', content: 'hi' }], max_tokens: 1,
    });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('messages[0].content[0].type');
  });

  it('a model without a projector refuses an image with 400 naming the model', async () => {
    const r = await json(textOnly.port, 'POST', '/v1/chat/completions', { messages: [userWithImage('see', pngDataUrl(testPicture(1)))], max_tokens: 1 });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('images_not_supported');
    expect(r.body.error.message).toMatch(/model '.+' reads text only/);
  });
});

/** A POST: `sent` resolves once its body is written, `answer` with the status and JSON body. */
function post(port: number, path: string, body: unknown): { sent: Promise<void>; answer: Promise<{ status: number; body: any }> } {
  let sent!: () => void;
  const written = new Promise<void>((resolve) => { sent = resolve; });
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body), sent);
  });
  return { sent: written, answer };
}

/** A process's /proc/PID/status field in KiB (VmHWM: its peak resident memory). */
function statusKiB(pid: number, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

describe('images that hold more data than their pixels', () => {
  it('three 1x1 PNGs inflating to 200 MB each: a 400 at once, the engine host\'s peak memory unchanged, a text chat beside them answered', async () => {
    const bombs = await Promise.all([1, 2, 3].map((k) => pngBomb(1, 1, (200 << 20) + k)));  // three files: none is read from the cache
    const pid = (await json(srv.port, 'GET', '/metrics')).body.engines[0].pid as number;
    const linux = process.platform === 'linux';
    // The peak resident memory starts again from what the process holds now.
    if (linux) writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const held = linux ? statusKiB(pid, 'VmHWM') : 0;
    const image = post(srv.port, '/v1/chat/completions', {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, ...bombs.map((b) => ({ type: 'image_url', image_url: { url: pngDataUrl(b) } }))] }],
      max_tokens: 1,
    });
    await image.sent;
    const text = await srv.openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 4 });
    expect(text.choices[0]!.message.content).toEqual(expect.any(String));
    const r = await image.answer;
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_image');
    expect(r.body.error.message).toBe('an image could not be read: the PNG image (1x1) holds more data than its pixels: its image data inflates past 8 bytes, twice what its rows take');
    // Inflating one of them whole took 256 MiB (its buffer doubles).
    if (linux) expect(statusKiB(pid, 'VmHWM') - held).toBeLessThan(32 * 1024);
  });

  it('a 1x1 GIF whose codes decode to millions of pixels is a 400 naming the GIF', async () => {
    const url = `data:image/gif;base64,${gifBomb(1, 1, 12).toString('base64')}`;
    const r = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [userWithImage('see', url)], max_tokens: 1 });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_image');
    expect(r.body.error.message).toMatch(/the GIF image \(1x1\) holds more data than its pixels: its first frame \(1x1\) holds data for more than its 1 pixels/);
  });
});

describe('Anthropic Messages: image blocks', () => {
  const block = (png: Uint8Array) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: Buffer.from(png).toString('base64') } });

  it('answers, counts the image in input_tokens and count_tokens, and reads turn 2 from the KV', async () => {
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, block(testPicture(21))] }];
    const counted = await json(srv.port, 'POST', '/v1/messages/count_tokens', { model: 'm', messages });
    const plain = await json(srv.port, 'POST', '/v1/messages/count_tokens', { model: 'm', messages: [{ role: 'user', content: 'What is this?' }] });
    expect(counted.status).toBe(200);
    expect(counted.body.input_tokens).toBeGreaterThanOrEqual(plain.body.input_tokens + IMAGE_TOKENS);
    const first = await json(srv.port, 'POST', '/v1/messages', { model: 'm', max_tokens: 6, temperature: 0, messages });
    expect(first.status).toBe(200);
    expect(first.body.usage.input_tokens + first.body.usage.cache_read_input_tokens).toBe(counted.body.input_tokens);
    const text = first.body.content.map((b: { text?: string }) => b.text ?? '').join('');
    const second = await json(srv.port, 'POST', '/v1/messages', {
      model: 'm', max_tokens: 4, temperature: 0,
      messages: [...messages, { role: 'assistant', content: text }, { role: 'user', content: 'And then?' }],
    });
    expect(second.status).toBe(200);
    expect(second.body.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(counted.body.input_tokens - 1);
  });

  it('refuses a url source with 400 in Anthropic shape', async () => {
    const r = await json(srv.port, 'POST', '/v1/messages', {
      model: 'm', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.invalid/a.png' } }] }],
    });
    expect(r.status).toBe(400);
    expect(r.body.type).toBe('error');
    expect(r.body.error.message).toMatch(/messages\[0\]\.content\[0\]\.source\.type: url image sources are not fetched/);
  });
});

describe('Responses API: input_image', () => {
  it('answers, counts the image in input_tokens, and a previous_response_id turn reads the image from the KV', async () => {
    const input = [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: 'What is this?' }, { type: 'input_image' as const, image_url: pngDataUrl(testPicture(31)), detail: 'auto' as const }] }];
    const counted = await json(srv.port, 'POST', '/v1/responses/input_tokens', { model: 'm', input });
    const plain = await json(srv.port, 'POST', '/v1/responses/input_tokens', { model: 'm', input: 'What is this?' });
    expect(counted.body.input_tokens).toBeGreaterThanOrEqual(plain.body.input_tokens + IMAGE_TOKENS);
    const first = await srv.openai.responses.create({ model: 'm', input, max_output_tokens: 16, temperature: 0 });
    // Noise from a random-weight model: it may run to max_output_tokens.
    expect(first.error).toBeNull();
    expect(first.output.length).toBeGreaterThan(0);
    expect(first.usage!.input_tokens).toBe(counted.body.input_tokens);
    const next = await srv.openai.responses.create({ model: 'm', previous_response_id: first.id, input: 'And its colours?', max_output_tokens: 16, temperature: 0 });
    expect(next.usage!.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(counted.body.input_tokens - 1);
  });

  it('counts the images of previous_response_id against the cap: a chain reads no more than one request may send', async () => {
    const images = (n: number, seed: number) => Array.from({ length: n }, (_, i) => ({ type: 'input_image' as const, image_url: pngDataUrl(testPicture(seed + i)), detail: 'auto' as const }));
    const first = await srv.openai.responses.create({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Ten.' }, ...images(10, 40)] }], max_output_tokens: 2 });
    const e = await srv.openai.responses.create({
      model: 'm', previous_response_id: first.id, input: [{ role: 'user', content: [{ type: 'input_text', text: 'Seven more.' }, ...images(7, 60)] }], max_output_tokens: 2,
    }).catch((x: unknown) => x);
    expect(e).toMatchObject({ status: 400, code: 'too_many_images', param: 'input' });
    expect(String((e as Error).message)).toContain('17 images (10 of them from previous_response_id)');
    const next = await srv.openai.responses.create({ model: 'm', previous_response_id: first.id, input: 'And without images?', max_output_tokens: 2 });
    expect(next.status).not.toBe('failed');
    expect(next.usage?.input_tokens).toBeGreaterThan(10 * IMAGE_TOKENS);
  });

  it('refuses a remote image_url, naming the field', async () => {
    const e = await srv.openai.responses.create({
      model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.invalid/a.png', detail: 'auto' }] }],
    }).catch((x: unknown) => x);
    expect(e).toMatchObject({ status: 400, param: 'input[0].content[0].image_url' });
  });
});

describe('the extension client', () => {
  it('counts an image the way the panel shows it on its chip', async () => {
    const { StrataClient } = await import('../../extension/client/client.js');
    const client = new StrataClient({ baseUrl: srv.url });
    const n = await client.imageTokens(pngDataUrl(testPicture(41)));
    // The image's positions and the newline that joins it to the text.
    expect(n).toBeGreaterThanOrEqual(IMAGE_TOKENS);
    expect(n).toBeLessThanOrEqual(IMAGE_TOKENS + 2);
    const text = new StrataClient({ baseUrl: textOnly.url });
    await expect(text.imageTokens(pngDataUrl(testPicture(41)))).rejects.toThrow(/reads text only/);
  });
});
