// The streaming <think> splitter: reasoning vs content for every way the text can be cut.
import { describe, expect, it } from 'vitest';
import {
  promptOpensThinking, reasoningSplitterFor, ReasoningSplitter, type SplitDelta,
} from '../../backend/chat/reasoning.js';

/** Runs the pieces through a splitter; returns every delta (push and end) in order, adjacent ones of a kind joined. */
function run(pieces: readonly string[], startInThinking = false): SplitDelta[] {
  const s = new ReasoningSplitter({ startInThinking });
  const out: SplitDelta[] = [];
  const add = (ds: SplitDelta[]) => {
    for (const d of ds) {
      expect(d.text).not.toBe(''); // never an empty piece
      const last = out.at(-1);
      if (last?.type === d.type) last.text += d.text;
      else out.push({ ...d });
    }
  };
  for (const p of pieces) add(s.push(p));
  add(s.end());
  return out;
}

/** The joined reasoning and content, and the order their first pieces came in. */
function joined(deltas: readonly SplitDelta[]) {
  const reasoning = deltas.filter((d) => d.type === 'reasoning').map((d) => d.text).join('');
  const content = deltas.filter((d) => d.type === 'content').map((d) => d.text).join('');
  // Once content has started, no reasoning comes after it.
  const firstContent = deltas.findIndex((d) => d.type === 'content');
  const lastReasoning = deltas.map((d) => d.type).lastIndexOf('reasoning');
  return { reasoning, content, ordered: firstContent < 0 || lastReasoning < firstContent };
}

/** Every cut of `text` into two pieces, and one piece per character. */
function cuts(text: string): string[][] {
  const out: string[][] = [[text], [...text]];
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

const R1 = '<think>\nplan\n</think>\n\nanswer';

describe('ReasoningSplitter', () => {
  it('splits a thinking block from the answer and trims the newlines around the tags', () => {
    expect(run([R1])).toEqual([{ type: 'reasoning', text: 'plan' }, { type: 'content', text: 'answer' }]);
  });

  it('gives the same split for a cut at every position, including inside <think> and </think>', () => {
    const open = R1.indexOf('<think>');
    const close = R1.indexOf('</think>');
    // The two-piece cuts below include every position inside both tags.
    expect(open).toBe(0);
    expect(close).toBeGreaterThan(0);
    for (const pieces of cuts(R1)) {
      expect(joined(run(pieces)), JSON.stringify(pieces)).toEqual({ reasoning: 'plan', content: 'answer', ordered: true });
    }
  });

  it('holds a tag cut into three pieces and a cut "<" that turns out not to be a tag', () => {
    expect(joined(run(['<t', 'hin', 'k>a</', 'thi', 'nk>b']))).toEqual({ reasoning: 'a', content: 'b', ordered: true });
    expect(joined(run(['<think>x </', 'b> y</think>z']))).toEqual({ reasoning: 'x </b> y', content: 'z', ordered: true });
  });

  it('streams thinking as it comes, holding back only whitespace and a possible </think>', () => {
    const s = new ReasoningSplitter();
    expect(s.push('<think>\nab')).toEqual([{ type: 'reasoning', text: 'ab' }]);
    expect(s.push(' cd')).toEqual([{ type: 'reasoning', text: ' cd' }]);
    expect(s.push('\n\n')).toEqual([]); // trimmed if </think> follows
    expect(s.push('e</')).toEqual([{ type: 'reasoning', text: '\n\ne' }]);
    expect(s.push('think>')).toEqual([]);
    expect(s.push('\n\nHi')).toEqual([{ type: 'content', text: 'Hi' }]);
    expect(s.push(' there\n')).toEqual([{ type: 'content', text: ' there\n' }]); // the answer is not held
    expect(s.end()).toEqual([]);
  });

  it('trims whitespace after <think>, before and after </think>, keeps it inside both parts', () => {
    const text = '  \n<think>\n\n  first\n\nsecond  \n</think>\n\n  the answer\n\nends here \n';
    expect(joined(run([text]))).toEqual({ reasoning: 'first\n\nsecond', content: 'the answer\n\nends here \n', ordered: true });
    for (const pieces of cuts(text)) {
      expect(joined(run(pieces)), JSON.stringify(pieces)).toEqual({ reasoning: 'first\n\nsecond', content: 'the answer\n\nends here \n', ordered: true });
    }
  });

  it('an empty thinking block gives no reasoning (Qwen3 with thinking off)', () => {
    expect(run(['<think>\n\n</think>\n\nHi'])).toEqual([{ type: 'content', text: 'Hi' }]);
  });

  it('starts inside thinking when the prompt ended with an open <think>', () => {
    const text = 'plan\n</think>\n\nanswer';
    for (const pieces of cuts(text)) {
      expect(joined(run(pieces, true)), JSON.stringify(pieces)).toEqual({ reasoning: 'plan', content: 'answer', ordered: true });
    }
    // Leading whitespace, and a model that writes the opening tag again anyway.
    expect(joined(run(['\n\n  plan</think>answer'], true))).toEqual({ reasoning: 'plan', content: 'answer', ordered: true });
    for (const pieces of cuts('<think>\nplan\n</think>\nanswer')) {
      expect(joined(run(pieces, true)), JSON.stringify(pieces)).toEqual({ reasoning: 'plan', content: 'answer', ordered: true });
    }
    // Forced open but the close comes at once: no reasoning.
    expect(run(['</think>\n\nanswer'], true)).toEqual([{ type: 'content', text: 'answer' }]);
  });

  it('keeps unterminated thinking as reasoning at the end (cut by max_tokens), also a held partial tag', () => {
    expect(run(['<think>\nstill going\n'])).toEqual([{ type: 'reasoning', text: 'still going' }]);
    expect(run(['<think>a </th'])).toEqual([{ type: 'reasoning', text: 'a </th' }]);
    expect(run(['plan step', ' 2\n'], true)).toEqual([{ type: 'reasoning', text: 'plan step 2' }]);
    expect(run(['<think>\n'])).toEqual([]);
    expect(run(['  <thi'], true)).toEqual([{ type: 'reasoning', text: '<thi' }]);
    expect(run([' \n'], true)).toEqual([]);
  });

  it('text without think tags is all content, delayed only while it could still be "<think"', () => {
    const s = new ReasoningSplitter();
    expect(s.push('Hello')).toEqual([{ type: 'content', text: 'Hello' }]);
    expect(s.push(' <think>x</think>')).toEqual([{ type: 'content', text: ' <think>x</think>' }]);
    expect(s.end()).toEqual([]);

    const t = new ReasoningSplitter();
    expect(t.push('<')).toEqual([]);
    expect(t.push('th')).toEqual([]);
    expect(t.push('e>')).toEqual([{ type: 'content', text: '<the>' }]);

    expect(run(['\n', '  Hi'])).toEqual([{ type: 'content', text: '\n  Hi' }]); // verbatim, leading whitespace too
    expect(run(['<thin'])).toEqual([{ type: 'content', text: '<thin' }]); // a cut prefix at the end is content
    expect(run(['\n\n'])).toEqual([{ type: 'content', text: '\n\n' }]);
    expect(run([])).toEqual([]);
  });

  it('only a <think> at the start opens thinking; later ones are content', () => {
    const text = 'Sure. <think>not thinking</think> done';
    for (const pieces of cuts(text)) expect(joined(run(pieces)), JSON.stringify(pieces)).toEqual({ reasoning: '', content: text, ordered: true });
    // After the thinking, another block is part of the answer.
    expect(joined(run(['<think>a</think>b <think>c</think>']))).toEqual({ reasoning: 'a', content: 'b <think>c</think>', ordered: true });
  });

  it('refuses pushes after end', () => {
    const s = new ReasoningSplitter();
    s.end();
    expect(() => s.push('x')).toThrow(/after end/);
  });
});

describe('promptOpensThinking and reasoningSplitterFor', () => {
  it('detects a prompt that ends inside <think> (with optional whitespace)', () => {
    expect(promptOpensThinking('<|im_start|>assistant\n<think>\n')).toBe(true);
    expect(promptOpensThinking('<｜Assistant｜><think>')).toBe(true);
    expect(promptOpensThinking('<think> \n\t')).toBe(true);
    expect(promptOpensThinking('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(false);
    expect(promptOpensThinking('<think>\nsome text')).toBe(false);
    expect(promptOpensThinking('<|im_start|>assistant\n')).toBe(false);
  });

  it("'none' passes everything through (no splitter); auto and deepseek split", () => {
    expect(reasoningSplitterFor('none', 'x<think>\n')).toBeNull();
    for (const f of ['auto', 'deepseek'] as const) {
      const s = reasoningSplitterFor(f, 'assistant\n<think>\n')!;
      expect([...s.push('a</think>b'), ...s.end()]).toEqual([{ type: 'reasoning', text: 'a' }, { type: 'content', text: 'b' }]);
      const plain = reasoningSplitterFor(f, 'assistant\n')!;
      expect([...plain.push('a</think>b'), ...plain.end()]).toEqual([{ type: 'content', text: 'a</think>b' }]);
    }
  });
});
