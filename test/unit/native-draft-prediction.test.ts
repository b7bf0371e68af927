// A prediction's combined draft (native/src/draft_prediction.cpp with draft_ngram.cpp) built on its
// own with the system's C++ compiler against a one-line llama.h stub, and run:
// native/test/draft_prediction_test.cpp holds the checks (the prediction's tokens while the answer
// follows them, the sequence's own n-grams once it leaves them or where their draft stops short,
// the prediction again as soon as the answer rejoins it).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../backend/addon/loader.js';

const cxx = process.env.CXX ?? 'c++';
const haveCompiler = spawnSync(cxx, ['--version'], { stdio: 'ignore' }).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'strata-draft-prediction-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!haveCompiler)('CombinedDraft (native, pure)', () => {
  it('drafts from the prediction and from the sequence\'s n-grams, and rejoins the prediction', () => {
    const native = join(packageRoot, 'native');
    const exe = join(dir, 'draft_prediction_test');
    execFileSync(cxx, ['-std=c++17', '-O1', '-Wall', '-Wextra', '-Werror', '-I', join(native, 'test', 'stub'),
      join(native, 'test', 'draft_prediction_test.cpp'), join(native, 'src', 'draft_prediction.cpp'),
      join(native, 'src', 'draft_ngram.cpp'), '-o', exe], { stdio: 'pipe' });
    const run = spawnSync(exe, [], { encoding: 'utf8' });
    expect(run.stdout).toBe('draft_prediction: all checks passed\n');
    expect(run.status).toBe(0);
  });
});
