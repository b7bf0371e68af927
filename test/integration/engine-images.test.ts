// Images through a projector on the real engine (random-weight tiny model and its generated
// "mlp" projector, greedy): an image's tokens in the prompt, its KV evaluated by libmtmd, reused on
// the next turn without being evaluated again, and the answer a function of the image.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PreparedImage } from '../../native/lib/addon.js';
import { loadAddon } from '../../backend/addon/loader.js';
import { ensureTestModel, ensureTestModelWithProjector } from '../helpers/models.js';
import { pngHeaderOnly, testPicture } from '../helpers/images.js';
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
function withImage(eng: EngineDriver, before: string, image: Uint8Array, after: string): { prompt: number[]; images: Array<{ at: number; data: Uint8Array }>; prepared: PreparedImage } {
  const prepared = eng.engine.prepareImage(image);
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
    const img = eng.engine.prepareImage(testPicture(1));
    // 32x32 in 8x8 patches: 16 positions, each a negative placeholder; the mlp kind adds no marker tokens.
    expect(img).toMatchObject({ n: 16, at: 0, width: 48, height: 48 });
    expect([...img.tokens].every((t) => t < 0)).toBe(true);
    expect(new Set(img.tokens).size).toBe(16);
    // The same bytes give the same identity; other bytes another.
    expect(eng.engine.prepareImage(testPicture(1))).toEqual(img);
    const other = eng.engine.prepareImage(testPicture(2));
    expect(other.id).not.toBe(img.id);
    expect([...other.tokens].some((t, i) => t === img.tokens[i])).toBe(false);
  });

  it('answers a prompt with an image, counts its positions, and the answer depends on the image', async () => {
    const eng = await engine();
    const a = withImage(eng, 'Look:', testPicture(1), ' What is it?');
    const first = await eng.run({ prompt: a.prompt, images: a.images, maxTokens: 12, ignoreEos: true });
    expect(first.done.finish).toBe('length');
    expect(first.done.promptTokens).toBe(a.prompt.length);
    expect(first.ids).toHaveLength(12);
    // Read alone again (no reuse): the same answer.
    const again = await eng.run({ prompt: a.prompt, images: a.images, maxTokens: 12, ignoreEos: true, cachePrompt: false });
    expect(again.ids).toEqual(first.ids);
    // Another picture at the same place: another answer (its embedding differs).
    const b = withImage(eng, 'Look:', testPicture(7), ' What is it?');
    const other = await eng.run({ prompt: b.prompt, images: b.images, maxTokens: 12, ignoreEos: true, cachePrompt: false });
    expect(other.ids).not.toEqual(first.ids);
  });

  it('the next turn reuses the image KV: nothing of the image is evaluated again', async () => {
    const eng = await engine();
    const a = withImage(eng, 'Look:', testPicture(3), ' What is it?');
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
    const a = withImage(eng, 'Look at this picture:', testPicture(4), ' What is it?');
    await eng.run({ prompt: a.prompt, images: a.images, maxTokens: 4, ignoreEos: true });
    const b = withImage(eng, 'Look at this picture:', testPicture(5), ' What is it?');
    const second = await eng.run({ prompt: b.prompt, images: b.images, maxTokens: 4, ignoreEos: true });
    expect(second.done.reused).toBe(b.images[0]!.at);
  });

  it('a parked conversation with an image restores with it: its next turn reads only what it adds', async () => {
    const eng = await engine({ slots: 1 });
    const a = withImage(eng, 'First picture:', testPicture(8), ' What is it?');
    const first = await eng.run({ prompt: a.prompt, images: a.images, maxTokens: 4, ignoreEos: true });
    // Another conversation takes the one slot: the first is parked.
    const b = withImage(eng, 'Another one:', testPicture(9), ' And this?');
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
    const a = withImage(eng, 'Look:', testPicture(1), ' What?');
    expect(() => eng.engine.submit({ id: 99, prompt: a.prompt, maxTokens: 1 })).toThrow(/image placeholder without its image/);
    expect(() => eng.engine.submit({ id: 99, prompt: a.prompt, maxTokens: 1, images: [{ at: a.images[0]!.at + 1, data: testPicture(1) }] }))
      .toThrow(/not this image's placeholder/);
    expect(() => eng.engine.submit({ id: 99, prompt: a.prompt, maxTokens: 1, images: [{ at: a.images[0]!.at, data: testPicture(2) }] }))
      .toThrow(/not this image's placeholder/);
    expect(() => eng.engine.prepareImage(new TextEncoder().encode('not an image'))).toThrow(/could not be read/);
    expect(() => eng.engine.prepareImage(pngHeaderOnly(5000, 5000), 4096 * 4096)).toThrow(/5000x5000 = 25000000 pixels, more than the limit of 16777216/);
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
