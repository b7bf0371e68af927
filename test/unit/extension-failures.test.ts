import { describe, expect, it } from 'vitest';
import { parseDevices } from '../../contract/devices.js';
import { parseHealth } from '../../extension/client/normalize.js';
import { devicesBody, replicaDevices } from '../helpers/contract-bodies.js';
import { engineFailureMessage } from '../../extension/server/engine-failure.js';
import { classifyExit, lastErrorLine } from '../../extension/server/failures.js';
import { ContractError } from '../../contract/check.js';
import type { EngineDeathBody } from '../../contract/health.js';

// The server's /health while its engines gave up (backend/http/routes/info.ts): `reason` is for
// people and logs; `engine_death` is the data the notification is made from.
const DEATH: EngineDeathBody = {
  replica: 0, epoch: 5, pid: 4242, signal: 'SIGSEGV', exit_code: null, last_error: 'ggml_backend_cpu: GGML_ASSERT(ne % 32 == 0) failed',
  deaths_in_row: 5, gave_up: true, model: 'qwen2.5-coder-7b', devices: ['CUDA0'], time: '2026-12-02T01:00:00.000Z',
};
const REASON = 'engine (replica 0) stopped restarting after 5 engine deaths in a row; last: engine process exited (signal SIGSEGV) …';

describe('an engine that gave up', () => {
  it('reads its death from /health as data, checked against the contract', () => {
    expect(parseHealth(503, { status: 'failed', reason: REASON, engine_death: DEATH })).toEqual({
      status: 'failed', model: null, slots: null, reason: REASON, loadTimeoutMs: null, engineDeath: DEATH,
    });
    // Another server (llama-server, Ollama) sends no engine_death.
    expect(parseHealth(503, { status: 'failed', reason: REASON }).engineDeath).toBeNull();
    expect(parseHealth(503, { status: 'unavailable', reason: 'engine (replica 0) is restarting' }).status).toBe('loading');
    expect(() => parseHealth(503, { status: 'failed', engine_death: { ...DEATH, deaths_in_row: '5' } })).toThrow(ContractError);
    expect(() => parseHealth(503, { status: 'failed', engine_death: { ...DEATH, deaths_in_row: '5' } })).toThrow(/^GET \/health engine_death: .*deaths_in_row: expected number/);
  });

  it('says it in one sentence with the model and the device, whatever the reason text says', () => {
    expect(engineFailureMessage(DEATH)).toBe(
      'the engine stopped after 5 crashes in a row (signal SIGSEGV) running qwen2.5-coder-7b on CUDA0. Last engine error: ggml_backend_cpu: GGML_ASSERT(ne % 32 == 0) failed');
    expect(engineFailureMessage({ ...DEATH, signal: null, exit_code: 1, last_error: null, deaths_in_row: 1, devices: [], model: 'tiny' })).toBe(
      'the engine stopped (exit code 1) running tiny. The engine wrote no error line; see the log.');
    expect(engineFailureMessage(null)).toBe('the engine stopped after crashing again and again; see the log.');
  });
});

describe('why the server process ended', () => {
  it('regression: a killed server does not quote an unrelated info line as the cause', () => {
    const lines = [
      '2026-11-30T10:00:00.000Z info  request 12 chat finish=error prompt=40 output=3',
      '2026-11-30T10:00:01.000Z info  request 13 chat finish=stop prompt=8 output=12',
    ];
    expect(classifyExit(lines, null, 'SIGKILL', 5000)).toEqual({ kind: 'crashed', retry: true, message: 'the server was killed by SIGKILL' });
    expect(lastErrorLine([...lines, '2026-11-30T10:00:02.000Z error engine (replica 0) died'])).toBe('engine (replica 0) died');
    expect(lastErrorLine(['Segmentation fault (core dumped)', ...lines])).toBe('Segmentation fault (core dumped)');
  });
});

describe('device memory', () => {
  it('a CPU device that reports all RAM as free has an unknown use, not 0 B', () => {
    const devs = parseDevices(devicesBody([replicaDevices({ replica: 0, devices: [
      { name: 'CPU', description: 'Intel Xeon', type: 'cpu', backend: 'CPU', memory_free: 25e9, memory_total: 25e9 },
      { name: 'CUDA0', description: 'RTX', type: 'gpu', backend: 'CUDA', memory_free: 4e9, memory_total: 24e9 },
    ] })]));
    expect(devs.map((d) => [d.name, d.memoryFree, d.memoryTotal])).toEqual([['CPU', null, 25e9], ['CUDA0', 4e9, 24e9]]);
  });
});
