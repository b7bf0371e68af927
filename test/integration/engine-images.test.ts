// Images through a projector on the real engine (random-weight tiny model and its generated
// "mlp" projector, greedy): an image's tokens in the prompt, its KV evaluated by libmtmd, reused on
// the next turn without being evaluated again, and the answer a function of the image; files that
// hold more than their declared pixels (decompression bombs) refused before they are decoded.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PreparedImage } from '../../native/lib/addon.js';
import { loadAddon } from '../../backend/addon/loader.js';
import { ensureTestModel, ensureTestModelWithProjector } from '../helpers/models.js';
import { gifBomb, gifImage, jpegScans, pngBomb, pngHeaderOnly, pngImage, testPicture } from '../helpers/images.js';
import { EngineDriver } from './engine-driver.js';

let model = '';
let mmproj = '';
const open: EngineDriver[] = [];

async function engine(opts: { slots?: number; parkBudgetMiB?: number } = {}): Promise<EngineDriver> {
  const d = await EngineDriver.load({ model, mmproj, ctx: 512, threads: 2, slots: 2, freeRamFloorMiB: 0, parkBudgetMiB: 64, ...opts });
  open.push(d);
  return d;
}

/** text, the image, text: the prompt and the request's images. */
async function withImage(eng: EngineDriver, before: string, image: Uint8Array, after: string): Promise<{ prompt: number[]; images: Array<{ at: number; data: Uint8Array }>; prepared: PreparedImage }> {
  const prepared = await eng.engine.prepareImage(image);
  const head = [...eng.engine.tokenize(before, true, false)];
  const prompt = [...head, ...prepared.tokens, ...eng.engine.tokenize(after, false, false)];
  return { prompt, images: [{ at: head.length + prepared.at, data: image }], prepared };
}

beforeAll(async () => {
  ({ model, mmproj } = await ensureTestModelWithProjector());
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

describe('images through a projector', () => {
  it('the generated projector loads with its model and prepares an image into placeholder tokens', async () => {
    const eng = await engine();
    expect(eng.engine.info.mmproj).toBe(mmproj);
    const img = await eng.engine.prepareImage(testPicture(1));
    // 32x32 in 8x8 patches: 16 positions, each a negative placeholder; the mlp kind adds no marker tokens.
    expect(img).toMatchObject({ n: 16, at: 0, width: 48, height: 48 });
    expect([...img.tokens].every((t) => t < 0)).toBe(true);
    expect(new Set(img.tokens).size).toBe(16);
    // The same bytes give the same identity; other bytes another.
    expect(await eng.engine.prepareImage(testPicture(1))).toEqual(img);
    const other = await eng.engine.prepareImage(testPicture(2));
    expect(other.id).not.toBe(img.id);
    expect([...other.tokens].some((t, i) => t === img.tokens[i])).toBe(false);
  });

  it('answers a prompt with an image, counts its positions, and the answer depends on the image', async () => {
    const eng = await engine();
    const a = await withImage(eng, 'Look:', testPicture(1), ' What is it?');
    const first = await eng.run({ prompt: a.prompt, images: a.images, maxTokens: 12, ignoreEos: true });
    expect(first.done.finish).toBe('length');
    expect(first.done.promptTokens).toBe(a.prompt.length);
    expect(first.ids).toHaveLength(12);
    // Read alone again (no reuse): the same answer.
    const again = await eng.run({ prompt: a.prompt, images: a.images, maxTokens: 12, ignoreEos: true, cachePrompt: false });
    expect(again.ids).toEqual(first.ids);
    // Another picture at the same place: another answer (its embedding differs).
    const b = await withImage(eng, 'Look:', testPicture(7), ' What is it?');
    const other = await eng.run({ prompt: b.prompt, images: b.images, maxTokens: 12, ignoreEos: true, cachePrompt: false });
    expect(other.ids).not.toEqual(first.ids);
  });

  it('the next turn reuses the image KV: nothing of the image is evaluated again', async () => {
    const eng = await engine();
    const a = await withImage(eng, 'Look:', testPicture(3), ' What is it?');
    const first = await eng.run({ prompt: a.prompt, images: a.images, maxTokens: 6, ignoreEos: true });
    const computedBefore = eng.engine.snapshot().totals.promptComputed;
    const turn2 = [...a.prompt, ...first.ids, ...eng.tokens(' And the colour?')];
    const second = await eng.run({ prompt: turn2, images: a.images, maxTokens: 6, ignoreEos: true });
    const held = a.prompt.length + first.ids.length - 1;
    expect(second.done.reused).toBe(held);
    expect(eng.engine.snapshot().totals.promptComputed - computedBefore).toBe(turn2.length - held);
    // The same two turns read cold give the same answer (the reused KV is the image's).
    const cold = await eng.run({ prompt: turn2, images: a.images, maxTokens: 6, ignoreEos: true, cachePrompt: false });
    expect(cold.ids).toEqual(second.ids);
  });

  it('a conversation with another image at that place reuses only what precedes the image', async () => {
    const eng = await engine({ slots: 1 });
    const a = await withImage(eng, 'Look at this picture:', testPicture(4), ' What is it?');
    await eng.run({ prompt: a.prompt, images: a.images, maxTokens: 4, ignoreEos: true });
    const b = await withImage(eng, 'Look at this picture:', testPicture(5), ' What is it?');
    const second = await eng.run({ prompt: b.prompt, images: b.images, maxTokens: 4, ignoreEos: true });
    expect(second.done.reused).toBe(b.images[0]!.at);
  });

  it('a parked conversation with an image restores with it: its next turn reads only what it adds', async () => {
    const eng = await engine({ slots: 1 });
    const a = await withImage(eng, 'First picture:', testPicture(8), ' What is it?');
    const first = await eng.run({ prompt: a.prompt, images: a.images, maxTokens: 4, ignoreEos: true });
    // Another conversation takes the one slot: the first is parked.
    const b = await withImage(eng, 'Another one:', testPicture(9), ' And this?');
    await eng.run({ prompt: b.prompt, images: b.images, maxTokens: 4, ignoreEos: true });
    expect(eng.engine.snapshot().park.entries.length).toBeGreaterThan(0);
    const turn2 = [...a.prompt, ...first.ids, ...eng.tokens(' More?')];
    const second = await eng.run({ prompt: turn2, images: a.images, maxTokens: 4, ignoreEos: true });
    expect(second.admitted).toMatchObject({ restored: true, reused: a.prompt.length + first.ids.length - 1 });
    const cold = await eng.run({ prompt: turn2, images: a.images, maxTokens: 4, ignoreEos: true, cachePrompt: false });
    expect(second.ids).toEqual(cold.ids);
  });

  it('refuses what does not fit the prompt: placeholders without an image, an image not at its placeholders, bad bytes, too many pixels', async () => {
    const eng = await engine();
    const a = await withImage(eng, 'Look:', testPicture(1), ' What?');
    expect(() => eng.engine.submit({ id: 99, prompt: a.prompt, maxTokens: 1 })).toThrow(/image placeholder without its image/);
    expect(() => eng.engine.submit({ id: 99, prompt: a.prompt, maxTokens: 1, images: [{ at: a.images[0]!.at + 1, data: testPicture(1) }] }))
      .toThrow(/not this image's placeholder/);
    expect(() => eng.engine.submit({ id: 99, prompt: a.prompt, maxTokens: 1, images: [{ at: a.images[0]!.at, data: testPicture(2) }] }))
      .toThrow(/not this image's placeholder/);
    await expect(eng.engine.prepareImage(new TextEncoder().encode('not an image'))).rejects.toThrow(/could not be read/);
    await expect(eng.engine.prepareImage(pngHeaderOnly(5000, 5000), 4096 * 4096)).rejects.toThrow(/5000x5000 = 25000000 pixels, more than the limit of 16777216/);
  });
});

/** How prepareImage ended for these bytes (whether it throws or rejects), and how long it took. */
async function prepared(eng: EngineDriver, data: Uint8Array): Promise<{ error: string | null; ms: number }> {
  const t0 = performance.now();
  const error = await Promise.resolve().then(() => eng.engine.prepareImage(data, 4096 * 4096)).then(() => null, (e: Error) => e.message);
  return { error, ms: performance.now() - t0 };
}

describe('images that hold more data than their pixels', () => {
  it('refuses at once a 1x1 PNG whose data inflates to 200 MB', async () => {
    const eng = await engine();
    const r = await prepared(eng, await pngBomb(1, 1, 200 << 20));
    expect(r.error).toMatch(/^the PNG image \(1x1\) holds more data than its pixels: its image data inflates past 8 bytes, twice what its rows take$/);
    expect(r.ms).toBeLessThan(1000);
  });

  it('refuses at once a 1x1 GIF whose LZW codes decode to millions of pixels', async () => {
    const eng = await engine();
    const r = await prepared(eng, gifBomb(1, 1, 12));
    expect(r.error).toMatch(/^the GIF image \(1x1\) holds more data than its pixels: its first frame \(1x1\) holds data for more than its 1 pixels$/);
    expect(r.ms).toBeLessThan(1000);
  });

  it('refuses at once a progressive JPEG of 2,000 scans that each read all its 4096x4096 pixels again', async () => {
    const eng = await engine();
    const r = await prepared(eng, jpegScans(4096, 4096, 2000));
    expect(r.error).toBe('the JPEG image (4096x4096) has more than 100 scans');
    expect(r.ms).toBeLessThan(1000);
  });

  it('reads images within their bounds: interlaced PNG, trailing zeros after a PNG\'s rows, GIF, progressive JPEG', async () => {
    const eng = await engine();
    const pixel = (x: number, y: number): [number, number, number] => [(x * 7) & 255, (y * 5) & 255, (x ^ y) & 255];
    const images: Array<[Uint8Array, number, number]> = [
      [pngImage(37, 23, pixel, { interlace: true }), 37, 23],
      [pngImage(1, 1, pixel, { interlace: true }), 1, 1],
      // 40x30 RGB takes 3,630 bytes of rows: 3,000 more are within twice that, 4,000 are not.
      [pngImage(40, 30, pixel, { trailing: 3000 }), 40, 30],
      [gifImage(5, 3), 5, 3],
      [jpegScans(64, 48, 10), 64, 48],
    ];
    for (const [data, width, height] of images) {
      expect(await eng.engine.prepareImage(data, 4096 * 4096)).toMatchObject({ n: 16, width, height });
    }
    expect((await prepared(eng, pngImage(40, 30, pixel, { trailing: 4000 }))).error).toMatch(/inflates past 7260 bytes/);
  });
});

describe('a model without a projector', () => {
  it('reads text only: prepareImage and a request with images are refused', async () => {
    const d = await EngineDriver.load({ model: await ensureTestModel({}), ctx: 256, threads: 2, slots: 1 });
    open.push(d);
    expect(d.engine.info.mmproj).toBeNull();
    expect(() => d.engine.prepareImage(testPicture(1))).toThrow(/without a projector/);
    expect(() => d.engine.submit({ id: 5, prompt: [1, 2, 3], maxTokens: 1, images: [{ at: 0, data: testPicture(1) }] })).toThrow(/without a projector/);
  });

  it('a projector made for another embedding size is refused at load, naming it', async () => {
    await expect(loadAddon().Engine.load({ model: await ensureTestModel({ shape: 'copy' }), mmproj, ctx: 256, slots: 1, onEvents: () => {} }))
      .rejects.toThrow(/mmproj: .*(n_embd|embedding)/);
  });
});
