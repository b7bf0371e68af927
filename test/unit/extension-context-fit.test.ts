import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../contract/chat.js';
import { composeUserMessage, contextLabel } from '../../extension/context/compose.js';
import { fitToContext, MESSAGE_OVERHEAD, promptBudget } from '../../extension/context/fit.js';
import { ContextPlanner } from '../../extension/context/planner.js';
import type { ContextItem } from '../../contract/panel.js';

/** One token per whitespace-separated word: easy to reason about, like a real tokenizer in kind. */
const words = async (t: string): Promise<number> => t.split(/\s+/).filter(Boolean).length;

const item = (path: string, lines: number, extra: Partial<ContextItem> = {}): ContextItem => ({
  id: path, kind: 'file', path, range: null, language: 'ts', tokens: null,
  text: Array.from({ length: lines }, (_, i) => `line${i} a b c`).join('\n'), ...extra,
});

describe('context in a chat message', () => {
  it('puts each piece in a fenced block under a header saying where it is from, before the question', () => {
    const msg = composeUserMessage('Why?', [
      { kind: 'selection', path: 'src/a.ts', range: { startLine: 3, endLine: 4 }, language: 'ts', text: 'const x = 1;\nconst y = 2;' },
    ]);
    expect(msg).toBe('Selected code from src/a.ts (lines 3-4):\n```ts\nconst x = 1;\nconst y = 2;\n```\n\nWhy?');
    expect(contextLabel('b.py', { startLine: 7, endLine: 7 })).toBe('b.py (line 7)');
  });

  it('uses a fence longer than any backtick run in the text, so a file cannot close it early', () => {
    const msg = composeUserMessage('q', [{ kind: 'file', path: 'README.md', range: null, language: 'markdown', text: 'x\n````\ny' }]);
    expect(msg.startsWith('File README.md:\n`````markdown\nx\n````\ny\n`````')).toBe(true);
  });
});

describe('fitting a conversation into the context', () => {
  const conv: ChatMessage[] = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'one two three' }, { role: 'assistant', content: 'four five six' },
    { role: 'user', content: 'seven eight' }, { role: 'assistant', content: 'nine ten' },
    { role: 'user', content: 'the question' },
  ];
  const cost = (ms: ChatMessage[]): Promise<number> => Promise.all(ms.map(async (m) => (await words(m.content)) + MESSAGE_OVERHEAD)).then((a) => a.reduce((x, y) => x + y, 0));

  it('sends everything untouched when it fits, and counts it', async () => {
    const plan = await fitToContext(conv, [], 1000, words);
    expect(plan.messages).toEqual(conv);
    expect(plan.tokens).toBe(await cost(conv));
    expect([plan.note, plan.error, plan.dropped]).toEqual([null, null, 0]);
  });

  it('leaves out the oldest question with its answer first, keeps the system prompt, and says so', async () => {
    const budget = (await cost(conv)) - 1;
    const plan = await fitToContext(conv, [], budget, words);
    expect(plan.messages.map((m) => m.content)).toEqual(['be brief', 'seven eight', 'nine ten', 'the question']);
    expect(plan.dropped).toBe(2);
    expect(plan.note).toBe(`Trimmed to fit the model's context (${budget} prompt tokens): left out 2 earlier messages.`);
  });

  it('then cuts the largest context piece by lines, never silently', async () => {
    const big = item('big.ts', 100);
    const small = item('small.ts', 2);
    const plan = await fitToContext([{ role: 'user', content: 'q' }], [small, big], 200, words);
    expect(plan.error).toBeNull();
    expect(plan.tokens).toBeLessThanOrEqual(200);
    expect(plan.cut).toHaveLength(1);
    const cut = plan.cut[0]!;
    expect([cut.path, cut.totalLines]).toEqual(['big.ts', 100]);
    expect(cut.keptLines).toBeGreaterThan(10);
    expect(cut.keptLines).toBeLessThan(100);
    const sent = plan.messages.at(-1)!.content;
    expect(sent).toContain(`File big.ts (lines 1-${cut.keptLines}) (of 100 lines; cut to fit the context):`);
    expect(sent).toContain('File small.ts:');
    expect(sent.endsWith('q')).toBe(true);
    expect(plan.note).toBe(`Trimmed to fit the model's context (200 prompt tokens): cut big.ts to ${cut.keptLines} of 100 lines.`);
  });

  it('counts a file\'s lines without the empty "line" after its final newline', async () => {
    const file = item('f.ts', 100, {});
    const plan = await fitToContext([{ role: 'user', content: 'q' }], [{ ...file, text: `${file.text}\n` }], 200, words);
    expect(plan.cut[0]!.totalLines).toBe(100);
  });

  it('refuses, with the sizes, when even the question does not fit', async () => {
    const long = Array.from({ length: 50 }, () => 'word').join(' ');
    const plan = await fitToContext([{ role: 'system', content: 'sys' }, { role: 'user', content: long }], [], 30, words);
    expect(plan.error).toBe(`This message needs about ${1 + 50 + 2 * MESSAGE_OVERHEAD} tokens, more than the 30 the model's context leaves for a prompt. Shorten it.`);
  });

  it('keeps a quarter of the context (at most 1024 tokens) for the answer', () => {
    expect(promptBudget(512)).toBe(384);
    expect(promptBudget(4096)).toBe(3072);
    expect(promptBudget(32768)).toBe(31744);
  });

  it('the planner counts with the server and caches counts by text', async () => {
    const asked: string[] = [];
    const client = {
      tokenize: async (t: string) => { asked.push(t); return t.split(' '); },
      models: async () => [{ id: 'm', contextLength: 512, maxOutputTokens: null, toolCalling: false }],
    };
    const planner = new ContextPlanner();
    expect(await planner.budget(client as never)).toBe(384);
    expect(await planner.count(client as never, 'a b c')).toBe(3);
    expect(await planner.count(client as never, 'a b c')).toBe(3);
    expect(asked).toEqual(['a b c']);
    planner.reset();
    await planner.count(client as never, 'a b c');
    expect(asked).toEqual(['a b c', 'a b c']);
  });
});
