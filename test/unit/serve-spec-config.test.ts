// `strata serve --spec`: where speculative drafts come from, as the engine options say it, and
// the combinations with --draft-model and --spec-ngram that contradict it refused by name.
import { describe, expect, it } from 'vitest';
import { engineConfigFor } from '../../backend/app/app.js';
import { resolveConfig, serveHelp } from '../../backend/app/config.js';

const noFile = () => { throw new Error('no file'); };
const r = (o: Record<string, string>) => resolveConfig({ flags: new Map(Object.entries(o)), env: {}, readFile: noFile });
const engine = (o: Record<string, string>) => engineConfigFor(r(o), '/m.gguf', 0, []);

describe('strata serve --spec', () => {
  it('auto by default: the engine decides (the model\'s MTP head when it has one), n-grams and a draft model as given', () => {
    expect(r({}).spec).toBe('auto');
    expect(engine({}).speculative).toBeUndefined();
    expect(engine({ 'spec-ngram': 'true' }).speculative).toEqual({ ngram: true });
    expect(engine({ 'draft-model': '/d.gguf' }).speculative).toEqual({ draftModel: '/d.gguf' });
    // The limits reach the engine alone too: they shape the MTP head's drafts.
    expect(engine({ 'draft-max': '3', 'draft-p-min': '0' }).speculative).toEqual({ draftMax: 3, draftPMin: 0 });
  });

  it('mtp, none, ngram and draft name the source, turning the MTP head on or off', () => {
    expect(engine({ spec: 'mtp' }).speculative).toEqual({ mtp: 'on' });
    expect(engine({ spec: 'mtp', 'draft-max': '3' }).speculative).toEqual({ mtp: 'on', draftMax: 3 });
    expect(engine({ spec: 'none' }).speculative).toEqual({ mtp: 'off' });
    expect(engine({ spec: 'ngram' }).speculative).toEqual({ ngram: true, mtp: 'off' });
    expect(engine({ spec: 'draft', 'draft-model': '/d.gguf' }).speculative).toEqual({ mtp: 'off', draftModel: '/d.gguf' });
    expect(resolveConfig({ flags: new Map(), env: { STRATA_SPEC: 'none' }, readFile: noFile }).spec).toBe('none');
  });

  it('refuses a bad value and contradicting options, naming the flag', () => {
    expect(() => r({ spec: 'eagle' })).toThrowError(/--spec: must be one of auto, none, mtp, ngram, draft/);
    expect(() => r({ spec: 'draft' })).toThrowError(/--spec draft needs --draft-model/);
    expect(() => r({ spec: 'mtp', 'draft-model': '/d.gguf' })).toThrowError(/--spec mtp takes no --draft-model/);
    expect(() => r({ spec: 'none', 'spec-ngram': 'true' })).toThrowError(/--spec none and --spec-ngram contradict/);
  });

  it('is in --help', () => {
    expect(serveHelp()).toMatch(/--spec\b.*auto/);
  });
});
