// `strata serve --spec`: where speculative drafts come from, as the engine options say it, the
// combinations with --draft-model and --spec-ngram that contradict it refused by name, and the
// same settings per model in the config's "models" section.
import { describe, expect, it } from 'vitest';
import { engineConfigFor } from '../../backend/app/app.js';
import { resolveConfig, serveHelp } from '../../backend/app/config.js';
import { modelConfig } from '../../backend/app/model-runtime.js';
import { parseArgs } from '../../backend/args/args.js';

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
    // llama.cpp's n-gram drafters: the kind alone turns n-gram drafts on.
    expect(engine({ 'spec-ngram-kind': 'map-k' }).speculative).toEqual({ ngram: true, ngramKind: 'map-k' });
    expect(engine({ spec: 'ngram', 'spec-ngram-kind': 'cache' }).speculative).toEqual({ ngram: true, ngramKind: 'cache', mtp: 'off' });
    expect(engine({ 'spec-ngram': 'true', 'spec-ngram-kind': 'lookup' }).speculative).toEqual({ ngram: true });
    expect(resolveConfig({ flags: new Map(), env: { STRATA_SPEC: 'none' }, readFile: noFile }).spec).toBe('none');
  });

  it('refuses a bad value and contradicting options, naming the flag', () => {
    expect(() => r({ spec: 'eagle' })).toThrowError(/--spec: must be one of auto, none, mtp, ngram, draft/);
    expect(() => r({ spec: 'draft' })).toThrowError(/--spec draft needs --draft-model/);
    expect(() => r({ spec: 'mtp', 'draft-model': '/d.gguf' })).toThrowError(/--spec mtp takes no --draft-model/);
    expect(() => r({ spec: 'none', 'spec-ngram': 'true' })).toThrowError(/--spec none and --spec-ngram contradict/);
    expect(() => r({ 'spec-ngram-kind': 'ngram-map-k' })).toThrowError(/--spec-ngram-kind: must be one of lookup, simple, map-k, map-k4v, mod, cache/);
    expect(() => r({ spec: 'mtp', 'spec-ngram-kind': 'simple' })).toThrowError(/--spec mtp and --spec-ngram-kind simple contradict/);
  });

  it('is set per model in the config\'s models section; --draft-model is the first model\'s', () => {
    const file = JSON.stringify({
      spec: 'none',
      models: [
        { name: 'coder', path: '/m/coder.gguf', spec: 'draft', 'draft-max': 6 },
        { name: 'glm', path: '/m/glm.gguf', spec: 'mtp', draftPMin: 0.7 },
        { name: 'chat', path: '/m/chat.gguf' },
      ],
    });
    const args = parseArgs(['--config', '/c.json', '--draft-model', '/m/coder-draft.gguf']);
    const cfg = resolveConfig({ flags: args.options, repeated: args.repeated!, env: {}, readFile: () => file });
    const of = (name: string) => {
      const m = cfg.models.find((x) => x.name === name)!;
      return engineConfigFor(modelConfig(cfg, m), m.path, 0).speculative;
    };
    expect(of('coder')).toEqual({ mtp: 'off', draftModel: '/m/coder-draft.gguf', draftMax: 6 });
    expect(of('glm')).toEqual({ mtp: 'on', draftPMin: 0.7 });
    // The server's --spec none, without the first model's draft model.
    expect(of('chat')).toEqual({ mtp: 'off' });
  });

  it('refuses a model\'s contradicting settings, naming the model', () => {
    const cfgOf = (models: unknown[], flags: string[] = []) => {
      const args = parseArgs(['--config', '/c.json', ...flags]);
      return resolveConfig({ flags: args.options, repeated: args.repeated!, env: {}, readFile: () => JSON.stringify({ models }) });
    };
    expect(() => cfgOf([{ name: 'a', path: '/a.gguf', spec: 'draft' }])).toThrowError(/^model 'a': --spec draft needs --draft-model/);
    expect(() => cfgOf([{ name: 'a', path: '/a.gguf', spec: 'none', 'spec-ngram': true }])).toThrowError(/^model 'a': --spec none and --spec-ngram contradict/);
    expect(() => cfgOf([{ name: 'a', path: '/a.gguf', 'draft-min': 5, 'draft-max': 2 }])).toThrowError(/^model 'a': --draft-min 5 is above --draft-max 2/);
    // The first model gets --draft-model: its own --spec mtp contradicts it; the second's does not.
    expect(() => cfgOf([{ name: 'a', path: '/a.gguf', spec: 'mtp' }], ['--draft-model', '/d.gguf'])).toThrowError(/^model 'a': --spec mtp takes no --draft-model/);
    expect(cfgOf([{ name: 'a', path: '/a.gguf' }, { name: 'b', path: '/b.gguf', spec: 'mtp' }], ['--draft-model', '/d.gguf']).models[0]!.settings.draftModel).toBe('/d.gguf');
    expect(() => cfgOf([{ name: 'a', path: '/a.gguf', spec: 'eagle' }])).toThrowError(/models\[0\]\.spec: must be one of auto, none, mtp, ngram, draft/);
  });

  it('is in --help', () => {
    expect(serveHelp()).toMatch(/--spec\b.*auto/);
  });
});
