// Builds one of native/test/*_test.cpp with the system's C++ compiler against the one-line llama.h
// stub (no llama.cpp), runs it, and returns what it printed and its exit code. The programs print
// one line per failed check, or "NAME: all checks passed".
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../backend/addon/loader.js';

const cxx = process.env.CXX ?? 'c++';
/** Whether a C++ compiler is there to build them (the tests skip without one). */
export const haveCompiler = spawnSync(cxx, ['--version'], { stdio: 'ignore' }).status === 0;

/** `test`: the file name under native/test without `_test.cpp`; `sources`: files under native/src. */
export function runNativeTest(test: string, sources: string[]): { stdout: string; status: number | null } {
  const native = join(packageRoot, 'native');
  const dir = mkdtempSync(join(tmpdir(), `strata-${test}-`));
  try {
    const exe = join(dir, `${test}_test`);
    execFileSync(cxx, ['-std=c++17', '-O1', '-Wall', '-Wextra', '-Werror', '-pthread', '-I', join(native, 'test', 'stub'),
      join(native, 'test', `${test}_test.cpp`), ...sources.map((s) => join(native, 'src', s)), '-o', exe], { stdio: 'pipe' });
    const run = spawnSync(exe, [], { encoding: 'utf8' });
    return { stdout: run.stdout, status: run.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
