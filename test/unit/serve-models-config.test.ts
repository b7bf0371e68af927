// Which models `strata serve` serves: repeated --model (with NAME=FILE aliases), --models-dir,
// the config file's per-model section, --preload, and the refusals that name the fault.
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../backend/args/args.js';
import { engineConfigFor } from '../../backend/app/app.js';
import { resolveConfig, type ConfigSources } from '../../backend/app/config.js';
import { modelConfig } from '../../backend/app/model-runtime.js';

const noFile = () => { throw new Error('no file'); };

function fromArgv(argv: string[], extra: Partial<ConfigSources> = {}) {
  const args = parseArgs(argv);
  return resolveConfig({ flags: args.options, repeated: args.repeated!, env: {}, readFile: noFile, ...extra });
}

describe('serving several models', () => {
  it('takes every --model, in order, under its base name or its alias; the first is the default', () => {
    const cfg = fromArgv(['--model', '/m/qwen-coder.gguf', '--model', 'chat=/m/Llama 3.gguf', '--model=emb=/m/bge.GGUF']);
    expect(cfg.models.map((m) => [m.name, m.path])).toEqual([
      ['qwen-coder', '/m/qwen-coder.gguf'], ['chat', '/m/Llama 3.gguf'], ['emb', '/m/bge.GGUF'],
    ]);
    expect(cfg.model).toBe('/m/qwen-coder.gguf');
  });

  it('a single --model is served as before (one spec, no settings of its own)', () => {
    const cfg = fromArgv(['--model', '/m/a.gguf', '--slots', '3']);
    expect(cfg.models).toEqual([{ name: 'a', path: '/m/a.gguf', role: null, settings: {} }]);
    expect(engineConfigFor(modelConfig(cfg, cfg.models[0]!), cfg.models[0]!.path, 0).slots).toBe(3);
  });

  it('takes hf:ORG/REPO:QUANT as a Hub model named REPO:QUANT (pulled at start), and refuses a malformed one', () => {
    const cfg = fromArgv(['--model', 'hf:Qwen/Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M', '--model', 'fim=hf:org/coder/sub/c.gguf']);
    expect(cfg.models.map((m) => [m.name, m.path])).toEqual([
      ['Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M', 'hf:Qwen/Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M'], ['fim', 'hf:org/coder/sub/c.gguf'],
    ]);
    expect(() => fromArgv(['--model', 'hf:org/../x'])).toThrowError(/^--model hf:org\/\.\.\/x: 'hf:org\/\.\.\/x' is not ORG\/REPO\[:QUANT\] or ORG\/REPO\/FILE\.gguf/);
    const file = JSON.stringify({ models: [{ name: 'x', path: 'hf:org/r/notes.txt' }] });
    expect(() => fromArgv(['--config', '/c.json'], { readFile: () => file })).toThrowError(/config file \/c\.json: models\[0\]\.path: .*'notes\.txt' is not a \.gguf file/);
  });

  it('adds every .gguf of --models-dir (sorted, skipping one given by --model)', () => {
    const cfg = fromArgv(['--model', '/d/b.gguf', '--models-dir', '/d'], { listDir: () => ['c.gguf', 'notes.txt', 'b.gguf', 'a.gguf'] });
    expect(cfg.models.map((m) => m.name)).toEqual(['b', 'a', 'c']);
    expect(() => fromArgv(['--models-dir', '/e'], { listDir: () => ['x.bin'] })).toThrowError(/--models-dir \/e holds no .gguf file/);
  });

  it('the config section sets roles and per-model settings over the server\'s, and adds models', () => {
    const file = JSON.stringify({
      slots: 4, ctx: 2048,
      models: [
        { name: 'coder', role: 'completion', ctx: 8192, 'kv-type': 'q8_0' },
        { name: 'chat', path: '/m/chat.gguf', role: 'chat', slots: 2, devices: 'CUDA0,CUDA1', replicas: 2, gpuLayers: -1 },
      ],
    });
    const cfg = fromArgv(['--config', '/c.json', '--model', 'coder=/m/qwen.gguf'], { readFile: () => file });
    expect(cfg.models).toEqual([
      { name: 'coder', path: '/m/qwen.gguf', role: 'completion', settings: { ctx: 8192, kvType: 'q8_0' } },
      { name: 'chat', path: '/m/chat.gguf', role: 'chat', settings: { slots: 2, replicas: 2, gpuLayers: -1, deviceGroups: [['CUDA0'], ['CUDA1']] } },
    ]);
    const coder = engineConfigFor(modelConfig(cfg, cfg.models[0]!), '/m/qwen.gguf', 0);
    expect(coder).toMatchObject({ ctx: 8192, slots: 4, kvType: 'q8_0' });
    const chat = modelConfig(cfg, cfg.models[1]!);
    expect(chat.replicas).toBe(2);
    expect(engineConfigFor(chat, '/m/chat.gguf', 1)).toMatchObject({ ctx: 2048, slots: 2, devices: ['CUDA1'], gpuLayers: -1 });
  });

  it('refuses what it cannot serve, naming the model or setting', () => {
    expect(() => fromArgv(['--model', '/a/x.gguf', '--model', '/b/x.gguf'])).toThrowError(/two models are named 'x'.*alias/);
    const bad = (models: unknown) => () => fromArgv(['--config', '/c.json', '--model', '/m/a.gguf'], { readFile: () => JSON.stringify({ models }) });
    expect(bad({ a: {} })).toThrowError(/"models" must be an array/);
    expect(bad([{ name: 'a', sloths: 2 }])).toThrowError(/models\[0\]: unknown setting 'sloths'/);
    expect(bad([{ name: 'a', role: 'poet' }])).toThrowError(/models\[0\].role: must be one of completion, chat, embedding/);
    expect(bad([{ name: 'nope' }])).toThrowError(/models\[0\]: no "path", and no --model or --models-dir model is named 'nope'/);
    expect(bad([{ name: 'a', ctx: 3 }])).toThrowError(/models\[0\].ctx: must be in/);
    expect(() => fromArgv(['--model', '/m/a.gguf', '--preload', 'b'])).toThrowError(/--preload: no model is named 'b' \(served: a\)/);
    expect(() => fromArgv(['--model', 'bad name=/m/a.gguf'])).not.toThrow(); // not an alias: a file name with '='
  });

  it('reads the load settings', () => {
    const cfg = fromArgv(['--model', '/m/a.gguf', '--model', '/m/b.gguf', '--preload', 'all', '--models-max', '1', '--models-ram-mib', '2048', '--model-idle-s', '600']);
    expect(cfg).toMatchObject({ preload: ['all'], modelsMax: 1, modelsRamMib: 2048, modelIdleS: 600 });
    expect(fromArgv([]).models).toEqual([]);
  });

  it('pins models by --pin or a config entry\'s "pin": true, and refuses a pin naming no served model', () => {
    const file = JSON.stringify({ models: [{ name: 'chat', path: '/m/chat.gguf', pin: true }, { name: 'b', pin: false }] });
    const cfg = fromArgv(['--config', '/c.json', '--model', 'coder=/m/qwen.gguf', '--model', '/m/b.gguf', '--pin', 'coder'], { readFile: () => file });
    expect(cfg.models.map((m) => [m.name, m.pinned === true])).toEqual([['coder', true], ['b', false], ['chat', true]]);
    expect(() => fromArgv(['--model', '/m/a.gguf', '--pin', 'zz'])).toThrowError(/--pin: no model is named 'zz' \(served: a\)/);
    const bad = () => fromArgv(['--config', '/c.json', '--model', '/m/a.gguf'], { readFile: () => JSON.stringify({ models: [{ name: 'a', pin: 'yes' }] }) });
    expect(bad).toThrowError(/models\[0\].pin: expected true or false/);
  });

  it('fits to memory by default where a model goes to a GPU (auto), with the margin and least context asked; off passes nothing', () => {
    const auto = fromArgv(['--model', '/m/a.gguf']);
    expect(auto).toMatchObject({ fit: 'auto', fitMarginMib: 1024, fitCtx: 4096 });
    expect(engineConfigFor(auto, '/m/a.gguf', 0)).toMatchObject({ fit: 'auto', fitMarginMiB: 1024, fitCtxMin: 4096 });
    expect(engineConfigFor(auto, '/m/a.gguf', 0, [], { Vulkan0: 5 })).toMatchObject({ fitReserved: { Vulkan0: 5 } });
    const on = fromArgv(['--model', '/m/a.gguf', '--fit', 'on', '--fit-margin-mib', '256', '--fit-ctx', '2048']);
    expect(engineConfigFor(on, '/m/a.gguf', 0)).toMatchObject({ fit: true, fitMarginMiB: 256, fitCtxMin: 2048 });
    const off = engineConfigFor(fromArgv(['--model', '/m/a.gguf', '--fit', 'off']), '/m/a.gguf', 0);
    expect([off.fit, off.fitMarginMiB, off.fitCtxMin, off.fitReserved]).toEqual([undefined, undefined, undefined, undefined]);
    expect(() => fromArgv(['--fit', 'maybe'])).toThrowError(/--fit: must be one of auto, on, off/);
    const perModel = fromArgv(['--config', '/c.json', '--model', 'a=/m/a.gguf'], { readFile: () => JSON.stringify({ models: [{ name: 'a', fit: 'off' }] }) });
    expect(engineConfigFor(modelConfig(perModel, perModel.models[0]!), '/m/a.gguf', 0).fit).toBeUndefined();
  });
});
