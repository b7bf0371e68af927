// native/pin.json: the prebuilt GPU backends must come from the same llama.cpp source as the
// engine (a library built from another ggml does not load into ours, or worse, loads and
// misbehaves), so moving LLAMA_COMMIT without moving them fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPin, GPU_BACKEND_KINDS, PIN, pinProblems, type Pin } from '../../backend/gpu-backends/pin.js';
import { packageRoot } from '../../backend/addon/loader.js';

const clone = (): Pin => JSON.parse(JSON.stringify(PIN)) as Pin;

describe('the GPU backend pin', () => {
  it('pins every backend to the llama.cpp commit and node-llama-cpp release the engine is built from', () => {
    expect(pinProblems(PIN)).toEqual([]);
    // The build reads the same file (scripts/build-native.mjs: LLAMA_COMMIT = pin.llamaCommit).
    const onDisk = JSON.parse(readFileSync(join(packageRoot, 'native', 'pin.json'), 'utf8')) as Pin;
    expect(onDisk.llamaCommit).toBe(PIN.llamaCommit);
    expect(readFileSync(join(packageRoot, 'scripts', 'build-native.mjs'), 'utf8')).toContain("const LLAMA_COMMIT = PIN.llamaCommit;");
    for (const kind of GPU_BACKEND_KINDS) {
      const b = PIN.gpuBackends[kind];
      expect(b.llamaCommit).toBe(PIN.llamaCommit);
      expect(b.version).toBe(PIN.nodeLlamaCpp);
      expect(b.package).toBe(`@node-llama-cpp/linux-x64-${kind}`);
    }
  });

  it('fails when LLAMA_COMMIT moves and the backends do not', () => {
    const moved = clone();
    moved.llamaCommit = '0123456789abcdef0123456789abcdef01234567';
    const problems = pinProblems(moved);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toContain('gpuBackends.vulkan was built from llama.cpp 80fb11ac73e6, the engine from 0123456789ab');
    expect(() => checkPin(moved)).toThrow(/native\/pin.json: gpuBackends.vulkan was built from/);
  });

  it('fails when the node-llama-cpp release moves alone, or an entry is malformed', () => {
    const p = clone();
    p.nodeLlamaCpp = '3.22.0';
    expect(pinProblems(p).every((x) => x.includes('the source comes from node-llama-cpp@3.22.0'))).toBe(true);
    const q = clone();
    q.gpuBackends.cuda.integrity = 'sha1-abc';
    q.gpuBackends.cuda.sha256 = 'xyz';
    q.gpuBackends.cuda.file = 'package/../../etc/libggml-cuda.so';
    expect(pinProblems(q)).toEqual([
      'gpuBackends.cuda.integrity is not a sha512 SRI string',
      'gpuBackends.cuda.sha256 is not 64 hex digits',
      'gpuBackends.cuda.file must be package/…/libggml-cuda.so',
    ]);
  });
});
