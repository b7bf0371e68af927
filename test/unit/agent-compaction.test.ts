// The compaction policy (extension/agent/compaction.ts) on hand-built conversations: the limits,
// stubs oldest first with the latest step's results whole, hysteresis (down to the low mark in one
// go), the summary's cut and continuation, and a summary request that fits.
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../contract/chat.js';
import { splitSummary, withSummary } from '../../contract/compaction.js';
import {
  applyStubs, compactionLabel, compactionLimits, isStub, lastStepIndex, planStubs, summarised, summaryCut, summaryInput, sumTokens, type Sized,
} from '../../extension/agent/compaction.js';

/** A conversation of `steps` read_file steps, each result `resultTokens` big; sizes as given. */
function conversation(steps: number, resultTokens: number): Sized[] {
  const out: Sized[] = [
    { message: { role: 'system', content: 'You are an agent.' }, tokens: 40 },
    { message: { role: 'user', content: 'Find the bug.' }, tokens: 12 },
  ];
  for (let i = 1; i <= steps; i++) {
    out.push({ message: { role: 'assistant', content: '', toolCalls: [{ id: `c${i}`, name: 'read_file', arguments: JSON.stringify({ path: `src/f${i}.ts` }) }] }, tokens: 20 });
    out.push({ message: { role: 'tool', toolCallId: `c${i}`, name: 'read_file', content: `file ${i} `.repeat(resultTokens / 2) }, tokens: resultTokens });
  }
  return out;
}

describe('compaction limits', () => {
  it('keeps 15% of the context for the answer when the answer cap is larger, compacts down to half', () => {
    expect(compactionLimits(4096, 4096)).toEqual({ ctx: 4096, reserve: 614, high: 3481, low: 2048, summaryMaxTokens: 614 });
    // A small answer cap: compaction still starts at 85%.
    expect(compactionLimits(32768, 2000)).toMatchObject({ reserve: 2000, high: 27852, low: 16384, summaryMaxTokens: 1024 });
    // An answer cap above 15% of the context leaves room for the answer first.
    expect(compactionLimits(8192, 1500)).toMatchObject({ reserve: 1228, high: 6963 });
  });
});

describe('stubs', () => {
  it('replaces older results oldest first, down to the target in one go; the latest step stays whole', () => {
    const sized = conversation(10, 400);
    const total = sumTokens(sized);
    const last = lastStepIndex(sized.map((s) => s.message));
    expect(last).toBe(sized.length - 2);
    const plan = planStubs(sized, last, total, 2048);
    // 4,252 tokens; a stub (~58 tokens) saves ~342: down to ≤ 2,048 takes the 7 oldest of the 9 older results, no more.
    expect(total).toBe(4252);
    expect(plan.tokens).toBeLessThanOrEqual(2048);
    expect(plan.tokens + 342).toBeGreaterThan(2048);
    expect(plan.indices).toEqual([3, 5, 7, 9, 11, 13, 15]);
    const out = applyStubs(sized, plan.indices);
    expect(out.filter((m) => isStub(m))).toHaveLength(7);
    expect(out[17]!.content).toBe(sized[17]!.message.content);
    expect(out.at(-1)!.content).toBe(sized.at(-1)!.message.content);
    // The stub names the call (tool, main argument), its size, and that it can be asked for again.
    expect(out[3]!.content).toBe('[elided to save context: the result of read_file(path: "src/f1.ts"), 400 tokens, was left out of the conversation to save context. Call the tool again if you need it.]');
    expect(out[3]).toMatchObject({ role: 'tool', toolCallId: 'c1' });
    // The input is untouched.
    expect(isStub(sized[3]!.message)).toBe(false);
  });

  it('hysteresis: after one compaction to the low mark, the following steps fit without another', () => {
    const limits = compactionLimits(4096, 4096);
    let sized = conversation(10, 400);
    let compactions = 0;
    for (let step = 11; step <= 20; step++) {
      const prompt = sumTokens(sized);
      if (prompt > limits.high) {
        const plan = planStubs(sized, lastStepIndex(sized.map((s) => s.message)), prompt, limits.low);
        const msgs = applyStubs(sized, plan.indices);
        sized = msgs.map((message, i) => ({ message, tokens: plan.indices.includes(i) ? 50 : sized[i]!.tokens }));
        compactions++;
      }
      sized.push({ message: { role: 'assistant', content: '', toolCalls: [{ id: `c${step}`, name: 'read_file', arguments: '{"path":"x"}' }] }, tokens: 20 });
      sized.push({ message: { role: 'tool', toolCallId: `c${step}`, name: 'read_file', content: 'y' }, tokens: 100 });
    }
    // Ten steps of 120 tokens after compacting to 2,048 stay under 3,481: one compaction, not one per step.
    expect(compactions).toBe(1);
  });

  it('a stub is not stubbed again; nothing to stub leaves the plan empty', () => {
    const sized = conversation(3, 400);
    const once = applyStubs(sized, planStubs(sized, sized.length - 2, sumTokens(sized), 0).indices);
    const again = once.map((message) => ({ message, tokens: 60 }));
    expect(planStubs(again, again.length - 2, 1000, 0).indices).toEqual([]);
  });
});

describe('the summary', () => {
  it('cuts after the question and before the last step; the conversation goes on from system + question with the summary + the last step', () => {
    const msgs = conversation(5, 100).map((s) => s.message);
    const cut = summaryCut(msgs)!;
    expect(cut).toEqual({ system: 0, question: 1, keepFrom: msgs.length - 2 });
    const label = compactionLabel(3, { from: 1, to: 4 });
    expect(label).toBe('3 tool results elided; steps 1–4 summarised');
    const next = summarised(msgs, cut, label, '## Task\nFind the bug.\n## Left to do\nRead f5.');
    expect(next.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(next[2]).toBe(msgs.at(-2));
    expect(next[3]).toBe(msgs.at(-1));
    expect(splitSummary(next[1]!.content)).toEqual({ question: 'Find the bug.', label, summary: '## Task\nFind the bug.\n## Left to do\nRead f5.' });
    // A second summary replaces the first on the question.
    const twice = withSummary(next[1]!.content, 'steps 5–9 summarised', 'new');
    expect(splitSummary(twice)).toEqual({ question: 'Find the bug.', label: 'steps 5–9 summarised', summary: 'new' });
  });

  it('nothing between the question and the last step: no summary', () => {
    const msgs = conversation(1, 100).map((s) => s.message);
    expect(summaryCut(msgs)).toBeNull();
  });

  it('earlier turns are summarised too: the question is the last one before the kept step', () => {
    const msgs: ChatMessage[] = [
      { role: 'system', content: 's' }, { role: 'user', content: 'first task' }, { role: 'assistant', content: 'done' },
      { role: 'user', content: 'second task' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'list_files', arguments: '{}' }] }, { role: 'tool', toolCallId: 'a', content: 'x' },
    ];
    expect(summaryCut(msgs)).toEqual({ system: 0, question: 3, keepFrom: 4 });
  });

  it('the request is the conversation as it is when it fits (the KV is reused), else stubbed, else without the oldest steps; it always fits', () => {
    const sized = conversation(10, 400);
    const cut = summaryCut(sized.map((s) => s.message))!;
    const total = sumTokens(sized);
    const whole = summaryInput(sized, cut, total + 100, 50)!;
    expect(whole).toMatchObject({ stubbed: 0, dropped: 0, tokens: total + 50 });
    expect(whole.messages).toEqual(sized.map((s) => s.message));

    const stubbed = summaryInput(sized, cut, 2500, 50)!;
    expect(stubbed.tokens).toBeLessThanOrEqual(2500);
    expect(stubbed.stubbed).toBeGreaterThan(0);
    expect(stubbed.dropped).toBe(0);

    const dropped = summaryInput(sized, cut, 300, 50)!;
    expect(dropped.tokens).toBeLessThanOrEqual(300);
    expect(dropped.dropped).toBeGreaterThan(0);
    // The system message and the question are always there; every call still has its result.
    expect(dropped.messages.slice(0, 2)).toEqual([sized[0]!.message, sized[1]!.message]);
    const ids = new Set(dropped.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
    for (const m of dropped.messages) for (const c of m.toolCalls ?? []) expect(ids.has(c.id)).toBe(true);
    for (const m of dropped.messages.filter((x) => x.role === 'tool')) expect(dropped.messages.some((a) => a.toolCalls?.some((c) => c.id === m.toolCallId))).toBe(true);

    // Not even the system message and the question fit: no request.
    expect(summaryInput(sized, cut, 60, 50)).toBeNull();
  });
});
