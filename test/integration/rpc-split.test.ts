// Two local `strata rpc-server` processes make a two-device machine: the tiny model split by
// layer across RPC0 and RPC1 must decode exactly what one CPU device decodes (greedy, q8_0
// weights: bit-identical kernels), and an unreachable server must be a clear error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceInfo } from '../../native/lib/addon.js';
import { loadAddon } from '../../backend/addon/loader.js';
import { ensureTestModel } from '../helpers/models.js';
import { freePort } from '../../common/net/free-port.js';
import { startRpcServer, type RpcServer } from '../helpers/rpc-servers.js';
import { EngineDriver, promptText } from './engine-driver.js';

let servers: RpcServer[] = [];
let model = '';
let rpcDevices: DeviceInfo[] = [];

beforeAll(async () => {
  model = await ensureTestModel();
  servers = await Promise.all([startRpcServer(), startRpcServer()]);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const s of servers) expect(() => process.kill(s.pid, 0)).toThrow();
});

const prompts = ['first', 'second', 'third'].map((t) => promptText(t, 10));

async function greedy(eng: EngineDriver): Promise<number[][]> {
  return Promise.all(prompts.map((p) => eng.run({ prompt: eng.tokens(p), maxTokens: 24, ignoreEos: true }).then((r) => r.ids)));
}

describe('layer split across two RPC servers', () => {
  it('lists each server as an RPC device named after its order, described by its endpoint', () => {
    const endpoints = servers.map((s) => s.endpoint);
    const devices = loadAddon().listDevices(endpoints);
    rpcDevices = endpoints.map((ep) => devices.find((d) => d.backend === 'RPC' && d.description === ep)!);
    expect(rpcDevices.every(Boolean)).toBe(true);
    expect(rpcDevices.map((d) => d.name)).toEqual(['RPC0', 'RPC1']);
    for (const d of rpcDevices) {
      expect(d.type).toBe('gpu');
      expect(d.memoryTotal).toBeGreaterThan(0);
    }
    // Adding the same endpoints again changes nothing.
    expect(loadAddon().listDevices(endpoints).filter((d) => d.backend === 'RPC')).toHaveLength(2);
  });

  it('decodes the same greedy tokens as the CPU alone, with layers on both devices', async () => {
    const cpu = await EngineDriver.load({ model, ctx: 256, slots: 3, threads: 2, devices: ['CPU'] });
    let expected: number[][];
    try {
      expect(cpu.engine.info.placement.every((p) => p.device === 'CPU' || p.layers === 0)).toBe(true);
      expected = await greedy(cpu);
    } finally {
      await cpu.close();
    }
    expect(new Set(expected.map((ids) => ids.join(','))).size).toBe(3);

    const split = await EngineDriver.load({
      model, ctx: 256, slots: 3, threads: 2,
      rpc: servers.map((s) => s.endpoint), splitMode: 'layer', devices: rpcDevices.map((d) => d.name),
    });
    try {
      const placed = split.engine.info.placement;
      for (const d of rpcDevices) {
        expect(placed.find((p) => p.device === d.name)?.layers ?? 0).toBeGreaterThan(0);
      }
      expect(await greedy(split)).toEqual(expected);
    } finally {
      await split.close();
    }
  });
});

describe('an unreachable RPC server', () => {
  it('is a clear error naming it, for listDevices and Engine.load alike', async () => {
    const endpoint = `127.0.0.1:${await freePort()}`;
    expect(() => loadAddon().listDevices([endpoint])).toThrow(`RPC server ${endpoint} is unreachable`);
    await expect(EngineDriver.load({ model, ctx: 256, slots: 1, rpc: [endpoint] })).rejects.toThrow(endpoint);
    // The process and the devices it already had are intact.
    expect(loadAddon().listDevices().map((d) => d.name)).toContain('CPU');
  });
});
