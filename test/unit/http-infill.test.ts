import { describe, expect, it } from 'vitest';
import { buildInfillPrompt, SuffixRepeatStop } from '../../backend/http/infill-prompt.js';

const fim = { prefix: 1, suffix: 3, middle: 2, pad: 4, rep: -1, sep: -1 };

describe('infill prompt', () => {
  it('lays out [BOS] extra [PRE] prefix prompt [SUF] suffix [MID]', () => {
    const p = buildInfillPrompt(fim, [9], { extra: [{ header: [50], text: [51, 52] }], repoHeader: [], prefix: [10, 11], suffix: [20, 21], prompt: [12] }, { batch: 512, ctx: 4096, maxTokens: 64 });
    expect(p.tokens).toEqual([9, 50, 51, 52, 1, 10, 11, 12, 3, 20, 21, 2]);
    expect(p.truncated).toBe(false);
  });

  it('uses repo and file separator tokens when the vocabulary has them', () => {
    const withRepo = { ...fim, rep: 7, sep: 8 };
    const p = buildInfillPrompt(withRepo, [], { extra: [{ header: [60], text: [61] }], repoHeader: [70], prefix: [10], suffix: [], prompt: [] }, { batch: 512, ctx: 4096, maxTokens: 64 });
    expect(p.tokens).toEqual([7, 70, 8, 60, 61, 1, 10, 3, 2]);
  });

  it('keeps the end of the prefix and the start of the suffix within the batch split', () => {
    const prefix = Array.from({ length: 100 }, (_, i) => 100 + i);
    const suffix = Array.from({ length: 100 }, (_, i) => 300 + i);
    const p = buildInfillPrompt(fim, [], { extra: [], repoHeader: [], prefix, suffix, prompt: [] }, { batch: 40, ctx: 4096, maxTokens: 8 });
    // 3/4 of 40 = 30 prefix tokens (the last ones); 40/4 - 2 = 8 suffix tokens (the first ones).
    expect(p.tokens).toEqual([1, ...prefix.slice(70), 3, ...suffix.slice(0, 8), 2]);
    expect(p.truncated).toBe(true);
  });
});

describe('SuffixRepeatStop', () => {
  const suffix = ')\n  return total;\n}\n';

  it('stops where the model starts writing the code after the cursor', () => {
    const s = new SuffixRepeatStop(suffix);
    let out = '';
    for (const piece of ['x', ')\n  total += 1;\n', '  retu', 'rn total;\n', '}\n']) out += s.push(piece);
    out += s.end();
    expect(s.stopped).toBe(true);
    expect(out).toBe('x)\n  total += 1;\n');
  });

  it('does not stop on a lone closing brace unless the next suffix line follows', () => {
    const s = new SuffixRepeatStop('\n}\nexport default f;\n');
    let out = s.push('if (a) {\n  b();\n}\nc();\n');
    expect(s.stopped).toBe(false);
    out += s.push('}\nexport default f;\n');
    expect(s.stopped).toBe(true);
    expect(out).toBe('if (a) {\n  b();\n}\nc();\n');
  });

  it('passes everything through when nothing repeats', () => {
    const s = new SuffixRepeatStop(suffix);
    const out = s.push('a\nb\n') + s.push('c') + s.end();
    expect(out).toBe('a\nb\nc');
    expect(s.stopped).toBe(false);
  });
});
