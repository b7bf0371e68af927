// A GPU backend library that cannot load (as the CUDA backend does without libcublas.so.13):
// the engine serves on what did load, the server says so in one log line that names the missing
// library, and /v1/devices lists the failure with the loader's reason. The stand-in is a real
// shared library built here whose dependency is deleted before the server starts.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, tempDir, type Running } from './server-helpers.js';

let dir: { dir: string; remove(): void };
let s: Running;
let library = '';

beforeAll(async () => {
  dir = tempDir('strata-fallback-');
  const cxx = (args: string[]) => execFileSync('g++', args, { cwd: dir.dir, stdio: 'pipe' });
  writeFileSync(join(dir.dir, 'dep.cpp'), 'extern "C" int strata_test_dep(void) { return 1; }\n');
  writeFileSync(join(dir.dir, 'fake.cpp'), 'extern "C" int strata_test_dep(void);\nextern "C" int ggml_backend_score(void) { return strata_test_dep(); }\n');
  cxx(['-shared', '-fPIC', '-o', 'libstrata-missing-dep.so.1', '-Wl,-soname,libstrata-missing-dep.so.1', 'dep.cpp']);
  cxx(['-shared', '-fPIC', '-o', 'libggml-fakegpu.so', 'fake.cpp', '-L.', '-l:libstrata-missing-dep.so.1']);
  rmSync(join(dir.dir, 'libstrata-missing-dep.so.1'));
  library = join(dir.dir, 'libggml-fakegpu.so');
  s = await startServer(await ensureTestModel(), {}, undefined, { backendDirs: [dir.dir] });
});

afterAll(async () => {
  await s?.close();
  dir?.remove();
});

describe('a GPU backend whose runtime is missing', () => {
  it('costs one log line that names the missing library; the engine runs on the CPU', () => {
    const lines = s.logs.filter((l) => l.includes('libggml-fakegpu.so'));
    expect(lines, s.logs.join('\n')).toHaveLength(1);
    expect(lines[0]).toMatch(/warn +GPU backend did not load: libggml-fakegpu\.so \(.*\): libstrata-missing-dep\.so\.1: cannot open shared object file: No such file or directory; libstrata-missing-dep\.so\.1 is missing: .*; the engine runs on CPU \(strata gpu list shows all it needs\)$/);
  });

  it('is listed in /v1/devices with the loader\'s reason, and requests are served', async () => {
    const r = await json(s.port, 'GET', '/v1/devices');
    expect(r.body.data[0].backends.failed).toEqual([{ path: library, error: 'libstrata-missing-dep.so.1: cannot open shared object file: No such file or directory' }]);
    expect(r.body.data[0].placement.map((p: { device: string }) => p.device)).toEqual(['CPU']);
    const c = await s.openai.completions.create({ model: 'x', prompt: 'hello', max_tokens: 4 });
    expect(c.usage!.completion_tokens).toBe(4);
  });
});
