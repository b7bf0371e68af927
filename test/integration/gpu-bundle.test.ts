// The GPU run's bundle (tools/gpu-bundle.mjs) and its run script with the CPU flavour: what the
// bundle holds and that it travels (at most 64 MiB), the steps the run script plans for CUDA and for
// the CPU, and the steps that run quickly here from the unpacked bundle (its own Node, the source in
// its cache with the patches applied, the devices, a test model, batched == solo). The full dry run
// (the CPU build from the trimmed source, the stand-ins, bench:compare) is the documented command in
// docs/benchmarks.md, "Measuring on an offline GPU machine"; it takes hours on a shared 2-core machine.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tar from 'tar';

const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'strata-gpu-bundle-test-'));
const bundle = join(dir, 'bundle');
const work = join(dir, 'work');
let manifest: { files: Array<{ name: string; bytes: number }>; totalBytes: number; limitBytes: number; source: string; node: { version: string } };

async function entries(file: string): Promise<string[]> {
  const names: string[] = [];
  await tar.list({ file, onReadEntry: (e) => { names.push(e.path); } });
  return names;
}

const hasGpu = (() => { try { execFileSync('nvidia-smi', ['-L'], { stdio: 'ignore' }); return true; } catch { return false; } })();
const run = (...args: string[]) => execFileSync('bash', [join(bundle, 'run.sh'), '--work', work, ...args],
  { encoding: 'utf8', env: { ...process.env, OUT: '' }, maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(async () => {
  const { makeBundle } = await import(join(root, 'tools', 'gpu-bundle.mjs'));
  // dist/ as `npm test` built it: other test files run it meanwhile.
  manifest = await makeBundle({ out: bundle, build: false });
}, 600_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the GPU bundle', () => {
  it('holds Node, the app and the trimmed, patched llama.cpp source, and travels (at most 64 MiB)', async () => {
    expect(manifest.files.map((f) => f.name)).toEqual(['node.tar.gz', 'app.tar.gz', 'llama.cpp.tar.gz']);
    expect(manifest.totalBytes).toBeLessThanOrEqual(64 * 2 ** 20);
    expect(manifest.limitBytes).toBe(64 * 2 ** 20);
    expect(manifest.node.version).toBe(process.version);
    expect(await entries(join(bundle, 'node.tar.gz'))).toContain('node/bin/node');

    const app = await entries(join(bundle, 'app.tar.gz'));
    for (const f of ['app/package.json', 'app/scripts/build-native.mjs', 'app/tools/gpu-run.mjs', 'app/tools/bench-compare.mjs',
      'app/dist/strata.mjs', 'app/dist/engine-host.mjs', 'app/dist/cpu-probe.mjs', 'app/dist/fit-probe.mjs', 'app/dist/bench-compare.mjs',
      'app/native/CMakeLists.txt', 'app/native/pin.json', 'app/native/src/engine.cpp', 'app/native/src/memory_fit.cpp', 'app/native/lib/addon.d.ts',
      'app/node_modules/node-addon-api/napi.h', 'app/node_modules/node-api-headers/include/node_api.h']) {
      expect(app, f).toContain(f);
    }
    expect(app.some((f) => f.endsWith('.map')), 'no source maps').toBe(false);
    expect(app.some((f) => f.startsWith('app/native/build/')), 'no build output').toBe(false);

    const src = await entries(join(bundle, 'llama.cpp.tar.gz'));
    const s = (p: string) => `${manifest.source}/${p}`;
    for (const f of ['CMakeLists.txt', '.strata-ready', 'ggml/CMakeLists.txt', 'ggml/src/ggml-cuda/CMakeLists.txt', 'ggml/src/ggml-cuda/fattn.cu',
      'ggml/src/ggml-cpu/amx/mmq.cpp', 'ggml/src/ggml-rpc/ggml-rpc.cpp', 'src/llama.cpp', 'include/llama.h', 'common/fit.cpp',
      'tools/server/server.cpp', 'tools/ui/CMakeLists.txt', 'scripts/ui-assets.cmake', 'vendor/nlohmann/json.hpp', 'models/ggml-vocab-qwen2.gguf']) {
      expect(src, f).toContain(s(f));
    }
    for (const gone of ['ggml/src/ggml-metal/', 'ggml/src/ggml-vulkan/', 'ggml/src/ggml-sycl/', 'tools/ui/src/', 'models/ggml-vocab-llama-bpe.gguf', '.git/']) {
      expect(src.some((f) => f.startsWith(s(gone))), gone).toBe(false);
    }
  });

  it('plans the CUDA build for sm_90 and the CPU build without it, then the same steps', () => {
    const cuda = run('--flavour', 'cuda', '--plan');
    const cpu = run('--flavour', 'cpu', '--small', '--plan');
    const steps = (plan: string) => plan.split('\n').filter((l) => /^\w/.test(l)).map((l) => l.split(' ')[0]);
    expect(steps(cuda)).toEqual(['preflight', 'build', 'devices', 'models', 'exact', 'bench']);
    expect(steps(cpu)).toEqual(steps(cuda));
    expect(cuda).toMatch(/STRATA_GPU=cuda CUDA_ARCHITECTURES=90 \S+\/node \S+\/scripts\/build-native\.mjs\n/);
    expect(cuda).toMatch(/STRATA_GPU=cuda CUDA_ARCHITECTURES=90 \S+\/node \S+\/scripts\/build-native\.mjs --target llama-server/);
    expect(cpu).not.toContain('STRATA_GPU');
    expect(cuda).toContain('make-test-model --out');
    expect(cuda).toMatch(/--shape 7b --quant q4_0/);
    expect(cuda).toMatch(/bench-engine --workload exact .*--devices CUDA0/);
    expect(cuda).toMatch(/bench-compare\.mjs --prebuilt .*--scenarios single,concurrent,repeat,mixed,infill --clients 4,8,16 .*--repeat-tokens 4096/);
    expect(cuda).toMatch(/bench-compare\.mjs --prebuilt .*--scenarios repeat .*--repeat-tokens 32768/);
  });

  it.skipIf(hasGpu)(`the CUDA flavour stops at preflight, in seconds, naming what this machine lacks${hasGpu ? ' (skipped: this machine has an NVIDIA GPU)' : ''}`, () => {
    const out = join(dir, 'cuda-results');
    expect(() => run('--flavour', 'cuda', '--out', out, '--steps', 'preflight,build,devices')).toThrow();
    const steps = JSON.parse(readFileSync(join(out, 'steps.json'), 'utf8'));
    expect(steps.preflight).toMatchObject({ status: 'failed', note: expect.stringMatching(/^missing: an NVIDIA GPU \(nvidia-smi found none\)/) });
    expect(steps.preflight.seconds).toBeLessThan(30);
    expect(steps.build).toMatchObject({ status: 'skipped', note: 'an earlier step failed' });
    expect(steps.devices).toMatchObject({ status: 'skipped' });
  });

  it('runs from the unpacked bundle with its own Node: preflight, the addon, the devices, a test model, batched == solo', () => {
    const out = join(dir, 'results');
    run('--flavour', 'cpu', '--small', '--tiny', '--out', out, '--steps', 'preflight,build,devices,models,exact',
      '--native-from', join(root, 'native', 'build'), '--budget-s', '900');
    // The source landed in the work folder's cache as scripts/build-native.mjs looks for it, patches applied.
    const srcDir = join(work, 'cache', 'src', manifest.source);
    expect(readFileSync(join(srcDir, '.strata-ready'), 'utf8').trim()).toBe(manifest.source.split('-p').pop());
    const steps = JSON.parse(readFileSync(join(out, 'steps.json'), 'utf8'));
    expect(Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, (v as { status: string }).status]))).toEqual({
      preflight: 'ok', build: 'ok', devices: 'ok', models: 'ok', exact: 'ok',
    });
    const machine = JSON.parse(readFileSync(join(out, 'machine.json'), 'utf8'));
    expect(machine).toMatchObject({ flavour: 'cpu', node: process.version });
    const devices = JSON.parse(readFileSync(join(out, 'devices.json'), 'utf8')) as Array<{ name: string }>;
    expect(devices.map((d) => d.name)).toContain('CPU');
    const exact = JSON.parse(readFileSync(join(out, 'exact-tiny-q8_0.json'), 'utf8'));
    expect(exact).toMatchObject({ sequences: 8, identical: 8, differences: [] });
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toContain('| exact | ok |');
    expect(summary).toContain('Batched == solo, tiny-q8_0 on the default devices');
    expect(summary).toContain('**8/8** sequences identical');
  });
});
