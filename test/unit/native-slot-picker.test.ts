// The engine's pure slot policy (native/src/slot_picker.cpp) built on its own with the system's
// C++ compiler against a one-line llama.h stub, and run: native/test/slot_picker_test.cpp holds
// the checks (a session's state goes into an idle slot: the one it supersedes, else an empty
// one, else the least recently used; never a busy one nor one a queued request needs).
import { describe, expect, it } from 'vitest';
import { haveCompiler, runNativeTest } from '../helpers/native-pure-test.js';

describe.skipIf(!haveCompiler)('PickRestoreSlot (native, pure)', () => {
  it('picks the slot a loaded session goes into, or none (the park)', () => {
    const run = runNativeTest('slot_picker', ['slot_picker.cpp']);
    expect(run.stdout).toBe('slot_picker: all checks passed\n');
    expect(run.status).toBe(0);
  });
});
