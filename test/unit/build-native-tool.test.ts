// `node scripts/build-native.mjs --target NAME` (how the benchmarks get llama-server and
// llama-batched-bench): its stdout is the tool's path alone, CMake's progress reaches the terminal
// (stderr) while a caller captures that path, and a tool already built is neither built again nor
// announced as a build. CMake is a stand-in on PATH that records its calls; the cache is a
// temporary folder holding a published llama.cpp entry and a ready source tree.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../backend/addon/loader.js';

const script = join(packageRoot, 'scripts', 'build-native.mjs');
const cache = mkdtempSync(join(tmpdir(), 'strata-build-tool-'));
const fakeBin = join(cache, 'fake-bin');
const calls = join(cache, 'cmake-calls.txt');
process.env.STRATA_CACHE_DIR = cache;
const { entryDir, sourceDir } = await import(script) as { entryDir(): string; sourceDir(): string };

// A CMake that configures by writing build.ninja, and builds a target by printing a progress line
// and writing bin/<target>.
const cmake = `#!/bin/sh
echo "$*" >> '${calls}'
if [ "$1" = "--build" ]; then
  echo "[1/1] Linking CXX executable bin/$4"
  mkdir -p "$2/bin" && touch "$2/bin/$4"
else
  while [ $# -gt 0 ]; do [ "$1" = "-B" ] && mkdir -p "$2" && touch "$2/build.ninja"; shift; done
fi
`;

afterAll(() => rmSync(cache, { recursive: true, force: true }));

function buildTool(target: string): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, [script, '--target', target], {
    encoding: 'utf8', env: { ...process.env, STRATA_CACHE_DIR: cache, PATH: `${fakeBin}:${process.env.PATH}` },
  });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

describe('build-native --target', () => {
  mkdirSync(fakeBin, { recursive: true });
  writeFileSync(join(fakeBin, 'cmake'), cmake);
  chmodSync(join(fakeBin, 'cmake'), 0o755);
  mkdirSync(join(entryDir(), 'lib'), { recursive: true });
  // A published entry: every library stage 1 publishes (so nothing is built to complete it).
  writeFileSync(join(entryDir(), 'lib', 'manifest.json'), JSON.stringify({ files: ['libggml.so', 'libllama.so', 'libmtmd.so'] }));
  mkdirSync(sourceDir(), { recursive: true });
  writeFileSync(join(sourceDir(), '.strata-ready'), 'x\n');
  const tool = join(entryDir(), 'build', 'bin', 'llama-fake-bench');

  it('builds a missing tool: the path alone on stdout, the build line and CMake progress on stderr', () => {
    const r = buildTool('llama-fake-bench');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${tool}\n`);
    expect(r.stderr).toContain('building llama-fake-bench in');
    expect(r.stderr).toContain('[1/1] Linking CXX executable bin/llama-fake-bench');
    expect(existsSync(tool)).toBe(true);
    expect(readFileSync(calls, 'utf8').split('\n').filter((l) => l.startsWith('--build'))).toHaveLength(1);
  });

  it('a tool already built: its path, no build and no build line', () => {
    const r = buildTool('llama-fake-bench');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${tool}\n`);
    expect(r.stderr).not.toContain('building');
    expect(readFileSync(calls, 'utf8').split('\n').filter((l) => l.startsWith('--build'))).toHaveLength(1);
  });
});
