// The nextedit scenario's edited region: exactly k lines differ from the region, spread over it.
import { describe, expect, it } from 'vitest';
import { editedRegion } from '../../backend/bench/scenarios/nextedit.js';
import { codeLines, seedOf } from '../../backend/bench/prompts.js';

describe('editedRegion', () => {
  it.each([1, 3, 10])('changes %i lines of 40, the rest as they were', (k) => {
    const lines = codeLines(seedOf('nextedit/region'), 40);
    const edited = editedRegion(lines, k);
    expect(edited).toHaveLength(40);
    const changed = edited.map((l, i) => (l !== lines[i] ? i : -1)).filter((i) => i >= 0);
    expect(changed).toHaveLength(k);
    if (k > 1) expect(changed.at(-1)! - changed[0]!).toBeGreaterThan(20);
  });
});
