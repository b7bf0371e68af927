// StateBuffer's kept blocks (native/src/state_buffer.cpp) built on their own with the system's C++
// compiler, and run: native/test/state_buffer_test.cpp holds the checks (a freed block serves the
// next state that fits, the smallest such; fresh ones reserved twice as large; 256 MiB kept at
// most; blocks under 1 MiB never kept; freed on one thread, taken on another).
import { describe, expect, it } from 'vitest';
import { haveCompiler, runNativeTest } from '../helpers/native-pure-test.js';

describe.skipIf(!haveCompiler)('StateBuffer (native, pure)', () => {
  it('keeps freed blocks for the next state that fits, within its allowance', () => {
    const run = runNativeTest('state_buffer', ['state_buffer.cpp']);
    expect(run.stdout).toBe('state_buffer: all checks passed\n');
    expect(run.status).toBe(0);
  });
});
