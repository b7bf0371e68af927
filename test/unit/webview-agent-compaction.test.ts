// Compaction in the panel's state: an answer that compacted the conversation makes the next
// question go on from the compacted conversation; the marker and the meter follow the answer; a
// saved compacted conversation restores with its summary shown as a marker and sends the same
// messages again; the Compact action's result replaces what the next question sends.
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../contract/chat.js';
import type { AgentCompactionView } from '../../contract/agent.js';
import type { ToWebview } from '../../contract/panel.js';
import { withSummary } from '../../contract/compaction.js';
import { conversation, initialState, persisted, reduce, sendChat, type ViewState } from '../../webview/state.js';
import { latestContext } from '../../webview/agent-compaction.js';

const apply = (s: ViewState, ...msgs: ToWebview[]): ViewState => msgs.reduce(reduce, s);

const call = (id: string, path: string): ChatMessage => ({ role: 'assistant', content: '', toolCalls: [{ id, name: 'read_file', arguments: JSON.stringify({ path }) }] });
const result = (id: string, content: string): ChatMessage => ({ role: 'tool', toolCallId: id, name: 'read_file', content });
const marker: AgentCompactionView = { id: 'c1', afterSteps: 2, elided: 1, steps: { from: 1, to: 1 }, summary: '## Task: read.', label: '1 tool result elided; step 1 summarised', before: 3600, after: 900 };

describe('compaction in the panel state', () => {
  it('the next question goes on from the compacted conversation; the marker and the meter are on the answer', () => {
    let s: ViewState = { ...initialState(undefined), mode: 'agent', draft: 'read a and b' };
    s = sendChat(s, 'c1').state;
    const compacted: ChatMessage[] = [{ role: 'user', content: withSummary('read a and b', marker.label, marker.summary!) }, call('2', 'b.ts'), result('2', 'B'), { role: 'assistant', content: 'done' }];
    const added: ChatMessage[] = [call('1', 'a.ts'), result('1', 'A'), call('2', 'b.ts'), result('2', 'B'), { role: 'assistant', content: 'done' }];
    s = apply(s,
      { type: 'agentContext', chatId: 'c1', context: { used: 3600, ctx: 4096 } },
      { type: 'agentCompaction', chatId: 'c1', compaction: marker },
      { type: 'agentContext', chatId: 'c1', context: { used: 900, ctx: 4096 } },
      { type: 'chatEnd', chatId: 'c1', end: { usage: null, timings: null, error: null, cancelled: false, agent: { messages: added, steps: 3, note: null, conversation: compacted } } });
    expect(s.turns[1]!.compactions).toEqual([marker]);
    expect(latestContext(s.turns)).toEqual({ used: 900, ctx: 4096 });
    expect(conversation(s.turns)).toEqual(compacted);
    // A follow-up question sends the compacted conversation and the question.
    const next = sendChat({ ...s, draft: 'and c?' }, 'c2');
    expect(next.out).toMatchObject({ type: 'chatSend', messages: [...compacted, { role: 'user', content: 'and c?' }] });
    // The view's saved state keeps it (the webview is hidden and comes back).
    const back = initialState(JSON.parse(JSON.stringify(persisted(s))));
    expect(conversation(back.turns)).toEqual(compacted);
  });

  it('a saved compacted conversation restores with the summary as a marker and sends the same messages', () => {
    const saved: ChatMessage[] = [
      { role: 'user', content: withSummary('read a and b', marker.label, marker.summary!) },
      call('2', 'b.ts'), result('2', '[elided to save context: the result of read_file(path: "b.ts"), 300 tokens, was left out of the conversation to save context. Call the tool again if you need it.]'),
      { role: 'assistant', content: 'done' },
    ];
    const s = apply(initialState(undefined), { type: 'chatLoad', name: 'work', messages: saved, mode: 'agent' });
    expect(s.turns[0]).toMatchObject({ role: 'user', text: 'read a and b', compactions: [{ label: marker.label, summary: marker.summary }] });
    expect(s.turns[1]!.steps?.map((x) => x.status)).toEqual(['done']);
    expect(conversation(s.turns)).toEqual(saved);
  });

  it('the Compact action: the last turn carries the compacted conversation and its marker at the end', () => {
    let s: ViewState = { ...initialState(undefined), mode: 'agent', draft: 'q' };
    s = sendChat(s, 'c1').state;
    s = apply(s, { type: 'chatEnd', chatId: 'c1', end: { usage: null, timings: null, error: null, cancelled: false, agent: { messages: [call('1', 'a.ts'), result('1', 'A'), { role: 'assistant', content: 'ok' }], steps: 2, note: null } } });
    const compacted: ChatMessage[] = [{ role: 'user', content: withSummary('q', 'the conversation summarised', 'S') }, call('1', 'a.ts'), result('1', 'A'), { role: 'assistant', content: 'ok' }];
    s = apply(s, { type: 'agentCompacted', messages: compacted, compaction: { ...marker, id: 'c9', label: 'the conversation summarised' }, context: { used: 300, ctx: 4096 } });
    expect(s.turns[1]!.compactions?.at(-1)).toMatchObject({ id: 'c9', afterSteps: -1 });
    expect(conversation(s.turns)).toEqual(compacted);
    expect(latestContext(s.turns)).toEqual({ used: 300, ctx: 4096 });
  });
});
