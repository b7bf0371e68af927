import { describe, expect, it } from 'vitest';
import { engineConfigFor } from '../../backend/app/app.js';
import { ConfigError, resolveConfig, serveHelp } from '../../backend/app/config.js';

const flags = (o: Record<string, string>) => new Map(Object.entries(o));
const noFile = () => { throw new Error('no file'); };

describe('strata serve settings', () => {
  it('takes flags over env over the config file over defaults', () => {
    const file = JSON.stringify({ port: 9000, slots: 3, ctx: 2048, 'log-format': 'json', sessionsDir: '/cfg/sessions' });
    const cfg = resolveConfig({
      flags: flags({ config: '/x.json', slots: '6' }),
      env: { STRATA_PORT: '9100', STRATA_SLOTS: '5', HOME: '/home/u' },
      readFile: () => file,
    });
    expect(cfg.slots).toBe(6);
    expect(cfg.port).toBe(9100);
    expect(cfg.ctx).toBe(2048);
    expect(cfg.logFormat).toBe('json');
    expect(cfg.sessionsDir).toBe('/cfg/sessions');
    expect(cfg.host).toBe('127.0.0.1');
    expect(cfg.configFile).toBe('/x.json');
  });

  it('uses XDG_DATA_HOME for sessions and reads the key from STRATA_API_KEY', () => {
    const cfg = resolveConfig({ flags: flags({}), env: { XDG_DATA_HOME: '/data', STRATA_API_KEY: 'k' }, readFile: noFile });
    expect(cfg.sessionsDir).toBe('/data/strata/sessions');
    expect(cfg.apiKey).toBe('k');
  });

  it('refuses bad values naming their source', () => {
    expect(() => resolveConfig({ flags: flags({ port: 'eighty' }), env: {}, readFile: noFile })).toThrowError(/--port: expected an integer/);
    expect(() => resolveConfig({ flags: flags({}), env: { STRATA_SLOTS: '0' }, readFile: noFile })).toThrowError(/STRATA_SLOTS: must be in \[1, 256\]/);
    expect(() => resolveConfig({ flags: flags({ 'kv-type': 'q5' }), env: {}, readFile: noFile })).toThrowError(/must be one of f16, q8_0, q4_0/);
    expect(() => resolveConfig({ flags: flags({ config: '/c.json' }), env: {}, readFile: () => '{"slots": "many"}' })).toThrowError(/config file \/c.json: slots/);
    expect(() => resolveConfig({ flags: flags({ config: '/c.json' }), env: {}, readFile: () => '{"sloths": 2}' })).toThrowError(/unknown setting 'sloths'/);
    expect(() => resolveConfig({ flags: flags({ config: '/c.json' }), env: {}, readFile: () => '{' })).toThrowError(/not valid JSON/);
    expect(() => resolveConfig({ flags: flags({ prot: '1' }), env: {}, readFile: noFile })).toThrowError(ConfigError);
  });

  it('reads the infill admission delay and FIM order (defaults 200 ms and auto)', () => {
    expect(resolveConfig({ flags: flags({}), env: {}, readFile: noFile })).toMatchObject({ infillDelayMs: 200, fimOrder: 'auto' });
    expect(resolveConfig({ flags: flags({ 'infill-delay-ms': '0', 'fim-order': 'spm' }), env: {}, readFile: noFile })).toMatchObject({ infillDelayMs: 0, fimOrder: 'spm' });
    expect(() => resolveConfig({ flags: flags({ 'fim-order': 'mps' }), env: {}, readFile: noFile })).toThrowError(/--fim-order: must be one of auto, psm, spm/);
    expect(() => resolveConfig({ flags: flags({}), env: { STRATA_INFILL_DELAY_MS: '-1' }, readFile: noFile })).toThrowError(/STRATA_INFILL_DELAY_MS: must be in \[0, 10000\]/);
  });

  it('reads the reasoning effort budgets: three whole numbers (default 1024,4096,16384)', () => {
    expect(resolveConfig({ flags: flags({}), env: {}, readFile: noFile }).reasoningEffortBudgets).toEqual([1024, 4096, 16384]);
    expect(resolveConfig({ flags: flags({ 'reasoning-effort-budgets': '10,20,30' }), env: {}, readFile: noFile }).reasoningEffortBudgets).toEqual([10, 20, 30]);
    for (const bad of ['10,20', '10,20,30,40', '10,2.5,30']) {
      expect(() => resolveConfig({ flags: flags({ 'reasoning-effort-budgets': bad }), env: {}, readFile: noFile }), bad).toThrowError(/--reasoning-effort-budgets: expected three whole numbers/);
    }
    expect(() => resolveConfig({ flags: flags({ 'reasoning-effort-budgets': '10,-1,30' }), env: {}, readFile: noFile })).toThrowError(/--reasoning-effort-budgets: expected non-negative numbers/);
  });

  it('refuses to listen beyond loopback without an API key', () => {
    expect(() => resolveConfig({ flags: flags({ host: '0.0.0.0' }), env: {}, readFile: noFile })).toThrowError(/without an API key/);
    expect(resolveConfig({ flags: flags({ host: '0.0.0.0', 'api-key': 's' }), env: {}, readFile: noFile }).apiKey).toBe('s');
    expect(resolveConfig({ flags: flags({ host: 'localhost' }), env: {}, readFile: noFile }).host).toBe('localhost');
  });

  it('splits devices into replica groups', () => {
    const r = (f: Record<string, string>) => resolveConfig({ flags: flags(f), env: {}, readFile: noFile });
    expect(r({ devices: 'CUDA0,CUDA1' })).toMatchObject({ replicas: 1, deviceGroups: [['CUDA0', 'CUDA1']] });
    expect(r({ devices: 'CUDA0,CUDA1', replicas: '2' })).toMatchObject({ replicas: 2, deviceGroups: [['CUDA0'], ['CUDA1']] });
    expect(r({ devices: 'CUDA0,CUDA1/CUDA2,CUDA3' })).toMatchObject({ replicas: 2, deviceGroups: [['CUDA0', 'CUDA1'], ['CUDA2', 'CUDA3']] });
    expect(() => r({ devices: 'A,B,C', replicas: '2' })).toThrowError(/do not divide into 2 replicas/);
    expect(() => r({ devices: 'A/B', replicas: '3' })).toThrowError(/2 device groups but --replicas is 3/);
    expect(r({ 'tensor-split': '3,1', rpc: 'h1:50052,h2:50052' })).toMatchObject({ tensorSplit: [3, 1], rpc: ['h1:50052', 'h2:50052'] });
  });

  it('passes --op-offload and the installed GPU backend folders to every engine', () => {
    const r = (f: Record<string, string>) => resolveConfig({ flags: flags(f), env: {}, readFile: noFile });
    expect(r({}).opOffload).toBeNull();
    expect(r({ 'op-offload': 'off' }).opOffload).toBe('off');
    expect(() => r({ 'op-offload': 'maybe' })).toThrowError(/--op-offload: must be one of on, off/);
    const dirs = ['/c/backends/x/cuda', '/c/backends/x/vulkan'];
    expect(engineConfigFor(r({ 'op-offload': 'off' }), '/m.gguf', 0, dirs)).toMatchObject({ opOffload: false, backendDirs: dirs });
    expect(engineConfigFor(r({ 'decode-prompt-budget': '128' }), '/m.gguf', 0, [])).toMatchObject({ decodePromptBudget: 128 });
    expect(() => r({ 'decode-prompt-budget': '0' })).toThrowError(/--decode-prompt-budget: must be in \[1, 65536\]/);
    const plain = engineConfigFor(r({}), '/m.gguf', 0, []);
    expect('opOffload' in plain || 'backendDirs' in plain).toBe(false);
  });
});

describe('strata serve --help', () => {
  it('lists the allowed values of every enum option', () => {
    const help = serveHelp().split('\n');
    const line = (flag: string) => help.find((l) => l.startsWith(`  --${flag} `)) ?? '';
    expect(line('kv-type')).toMatch(/\(one of: f16, q8_0, q4_0\)$/);
    expect(line('flash-attn')).toMatch(/\(one of: auto, on, off\)$/);
    expect(line('split-mode')).toMatch(/\(one of: none, layer, row\)$/);
    expect(line('cpu-repack')).toMatch(/\(one of: auto, on, off\)$/);
    expect(line('log-format')).toMatch(/\(one of: text, json\)$/);
    expect(line('log-level')).toMatch(/\(one of: debug, info, warn, error\)$/);
    // Options that are not enums say nothing of the kind.
    expect(line('port')).not.toMatch(/one of/);
  });
});
