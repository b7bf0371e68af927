import { describe, expect, it } from 'vitest';
import { classifyExit } from '../../extension/server/failures.js';
import { buildServeArgs, DEFAULT_SETTINGS, parseNumberList, requestModels, servedModels, settingsProblems } from '../../extension/config/server-settings.js';
import { parseArgs } from '../../backend/args/args.js';
import { resolveConfig } from '../../backend/app/config.js';

describe('serve arguments from settings', () => {
  it('maps every setting to its flag', () => {
    const args = buildServeArgs({
      ...DEFAULT_SETTINGS, modelPath: '/m/a.gguf', slots: 2, contextSize: 4096, kvType: 'q8_0', parkMiB: 512,
      devices: ['CUDA0', 'CUDA1'], splitMode: 'layer', tensorSplit: [3, 1], replicas: 2, rpcServers: ['h:50052'],
    }, 4321);
    expect(args.join(' ')).toBe('serve --host 127.0.0.1 --port 4321 --model /m/a.gguf --slots 2 --ctx 4096 --kv-type q8_0 '
      + '--park-mib 512 --replicas 2 --devices CUDA0,CUDA1 --split-mode layer --tensor-split 3,1 --rpc h:50052');
  });

  it('leaves out the model for the demo model and defaults for the rest', () => {
    // The automatic context: the server's shared one, no --ctx (extension-context-plan.test.ts).
    expect(buildServeArgs(DEFAULT_SETTINGS, 1)).toEqual(['serve', '--host', '127.0.0.1', '--port', '1']);
  });

  it('passes slots, the KV type and the cache only when the user set them, so the server\'s defaults and its fit choose', () => {
    const flags = (s: Partial<typeof DEFAULT_SETTINGS>): string[] => buildServeArgs({ ...DEFAULT_SETTINGS, ...s }, 1).filter((a) => a.startsWith('--'));
    expect(flags({})).toEqual(['--host', '--port']);
    // With a GPU the fit chooses the context too: nothing of the four is passed.
    expect(flags({ fit: 'on' })).toEqual(['--host', '--port', '--fit']);
    // A value the user set is passed even when it equals the default.
    expect(buildServeArgs({ ...DEFAULT_SETTINGS, slots: 4, kvType: 'f16', parkMiB: 0 }, 1).join(' '))
      .toBe('serve --host 127.0.0.1 --port 1 --slots 4 --kv-type f16 --park-mib 0');
    // The server reads what was not passed as its own defaults.
    const parsed = parseArgs(buildServeArgs(DEFAULT_SETTINGS, 1).slice(1));
    const cfg = resolveConfig({ flags: parsed.options, repeated: parsed.repeated!, env: {}, readFile: () => '' });
    expect([cfg.slots, cfg.kvType, cfg.parkMib]).toEqual([4, null, null]);
  });

  it('serves the completion, chat and embedding models in the one server and sends each use its name', () => {
    const s = {
      ...DEFAULT_SETTINGS, modelPath: '/m/qwen-coder.gguf', completionModel: '', chatModel: '/m/llama-instruct.gguf',
      embeddingModel: '/other/qwen-coder.gguf',
    };
    const args = buildServeArgs(s, 9);
    expect(args.join(' ')).toBe('serve --host 127.0.0.1 --port 9 --model /m/qwen-coder.gguf --model /m/llama-instruct.gguf '
      + '--model embedding-qwen-coder=/other/qwen-coder.gguf --preload all --pin qwen-coder');
    expect(requestModels(s, 'managed')).toEqual({ completion: 'qwen-coder', chat: 'llama-instruct', embedding: 'embedding-qwen-coder', nextEdit: 'qwen-coder' });
    // The server reads those arguments as the same three models under the same names.
    const parsed = parseArgs(args.slice(1));
    const cfg = resolveConfig({ flags: parsed.options, repeated: parsed.repeated!, env: {}, readFile: () => '' });
    expect(cfg.models.map((m) => [m.name, m.path])).toEqual(servedModels(s).models.map((m) => [m.name, m.path]));
    expect(cfg.preload).toEqual(['all']);
    expect(cfg.models.filter((m) => m.pinned).map((m) => m.name)).toEqual(['qwen-coder']);
  });

  it('pins the completion model when several are served (unless told not to) and passes --fit unless auto', () => {
    const s = { ...DEFAULT_SETTINGS, modelPath: '/m/chat.gguf', completionModel: '/m/coder.gguf' };
    expect(buildServeArgs(s, 1).join(' ')).toContain('--preload all --pin coder');
    expect(buildServeArgs({ ...s, pinCompletionModel: false }, 1)).not.toContain('--pin');
    // One model: nothing to pin it against; a completion model named but not served here: nothing to pin.
    expect(buildServeArgs({ ...DEFAULT_SETTINGS, modelPath: '/m/chat.gguf' }, 1)).not.toContain('--pin');
    expect(buildServeArgs({ ...s, completionModel: 'remote-name', embeddingModel: '/m/e.gguf' }, 1)).not.toContain('--pin');
    expect(buildServeArgs(s, 1)).not.toContain('--fit');
    expect(buildServeArgs({ ...s, fit: 'off' }, 1).join(' ')).toContain('--fit off');
  });

  it('a model setting that names the modelPath file, or is empty, is the one model; a name is sent as it is', () => {
    const one = { ...DEFAULT_SETTINGS, modelPath: '/m/a.gguf', chatModel: '/m/a.gguf' };
    expect(buildServeArgs(one, 1).filter((x) => x === '--model' || x === '--preload')).toEqual(['--model']);
    expect(requestModels(one, 'managed')).toEqual({ completion: 'a', chat: 'a', embedding: 'a', nextEdit: 'a' });
    const remote = { ...DEFAULT_SETTINGS, completionModel: 'qwen2.5-coder:1.5b', chatModel: '/local/file.gguf', embeddingModel: 'nomic-embed' };
    expect(requestModels(remote, 'remote')).toEqual({ completion: 'qwen2.5-coder:1.5b', embedding: 'nomic-embed', nextEdit: 'qwen2.5-coder:1.5b' });
    expect(requestModels(DEFAULT_SETTINGS, 'managed')).toEqual({});
  });

  it('next edit uses the completion model unless strata.nextEditModel names a file (served too) or a served model', () => {
    const base = { ...DEFAULT_SETTINGS, modelPath: '/m/chat.gguf', completionModel: '/m/coder.gguf' };
    expect(requestModels(base, 'managed').nextEdit).toBe('coder');
    const own = { ...base, nextEditModel: '/z/zeta.gguf' };
    expect(buildServeArgs(own, 1).join(' ')).toContain('--model /m/chat.gguf --model /m/coder.gguf --model /z/zeta.gguf --preload all');
    expect(requestModels(own, 'managed')).toEqual({ completion: 'coder', chat: 'chat', embedding: 'chat', nextEdit: 'zeta' });
    // Same base name as another file: served under next-edit-NAME.
    const clash = { ...base, nextEditModel: '/other/coder.gguf' };
    expect(requestModels(clash, 'managed').nextEdit).toBe('next-edit-coder');
    expect(buildServeArgs(clash, 1)).toContain('next-edit-coder=/other/coder.gguf');
    expect(requestModels({ ...DEFAULT_SETTINGS, nextEditModel: 'instinct' }, 'remote')).toEqual({ nextEdit: 'instinct' });
    expect(requestModels({ ...DEFAULT_SETTINGS, nextEditModel: '/local/zeta.gguf', completionModel: 'coder' }, 'remote')).toEqual({ completion: 'coder' });
  });

  it('names the settings that are wrong', () => {
    expect(settingsProblems(DEFAULT_SETTINGS)).toEqual([]);
    const bad = settingsProblems({ ...DEFAULT_SETTINGS, slots: 0, tensorSplit: parseNumberList('3,x'), rpcServers: ['nohost'] });
    expect(settingsProblems({ ...DEFAULT_SETTINGS, kvType: 'q5_1' })).toEqual(['strata.kvType must be one of f16, q8_0, q4_0 (is \'q5_1\')']);
    expect(bad).toEqual([
      'strata.slots must be a whole number from 1 to 256 (is 0)',
      'strata.tensorSplit must be non-negative numbers, e.g. "3,1"',
      "strata.rpcServers entry 'nohost' is not host:port",
    ]);
  });
});

describe('classifyExit', () => {
  it('tells the common failures apart', () => {
    expect(classifyExit(['listen EADDRINUSE 127.0.0.1:80'], 1, null, 80).kind).toBe('portInUse');
    expect(classifyExit(['error: model file /x.gguf does not exist'], 1, null, 1).kind).toBe('modelMissing');
    expect(classifyExit(['ggml_backend_cuda_buffer_type_alloc_buffer: cudaMalloc failed: out of memory'], 1, null, 1).kind).toBe('outOfMemory');
    // The fit refuses a plan before anything is allocated, naming the changes that would fit: in settings' words.
    const fit = classifyExit(['2026-12-01T23:05:57.282Z error m: the engine could not load /m/m.gguf: /m/m.gguf does not fit in memory: CUDA0 needs 9000 MiB of its 8000 MiB free; it would fit with slots 2, ctx 2048, kvType q8_0 or gpuLayers 20'], 1, null, 1);
    expect(fit).toMatchObject({ kind: 'outOfMemory', retry: false });
    expect(fit.message).toContain('CUDA0 needs 9000 MiB of its 8000 MiB free');
    expect(fit.advice).toBe('It would fit with strata.slots 2, or strata.contextSize 2048, or strata.kvType q8_0, or 20 GPU layers (the rest on the CPU).');
    expect(classifyExit(['strata: --slots must be an integer in [1, 256], got \'0\''], 2, null, 1).kind).toBe('badSettings');
    const crash = classifyExit(['loading', 'GGML_ASSERT(x) failed'], null, 'SIGABRT', 1);
    expect(crash).toEqual({ kind: 'crashed', retry: true, message: 'the server was killed by SIGABRT: GGML_ASSERT(x) failed' });
  });
});
