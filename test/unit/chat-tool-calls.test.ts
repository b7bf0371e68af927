import { describe, expect, it } from 'vitest';
import { ToolCallStreamParser, type ParsedDelta } from '../../backend/chat/tool-calls.js';
import type { ToolCallFormat } from '../../backend/chat/chat-types.js';
import { FIXTURES, type ToolCallFixture } from './chat-tool-call-fixtures.js';
import { seededRandom } from '../../backend/bench/prompts.js';

interface Result {
  deltas: ParsedDelta[];
  content: string;
  calls: Array<{ id: string; name: string; arguments: string }>;
}

function run(format: ToolCallFormat, pieces: string[], toolsEnabled = true): Result {
  const p = new ToolCallStreamParser(format, { toolsEnabled });
  const deltas: ParsedDelta[] = [];
  for (const piece of pieces) deltas.push(...p.push(piece));
  deltas.push(...p.end());

  // Rebuild calls from the deltas, checking their order: tool_call, then its arguments.
  const calls: Result['calls'] = [];
  for (const d of deltas) {
    if (d.type === 'tool_call') {
      expect(d.index).toBe(calls.length);
      calls.push({ id: d.id, name: d.name, arguments: '' });
    } else if (d.type === 'tool_args') {
      expect(d.index).toBe(calls.length - 1);
      calls[d.index]!.arguments += d.text;
    } else {
      expect(d.text).not.toBe('');
    }
  }
  expect(p.calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }))).toEqual(calls);
  const content = deltas.map((d) => (d.type === 'content' ? d.text : '')).join('');
  return { deltas, content, calls };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function check(f: ToolCallFixture, r: Result): void {
  expect(r.content).toBe(f.content);
  expect(r.calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) as unknown }))).toEqual(
    f.calls.map((c) => ({ name: c.name, arguments: c.arguments })),
  );
  const ids = r.calls.map((c) => c.id);
  expect(new Set(ids).size).toBe(ids.length);
  r.calls.forEach((c, i) => {
    const want = f.calls[i]!.id;
    if (want) expect(c.id).toBe(want);
    else expect(c.id).toMatch(f.format === 'mistral' ? /^[A-Za-z0-9]{9}$/ : /^call_[A-Za-z0-9]{24}$/);
  });
  for (const d of r.deltas) {
    if (d.type === 'content') expect(LONE_SURROGATE.test(d.text)).toBe(false);
  }
}

// A seeded generator so a failing split can be replayed.
const rng = seededRandom;

function randomSplit(text: string, rand: () => number): string[] {
  const pieces: string[] = [];
  let i = 0;
  while (i < text.length) {
    const n = 1 + Math.floor(rand() * 8);
    pieces.push(text.slice(i, i + n));
    i += n;
  }
  return pieces;
}

describe('ToolCallStreamParser fixtures', () => {
  for (const f of FIXTURES) {
    describe(`${f.format}: ${f.name}`, () => {
      it('whole', () => check(f, run(f.format, [f.input])));
      it('one UTF-16 unit at a time', () => check(f, run(f.format, [...f.input].flatMap((c) => c.split('')))));
      it('cut at every position (two pushes)', () => {
        for (let i = 0; i <= f.input.length; i++) check(f, run(f.format, [f.input.slice(0, i), f.input.slice(i)]));
      });
      it('random splits', () => {
        const rand = rng(f.input.length * 7919 + f.name.length);
        for (let k = 0; k < 50; k++) check(f, run(f.format, randomSplit(f.input, rand)));
      });
    });
  }
});

describe('ToolCallStreamParser streaming behaviour', () => {
  it('holds back a partial tag only while it can still become one', () => {
    const p = new ToolCallStreamParser('hermes');
    // The space before a possible tag waits with it: whitespace before a call is not content.
    expect(p.push('Hello <tool')).toEqual([{ type: 'content', text: 'Hello' }]);
    expect(p.push('_ca')).toEqual([]);
    expect(p.push('x')).toEqual([{ type: 'content', text: ' <tool_cax' }]);
    expect(p.push(' <')).toEqual([]);
    expect(p.end()).toEqual([{ type: 'content', text: ' <' }]);
  });

  it('emits a call as soon as its closing tag arrives, before end()', () => {
    const p = new ToolCallStreamParser('hermes');
    expect(p.push('<tool_call>{"name": "f", "arguments": {"a": [1, 2]}}')).toEqual([]);
    const d = p.push('</tool_call>');
    expect(d.map((x) => x.type)).toEqual(['tool_call', 'tool_args']);
    // In the template's JSON style (python separators by default).
    expect(d[1]).toEqual({ type: 'tool_args', index: 0, text: '{"a": [1, 2]}' });
    expect(p.calls).toHaveLength(1);
    expect(p.end()).toEqual([]);
  });

  it('releases a broken call as content once its closing tag shows it cannot be whole', () => {
    const p = new ToolCallStreamParser('hermes');
    expect(p.push('a <tool_call>{"name": "f", "arguments": {"x": 1}')).toEqual([{ type: 'content', text: 'a' }]);
    expect(p.push('</tool_call> b')).toEqual([{ type: 'content', text: ' <tool_call>{"name": "f", "arguments": {"x": 1}</tool_call> b' }]);
  });

  it('mistral and llama python_tag JSON calls complete when their JSON closes', () => {
    const m = new ToolCallStreamParser('mistral');
    expect(m.push('[TOOL_CALLS][{"name": "f", "arguments": {}}')).toEqual([]);
    expect(m.push(']').map((x) => x.type)).toEqual(['tool_call', 'tool_args']);
    const l = new ToolCallStreamParser('llama3');
    expect(l.push('<|python_tag|>{"name": "f", "parameters": {"x": "}"}').map((x) => x.type)).toEqual([]);
    expect(l.push('}').map((x) => x.type)).toEqual(['tool_call', 'tool_args']);
  });

  it('llama3 rejects a bare JSON answer as soon as its first key shows', () => {
    const p = new ToolCallStreamParser('llama3');
    expect(p.push('  {"na')).toEqual([]);
    expect(p.push('rrative": "once upon')).toEqual([{ type: 'content', text: '  {"narrative": "once upon' }]);
  });

  it('keeps surrogate pairs together in content deltas', () => {
    const p = new ToolCallStreamParser('hermes');
    const emoji = '😀';
    expect(p.push('a' + emoji[0])).toEqual([{ type: 'content', text: 'a' }]);
    expect(p.push(emoji[1] + 'b')).toEqual([{ type: 'content', text: emoji + 'b' }]);
  });

  it('passes everything through as content when tools are off or the format is none', () => {
    const text = '<tool_call>{"name": "f", "arguments": {}}</tool_call>[TOOL_CALLS]{"name": "g", "parameters": {}}';
    for (const [format, enabled] of [['hermes', false], ['none', true], ['mistral', false]] as const) {
      const r = run(format, randomSplit(text, rng(3)), enabled);
      expect(r.content).toBe(text);
      expect(r.calls).toEqual([]);
    }
  });

  it('streams a long argument text in small pieces', () => {
    const body = 'line with "quotes" and {braces} and \\\\ backslashes\n'.repeat(400);
    const input = `<tool_call>${JSON.stringify({ name: 'write_file', arguments: { path: 'big.txt', text: body } })}</tool_call>`;
    const r = run('hermes', randomSplit(input, rng(11)));
    expect(r.content).toBe('');
    expect(JSON.parse(r.calls[0]!.arguments)).toEqual({ path: 'big.txt', text: body });
  });

  it('gives unique ids across many calls', () => {
    const input = Array.from({ length: 200 }, (_, i) => `<tool_call>{"name": "f${i}", "arguments": {}}</tool_call>`).join('');
    const r = run('hermes', [input]);
    expect(r.calls).toHaveLength(200);
    expect(new Set(r.calls.map((c) => c.id)).size).toBe(200);
  });

  it('refuses push() after end()', () => {
    const p = new ToolCallStreamParser('hermes');
    p.end();
    expect(() => p.push('x')).toThrow(/after end/);
  });
});

describe('ToolCallStreamParser on arbitrary text', () => {
  // Fragments that stress the parser: tags, partial tags, brackets, quotes, escapes, surrogates.
  const FRAGMENTS = ['<tool_call>', '</tool_call>', '<tool_', '[TOOL_CALLS]', '[ARGS]', '[CALL_ID]', '<|python_tag|>',
    '{', '}', '[', ']', '"', '\\', ':', ',', ' ', '\n', '"name"', '"arguments"', '"parameters"', '"f"', '{}', 'abc',
    '😀', '日本', '.call(', ')', 'x="y"', '"type": "function"'];

  it('never throws, and splitting never changes the result', () => {
    const rand = rng(20240601);
    for (let n = 0; n < 400; n++) {
      let text = '';
      const len = 1 + Math.floor(rand() * 30);
      for (let i = 0; i < len; i++) text += FRAGMENTS[Math.floor(rand() * FRAGMENTS.length)];
      for (const format of ['hermes', 'llama3', 'mistral'] as const) {
        const whole = run(format, [text]);
        const strip = (r: Result) => ({ content: r.content, calls: r.calls.map((c) => [c.name, c.arguments]) });
        expect(strip(run(format, randomSplit(text, rand)))).toEqual(strip(whole));
        expect(strip(run(format, text.split('')))).toEqual(strip(whole));
        if (whole.calls.length === 0) expect(whole.content).toBe(text);
      }
    }
  });
});
