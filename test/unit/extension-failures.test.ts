import { describe, expect, it } from 'vitest';
import { parseDevices } from '../../contract/devices.js';
import { parseHealth } from '../../extension/client/normalize.js';
import { devicesBody, replicaDevices } from '../helpers/contract-bodies.js';
import { engineFailureMessage, parseEngineFailure } from '../../extension/server/engineFailure.js';
import { classifyExit, lastErrorLine } from '../../extension/server/failures.js';

// The server's wording (backend/engine/process-client.ts: deathReason and the crash-loop limit).
const REASON = 'engine (replica 0) stopped restarting after 5 engine deaths in a row; last: engine process exited (signal SIGSEGV): '
  + 'last error log: [engine 0.5] ggml_backend_cpu: GGML_ASSERT(ne % 32 == 0) failed (replica 0, epoch 5, pid 4242)';

describe('an engine that gave up', () => {
  it('reads deaths, signal and the last engine error line from /health', () => {
    expect(parseHealth(503, { status: 'failed', reason: REASON })).toEqual({ status: 'failed', model: null, slots: null, reason: REASON, loadTimeoutMs: null });
    expect(parseHealth(503, { status: 'unavailable', reason: 'engine (replica 0) is restarting' }).status).toBe('loading');
    expect(parseEngineFailure(REASON)).toEqual({ deaths: 5, signal: 'SIGSEGV', exitCode: null, lastError: 'ggml_backend_cpu: GGML_ASSERT(ne % 32 == 0) failed' });
    expect(parseEngineFailure('engine (replica 1) stopped restarting after 5 engine deaths in a row; last: engine process exited (code 3) (replica 1, epoch 5, pid 7)'))
      .toEqual({ deaths: 5, signal: null, exitCode: 3, lastError: null });
  });

  it('says it in one sentence with the model and the device', () => {
    expect(engineFailureMessage(parseEngineFailure(REASON), 'qwen2.5-coder-7b', ['CUDA0'])).toBe(
      'Strata: the engine stopped after 5 crashes in a row (signal SIGSEGV) running qwen2.5-coder-7b on CUDA0. Last engine error: ggml_backend_cpu: GGML_ASSERT(ne % 32 == 0) failed');
    expect(engineFailureMessage({ deaths: null, signal: null, exitCode: 1, lastError: null }, null, [])).toBe(
      'Strata: the engine stopped (exit code 1). The engine wrote no error line; see the log.');
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
