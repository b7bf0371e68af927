// The engine's pure slot policy (native/src/slot_picker.cpp) built on its own with the system's
// C++ compiler against a one-line llama.h stub, and run: native/test/slot_picker_test.cpp holds
// the checks (a session's state goes into an idle slot: the one it supersedes, else an empty
// one, else the least recently used; never a busy one nor one a queued request needs).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../backend/addon/loader.js';

const cxx = process.env.CXX ?? 'c++';
const haveCompiler = spawnSync(cxx, ['--version'], { stdio: 'ignore' }).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'strata-slot-picker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!haveCompiler)('PickRestoreSlot (native, pure)', () => {
  it('picks the slot a loaded session goes into, or none (the park)', () => {
    const native = join(packageRoot, 'native');
    const exe = join(dir, 'slot_picker_test');
    execFileSync(cxx, ['-std=c++17', '-O1', '-Wall', '-Wextra', '-Werror', '-I', join(native, 'test', 'stub'),
      join(native, 'test', 'slot_picker_test.cpp'), join(native, 'src', 'slot_picker.cpp'), '-o', exe], { stdio: 'pipe' });
    const run = spawnSync(exe, [], { encoding: 'utf8' });
    expect(run.stdout).toBe('slot_picker: all checks passed\n');
    expect(run.status).toBe(0);
  });
});
