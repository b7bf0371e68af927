// Next-edit prompt layouts, golden prompts per format (Zeta, Instinct, generic), the format chosen
// by model name, request text kept out of control-token parsing, and the region read back out of
// answers (edited, unchanged, unparsed).
import { describe, expect, it } from 'vitest';
import type { NextEditRequest } from '../../contract/next-edit.js';
import { buildNextEditPrompt, chooseFormat, parseNextEditAnswer } from '../../backend/next-edit/formats.js';

const req: NextEditRequest = {
  file: 'src/calc.ts', language: 'typescript',
  before: 'export class Calc {\n', region: '  add(a: number, b: number) {\n    return a + b;\n  }\n', after: '}\n',
  cursor: 9, start_of_file: true,
  edits: [
    { file: 'src/calc.ts', diff: '@@ -2,1 +2,1 @@\n-  plus(a, b) {\n+  add(a, b) {' },
    { file: 'src/calc.ts', diff: '@@ -2,1 +2,1 @@\n-  add(a, b) {\n+  add(a: number, b: number) {\n' },
  ],
  context: [{ file: 'src/main.ts', text: 'new Calc().add(1, 2);' }],
};

const zetaGolden = [
  '### Instruction:',
  'You are a code completion assistant. Read the user\'s recent edits, then rewrite the excerpt they give you with the edits they are likely to make next inside it, taking the cursor position into account.',
  '',
  '### User Edits:',
  '',
  'User edited "src/calc.ts":',
  '```diff',
  '@@ -2,1 +2,1 @@',
  '-  plus(a, b) {',
  '+  add(a, b) {',
  '```',
  '',
  'User edited "src/calc.ts":',
  '```diff',
  '@@ -2,1 +2,1 @@',
  '-  add(a, b) {',
  '+  add(a: number, b: number) {',
  '```',
  '',
  '### User Excerpt:',
  '',
  '```src/calc.ts',
  '<|start_of_file|>',
  'export class Calc {',
  '<|editable_region_start|>',
  '  add(a: <|user_cursor_is_here|>number, b: number) {',
  '    return a + b;',
  '  }',
  '<|editable_region_end|>',
  '}',
  '```',
  '',
  '### Response:',
  '```src/calc.ts',
  '<|start_of_file|>',
  'export class Calc {',
  '<|editable_region_start|>',
  '',
].join('\n');

describe('zeta', () => {
  const p = buildNextEditPrompt('zeta', req);
  it('lays out the golden prompt, ending where the region starts in the response', () => {
    expect(p.kind).toBe('raw');
    if (p.kind !== 'raw') return;
    expect(p.segments.map((s) => s.text).join('')).toBe(zetaGolden);
    expect(p.prediction).toBe(`${req.region}<|editable_region_end|>`);
    expect(p.stop).toEqual(['<|editable_region_end|>']);
  });

  it('keeps every text of the request in plain segments, the markers in the template\'s', () => {
    if (p.kind !== 'raw') throw new Error('raw expected');
    const plain = p.segments.filter((s) => s.plain).map((s) => s.text).join('');
    for (const t of [req.file, req.before!, req.after!, '  add(a: ', 'number, b: number)', req.edits![0]!.diff]) expect(plain).toContain(t);
    const marks = p.segments.filter((s) => !s.plain).map((s) => s.text).join('');
    expect(marks).toContain('<|editable_region_start|>');
    expect(marks).not.toContain('return a + b');
  });

  it('a region holding the end marker as text is plain text and stops nothing', () => {
    const tricky = { ...req, region: 'const s = "<|editable_region_end|>";\n', cursor: null };
    const q = buildNextEditPrompt('zeta', tricky);
    if (q.kind !== 'raw') throw new Error('raw expected');
    expect(q.stop).toEqual([]);
    expect(q.segments.some((s) => s.plain && s.text.includes('"<|editable_region_end|>"'))).toBe(true);
    expect(q.segments.some((s) => !s.plain && s.text.includes('const s'))).toBe(false);
    const answer = 'const s = "<|editable_region_end|>";\nconst t = 1;\n<|editable_region_end|>\n}\n```';
    expect(parseNextEditAnswer('zeta', tricky, answer, { stopped: false, cut: false })).toEqual({ outcome: 'edited', region: 'const s = "<|editable_region_end|>";\nconst t = 1;\n' });
  });

  it('reads the region: edited, unchanged (cursor marker dropped), unparsed', () => {
    const edited = '  add(a: number, b: number): number {\n    return a + b;\n  }\n';
    expect(parseNextEditAnswer('zeta', req, edited, { stopped: true, cut: false })).toEqual({ outcome: 'edited', region: edited });
    const same = '  add(a: <|user_cursor_is_here|>number, b: number) {\n    return a + b;\n  }\n';
    expect(parseNextEditAnswer('zeta', req, same, { stopped: true, cut: false })).toEqual({ outcome: 'unchanged', region: req.region });
    expect(parseNextEditAnswer('zeta', req, '  add(a', { stopped: false, cut: true }).outcome).toBe('unparsed');
  });

  it('a region without a last line end gets it back without one', () => {
    const r = { ...req, region: 'x = 1', cursor: null, after: '' };
    const q = buildNextEditPrompt('zeta', r);
    expect(q.prediction).toBe('x = 1\n<|editable_region_end|>');
    expect(parseNextEditAnswer('zeta', r, 'x = 2\n', { stopped: true, cut: false })).toEqual({ outcome: 'edited', region: 'x = 2' });
  });
});

describe('instinct', () => {
  const p = buildNextEditPrompt('instinct', req);
  it('lays out the golden user prompt: context, edits newest first, the marked excerpt', () => {
    if (p.kind !== 'chat') throw new Error('chat expected');
    expect(p.system).toContain('<|editable_region_start|> and <|editable_region_end|>');
    expect(p.system).toContain('<|context_file|>');
    const prefix = 'Use the user excerpt, the user edits and the snippets to see what the developer intends, and update the editable region of the excerpt with the changes they would make next: code added, removed or modified.';
    expect(p.user).toBe([
      prefix, '', '### Context:', '<|context_file|>: src/main.ts', '<|snippet|>', 'new Calc().add(1, 2);', '',
      '### User Edits:', '',
      'User edited file "src/calc.ts"', '', '```diff', '@@ -2,1 +2,1 @@', '-  add(a, b) {', '+  add(a: number, b: number) {', '```', '',
      'User edited file "src/calc.ts"', '', '```diff', '@@ -2,1 +2,1 @@', '-  plus(a, b) {', '+  add(a, b) {', '```', '',
      '### User Excerpt:', 'src/calc.ts', '',
      'export class Calc {', '<|editable_region_start|>', '  add(a: <|user_cursor_is_here|>number, b: number) {', '    return a + b;', '  }',
      '<|editable_region_end|>', '}', '```', '### Response:',
    ].join('\n'));
    expect(p.prediction).toBe(req.region);
  });

  it('reads the region bare or fenced; a cut answer is unparsed', () => {
    const edited = '  add(a: number, b: number): number {\n    return a + b;\n  }\n';
    expect(parseNextEditAnswer('instinct', req, edited, { stopped: false, cut: false })).toEqual({ outcome: 'edited', region: edited });
    expect(parseNextEditAnswer('instinct', req, `\`\`\`typescript\n${edited}\`\`\``, { stopped: false, cut: false }).region).toBe(edited);
    expect(parseNextEditAnswer('instinct', req, req.region, { stopped: false, cut: false }).outcome).toBe('unchanged');
    expect(parseNextEditAnswer('instinct', req, edited, { stopped: false, cut: true }).outcome).toBe('unparsed');
  });
});

describe('generic', () => {
  const p = buildNextEditPrompt('generic', req);
  it('lays out the golden user prompt and predicts the region in a fence', () => {
    if (p.kind !== 'chat') throw new Error('chat expected');
    expect(p.user).toBe([
      'Other files:', '', 'src/main.ts:', '```', 'new Calc().add(1, 2);', '```', '',
      'Recent edits, oldest first:', '',
      'src/calc.ts:', '```diff', '@@ -2,1 +2,1 @@', '-  plus(a, b) {', '+  add(a, b) {', '```', '',
      'src/calc.ts:', '```diff', '@@ -2,1 +2,1 @@', '-  add(a, b) {', '+  add(a: number, b: number) {', '```', '',
      'Current file: src/calc.ts (typescript)', '',
      '```typescript', 'export class Calc {', '<|editable_region_start|>', '  add(a: <|user_cursor_is_here|>number, b: number) {', '    return a + b;', '  }',
      '<|editable_region_end|>', '}', '```', '',
      'Rewrite the editable region.',
    ].join('\n'));
    expect(p.prediction).toBe(`\`\`\`typescript\n${req.region}\`\`\``);
  });

  it('reads the first fenced block; none is unparsed', () => {
    const edited = '  add(a: number, b: number): number {\n    return a + b;\n  }\n';
    expect(parseNextEditAnswer('generic', req, `Here:\n\`\`\`ts\n${edited}\`\`\`\nDone.`, { stopped: false, cut: false })).toEqual({ outcome: 'edited', region: edited });
    expect(parseNextEditAnswer('generic', req, edited, { stopped: false, cut: false }).outcome).toBe('unparsed');
  });
});

describe('chooseFormat', () => {
  it('follows the request, else the model name', () => {
    expect(chooseFormat('instinct', ['zeta-7b'])).toBe('instinct');
    expect(chooseFormat('auto', ['Zeta', 'zeta.Q4_K_M.gguf'])).toBe('zeta');
    expect(chooseFormat(undefined, ['zed-industries/zeta-GGUF'])).toBe('zeta');
    expect(chooseFormat('auto', ['', 'instinct-Q8_0.gguf'])).toBe('instinct');
    expect(chooseFormat('auto', ['Qwen2.5 Coder 7B Instruct'])).toBe('generic');
  });
});
