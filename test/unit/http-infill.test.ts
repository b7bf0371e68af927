import { describe, expect, it } from 'vitest';
import { buildInfillPrompt, fimOrderFor, SuffixRepeatStop } from '../../backend/infill/infill-prompt.js';
import { prefixWindowStart, windowPrefix } from '../../backend/infill/prefix-window.js';
import { codeLines, seedOf } from '../../backend/bench/prompts.js';

const fim = { prefix: 1, suffix: 3, middle: 2, pad: 4, rep: -1, sep: -1 };

function commonPrefix(a: number[], b: number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

describe('infill prompt', () => {
  it('lays out [BOS] extra [PRE] prefix prompt [SUF] suffix [MID]', () => {
    const p = buildInfillPrompt(fim, [9], { extra: [{ header: [50], text: [51, 52] }], repoHeader: [], prefix: [10, 11], suffix: [20, 21], prompt: [12] }, { batch: 512, ctx: 4096, maxTokens: 64 });
    expect(p.tokens).toEqual([9, 50, 51, 52, 1, 10, 11, 12, 3, 20, 21, 2]);
    expect(p.truncated).toBe(false);
  });

  it('SPM order: [BOS] extra [PRE] [SUF] suffix [MID] prefix prompt', () => {
    const p = buildInfillPrompt(fim, [9], { extra: [{ header: [50], text: [51, 52] }], repoHeader: [], prefix: [10, 11], suffix: [20, 21], prompt: [12] }, { batch: 512, ctx: 4096, maxTokens: 64 }, 'spm');
    expect(p.tokens).toEqual([9, 50, 51, 52, 1, 3, 20, 21, 2, 10, 11, 12]);
  });

  it('SPM keeps all but the typed tokens of the previous keystroke; PSM re-reads the suffix', () => {
    const suffix = Array.from({ length: 60 }, (_, i) => 300 + i);
    const before = [100, 101, 102];
    const after = [100, 101, 102, 103];
    const run = (order: 'psm' | 'spm', prefix: number[]) =>
      buildInfillPrompt(fim, [], { extra: [], repoHeader: [], prefix, suffix, prompt: [] }, { batch: 512, ctx: 4096, maxTokens: 8 }, order).tokens;
    const spmA = run('spm', before); const spmB = run('spm', after);
    const psmA = run('psm', before); const psmB = run('psm', after);
    // Tokens a keystroke must read: those after the common prefix with the previous prompt.
    expect(spmB.length - commonPrefix(spmA, spmB)).toBe(1);
    expect(psmB.length - commonPrefix(psmA, psmB)).toBe(1 + 1 + suffix.length + 1);
  });

  it('SPM: the suffix kept does not shrink as the cursor line (prompt) grows, so its KV stays', () => {
    const suffix = Array.from({ length: 400 }, (_, i) => 300 + i);
    const run = (prompt: number[]) =>
      buildInfillPrompt(fim, [], { extra: [], repoHeader: [], prefix: [100, 101], suffix, prompt }, { batch: 512, ctx: 4096, maxTokens: 8 }, 'spm').tokens;
    const a = run([50]);
    const b = run([50, 51, 52]);
    expect(b.length - commonPrefix(a, b)).toBe(2);
    expect(a.slice(2, 2 + 126)).toEqual(suffix.slice(0, 126)); // 512/4 - 2 tokens of suffix
  });

  it('picks SPM for model families trained with it, PSM for the rest, unless the setting says', () => {
    const meta = (pre: string, arch = 'llama', model = 'gpt2') => ({ 'tokenizer.ggml.pre': pre, 'general.architecture': arch, 'tokenizer.ggml.model': model });
    expect(fimOrderFor(meta('starcoder'), 'auto')).toBe('spm');
    expect(fimOrderFor(meta('', 'starcoder2'), 'auto')).toBe('spm');
    expect(fimOrderFor(meta('default', 'llama', 'llama'), 'auto')).toBe('spm'); // CodeLlama's <PRE>/<SUF>/<MID>
    expect(fimOrderFor(meta('', 'gemma', 'llama'), 'auto')).toBe('spm');
    expect(fimOrderFor(meta('qwen2', 'qwen2'), 'auto')).toBe('psm');
    expect(fimOrderFor(meta('deepseek-coder'), 'auto')).toBe('psm');
    expect(fimOrderFor(meta('starcoder'), 'psm')).toBe('psm');
    expect(fimOrderFor(meta('qwen2', 'qwen2'), 'spm')).toBe('spm');
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

describe('prefix window', () => {
  // One token per char: a window's tokens give back its text, and so its start.
  const charTokens = async (s: string) => Array.from(s, (c) => c.charCodeAt(0));
  const file = `${codeLines(seedOf('window-test'), 200).join('\n')}\n`;
  const startOf = async (text: string, budget: number) => {
    const w = await windowPrefix(text, await charTokens(text), budget, charTokens);
    expect(w.length).toBeLessThanOrEqual(budget);
    return text.length - w.length;
  };

  it('keeps a prefix that fits whole', async () => {
    expect(await startOf(file, file.length)).toBe(0);
  });

  it('starts at a line and stays there while the user types at the end', async () => {
    const budget = 2000;
    const starts: number[] = [];
    for (let typed = 0; typed < 40; typed++) starts.push(await startOf(file + 'x'.repeat(3 * typed), budget));
    // 40 keystrokes, 120 chars: the start moves only when the earliest allowed point passes its
    // anchor line (anchors are ~8 lines apart), not at every keystroke as a last-N-tokens window does.
    expect(new Set(starts).size).toBeLessThanOrEqual(2);
    for (const s of starts) expect(file[s - 1]).toBe('\n');
    // At least three quarters of the budget is used (less one line).
    expect(file.length - starts[0]!).toBeGreaterThan(budget * 0.75 - 120);
    // llama-server's window (the last `budget` tokens) would have moved at every keystroke.
  });

  it('keeps its start in the document when the editor drops lines at the top', async () => {
    const budget = 2000;
    const lines = file.split('\n');
    const before = await startOf(file, budget);
    const dropped = lines.slice(0, 5).join('\n').length + 1;
    const after = await startOf(lines.slice(5).join('\n') + 'y', budget);
    expect(after + dropped).toBe(before);
  });

  it('moves past lines until the re-tokenised window fits', async () => {
    // A tokenizer denser than the whole-prefix average near the start: the first guess is over budget.
    const dense = async (s: string) => Array.from(s, (c) => c.charCodeAt(0)).flatMap((t, i) => (i < s.length / 2 ? [t, t] : [t]));
    const w = await windowPrefix(file, await charTokens(file), 1000, dense);
    expect(w.length).toBeLessThanOrEqual(1000);
    expect(w.length).toBeGreaterThan(500);
  });

  it('falls back to a mid-line start when no line starts in range', () => {
    const oneLine = 'a'.repeat(500);
    expect(prefixWindowStart(oneLine, 100, 200)).toBe(100);
    expect(prefixWindowStart('ab\ncd\nef', 1, 5)).toBeGreaterThanOrEqual(3);
  });

  it('reports a windowed prefix as truncated', () => {
    const p = buildInfillPrompt(fim, [], { extra: [], repoHeader: [], prefix: [10], prefixCut: true, suffix: [], prompt: [] }, { batch: 512, ctx: 4096, maxTokens: 8 });
    expect(p.tokens).toEqual([1, 10, 3, 2]);
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
