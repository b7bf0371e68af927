// A prediction's combined draft (native/src/draft_prediction.cpp with draft_ngram.cpp) built on its
// own with the system's C++ compiler against a one-line llama.h stub, and run:
// native/test/draft_prediction_test.cpp holds the checks (the prediction's tokens while the answer
// follows them, the sequence's own n-grams once it leaves them or where their draft stops short,
// the prediction again as soon as the answer rejoins it).
import { describe, expect, it } from 'vitest';
import { haveCompiler, runNativeTest } from '../helpers/native-pure-test.js';

describe.skipIf(!haveCompiler)('CombinedDraft (native, pure)', () => {
  it('drafts from the prediction and from the sequence\'s n-grams, and rejoins the prediction', () => {
    const run = runNativeTest('draft_prediction', ['draft_prediction.cpp', 'draft_ngram.cpp']);
    expect(run.stdout).toBe('draft_prediction: all checks passed\n');
    expect(run.status).toBe(0);
  });
});
