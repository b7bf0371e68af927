// The tool subcommands as a user runs them (dist/strata.mjs): output, exit codes, errors.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAddon, packageRoot } from '../../backend/addon/loader.js';
import { testPicture } from '../helpers/images.js';
import type { DeviceInfo } from '../../native/lib/addon.js';
import { freePort } from '../../common/net/free-port.js';

let dir = '';
beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'strata-cli-tools-')); });
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

function strata(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(packageRoot, 'dist', 'strata.mjs'), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('strata make-test-model', () => {
  it('writes the model and says what it wrote, including FIM tokens', () => {
    const out = join(dir, 'sc.gguf');
    const r = strata('make-test-model', '--out', out, '--vocab', 'starcoder', '--quant', 'q8_0', '--seed', '4');
    expect(r.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    expect(r.stdout).toContain(`wrote ${out}`);
    expect(r.stdout).toMatch(/params\s+7\.\d\dM \(shape tiny, q8_0, seed 4\)/);
    expect(r.stdout).toMatch(/FIM\s+prefix 1, suffix 3, middle 2/);
  });

  it('--mmproj also writes a projector for the model, which the engine loads with it', async () => {
    const out = join(dir, 'vis.gguf');
    const proj = join(dir, 'vis.mmproj.gguf');
    const r = strata('make-test-model', '--out', out, '--mmproj', proj);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`mmproj\\s+${proj.replace(/[.]/g, '\\.')} \\([\\d.]+ MiB; 16 tokens an image\\)`));
    const engine = await loadAddon().Engine.load({ model: out, mmproj: proj, ctx: 128, slots: 1, threads: 2, onEvents: () => {} });
    expect(engine.info.mmproj).toBe(proj);
    expect((await engine.prepareImage(testPicture(1))).n).toBe(16);
    await engine.close();
  });

  it('exits 2 with the reason and the usage on bad arguments, 1 when writing fails', () => {
    const shape = strata('make-test-model', '--out', join(dir, 'x.gguf'), '--shape', 'huge');
    expect(shape.code).toBe(2);
    expect(shape.stderr).toContain("--shape must be one of tiny, 0.5b, 7b, embed-bert, embed-causal, rerank-bert, copy, copy-0.5b, mtp, copy-mtp, hybrid, eagle3, dflash, dspark, got 'huge'");
    expect(shape.stderr).toContain('usage: strata make-test-model');
    const vocab = strata('make-test-model', '--out', join(dir, 'x.gguf'), '--vocab', 'klingon');
    expect(vocab.code).toBe(2);
    expect(vocab.stderr).toMatch(/unknown vocab 'klingon'.*available: .*starcoder/);
    const write = strata('make-test-model', '--out', join(dir, 'no', 'such', 'dir.gguf'), '--vocab', 'starcoder');
    expect(write.code).toBe(1);
    expect(write.stderr).toMatch(/cannot write .*dir\.gguf: No such file or directory/);
    expect(existsSync(join(dir, 'x.gguf'))).toBe(false);
  });
});

describe('strata devices', () => {
  it('lists the CPU as JSON and as a table', () => {
    const json = strata('devices', '--json');
    expect(json.code).toBe(0);
    const devices = JSON.parse(json.stdout) as DeviceInfo[];
    const cpu = devices.find((d) => d.type === 'cpu');
    expect(cpu).toMatchObject({ name: 'CPU', backend: 'CPU' });
    expect(cpu!.memoryTotal).toBeGreaterThan(0);
    const table = strata('devices');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^name\s+type\s+backend\s+free\s+total\s+description/);
    expect(table.stdout).toMatch(/\nCPU\s+cpu\s+CPU\s+\d+ MiB/);
  });

  it('fails with the endpoint named when an RPC server is unreachable', async () => {
    const endpoint = `127.0.0.1:${await freePort()}`;
    const r = strata('devices', '--rpc', endpoint);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`RPC server ${endpoint} is unreachable`);
  });
});

describe('strata rpc-server', () => {
  it('refuses a non-loopback host without --allow-remote', () => {
    const r = strata('rpc-server', '--host', '0.0.0.0', '--port', '50052');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('refusing to listen on 0.0.0.0: rpc-server is unauthenticated');
  });

  it('exits 1 with a reason when its port is taken', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = strata('rpc-server', '--port', String(port), '--threads', '1');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`rpc server on 127.0.0.1:${port} could not start`);
    } finally {
      blocker.close();
    }
  });
});
