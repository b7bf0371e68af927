// bench-engine --workload edit --spec mtp: the engine drafts with the model's MTP head and
// llama-speculative-simple with draft-mtp, both with the same limits; the other modes keep the
// head off, so they measure what they name; a drafter that reads the hidden states runs as its own
// kind on llama.cpp's side too.
import { describe, expect, it } from 'vitest';
import { llamaSpeculativeArgs, speculativeOptions } from '../../backend/bench/engine-spec-bench.js';

const base = { draftModel: '/d.gguf', draftMax: 6, draftPMin: 0.25 };

describe('the edit bench\'s drafting modes', () => {
  it('mtp: the head on both sides, with the same draft max and p-min', () => {
    expect(speculativeOptions({ ...base, mode: 'mtp' })).toEqual({ mtp: 'on', draftMax: 6, draftPMin: 0.25 });
    expect(llamaSpeculativeArgs({ ...base, mode: 'mtp' })).toEqual(['--spec-type', 'draft-mtp', '--spec-draft-n-max', '6', '--spec-draft-p-min', '0.25']);
  });

  it('ngram and draft: the head off', () => {
    expect(speculativeOptions({ ...base, mode: 'ngram' })).toEqual({ ngram: true, draftMax: 6, mtp: 'off' });
    expect(speculativeOptions({ ...base, mode: 'draft' })).toMatchObject({ draftModel: '/d.gguf', mtp: 'off' });
    expect(llamaSpeculativeArgs({ ...base, mode: 'draft' })).toContain('draft-simple');
  });

  it('draft with an EAGLE-3 or DFlash drafter: llama.cpp drafts with the same kind', () => {
    expect(llamaSpeculativeArgs({ ...base, mode: 'draft', draftKind: 'eagle3' }).slice(0, 4)).toEqual(['--spec-type', 'draft-eagle3', '--spec-draft-model', '/d.gguf']);
    expect(llamaSpeculativeArgs({ ...base, mode: 'draft', draftKind: 'dflash' })[1]).toBe('draft-dflash');
    expect(llamaSpeculativeArgs({ ...base, mode: 'draft', draftKind: 'model' })[1]).toBe('draft-simple');
  });
});
