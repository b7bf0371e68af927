import { describe, expect, it } from 'vitest';
import { conversation, initialState, newChat, persisted, reduce, sendChat, type ViewState } from '../../webview/state.js';
import type { ToWebview } from '../../webview/protocol.js';
import { benchCharts, stepBars, waterfall } from '../../webview/layout.js';
import type { RequestTraceView } from '../../extension/api/types.js';

const apply = (s: ViewState, ...msgs: ToWebview[]): ViewState => msgs.reduce(reduce, s);

describe('panel view state', () => {
  it('sends the draft with the finished conversation and streams the answer into the pending turn', () => {
    let s = { ...initialState(undefined), draft: ' first question ', chatName: 'demo' };
    const sent = sendChat(s, 'c1');
    expect(sent.out).toEqual({ type: 'chatSend', chatId: 'c1', name: 'demo', messages: [{ role: 'user', content: 'first question' }] });
    s = apply(sent.state,
      { type: 'chatDelta', chatId: 'c1', text: 'An' },
      { type: 'chatDelta', chatId: 'other', text: 'ignored' },
      { type: 'chatDelta', chatId: 'c1', text: 'swer' },
      { type: 'chatEnd', chatId: 'c1', end: { usage: { promptTokens: 4, completionTokens: 2, cachedTokens: 3 }, timings: { predictedPerSecond: 12.34, promptMs: 5.2, predictedMs: null, promptPerSecond: null }, error: null, cancelled: false } },
    );
    expect(s.turns.at(-1)).toEqual({ role: 'assistant', content: 'Answer', chatId: 'c1', pending: false, error: null, stats: '2 tok · 3 prompt tok reused · 12.3 tok/s · prompt 5 ms' });
    s = { ...s, draft: 'second' };
    const next = sendChat(s, 'c2');
    expect(next.out && next.out.type === 'chatSend' && next.out.messages).toEqual([
      { role: 'user', content: 'first question' }, { role: 'assistant', content: 'Answer' }, { role: 'user', content: 'second' },
    ]);
    // While streaming, another send does nothing.
    expect(sendChat({ ...next.state, draft: 'third' }, 'c3').out).toBeNull();
  });

  it('a snapshot replaces the text of a pending turn (view re-created while streaming)', () => {
    const sent = sendChat({ ...initialState(undefined), draft: 'q' }, 'c1');
    const back = initialState(JSON.parse(JSON.stringify(persisted(sent.state))));
    const s = apply(back, { type: 'chatSnapshot', chatId: 'c1', text: 'partial answer' }, { type: 'chatEnd', chatId: 'c1', end: { usage: null, timings: null, error: 'engine died', cancelled: false } });
    expect(s.turns.at(-1)).toMatchObject({ content: 'partial answer', pending: false, error: 'engine died' });
    // Failed answers are not sent again as conversation.
    expect(conversation(s.turns)).toEqual([{ role: 'user', content: 'q' }]);
  });

  it('restoring a session loads its conversation; new chat clears it', () => {
    let s = apply(initialState(undefined), { type: 'chatLoad', name: 'work', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] });
    expect(s.chatName).toBe('work');
    expect(conversation(s.turns)).toEqual([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }]);
    s = newChat(s);
    expect([s.turns, s.chatName]).toEqual([[], '']);
  });

  it('keeps the selected trace while it exists, else selects the newest', () => {
    const req = (id: string): RequestTraceView => ({
      id, kind: 'chat', replica: 0, slot: 0, finish: 'stop', error: null, accepted: Number(id), promptTokens: 3, reused: 0, restored: false, generated: 1,
      dispatched: 0, admitted: 1, promptDone: 2, firstToken: 3, finished: 4, promptLegs: [],
    });
    let s = apply(initialState(undefined), { type: 'traces', traces: { requests: [req('1'), req('2')], steps: [] }, error: null });
    expect(s.selectedTrace).toBe('2');
    s = { ...s, selectedTrace: '1' };
    s = apply(s, { type: 'traces', traces: { requests: [req('1'), req('2'), req('3')], steps: [] }, error: null });
    expect(s.selectedTrace).toBe('1');
    s = apply(s, { type: 'traces', traces: { requests: [req('4')], steps: [] }, error: null });
    expect(s.selectedTrace).toBe('4');
  });

  it('drops junk from a persisted state', () => {
    const s = initialState({ tab: 'evil', turns: [{ role: 'user', content: 'ok' }, { role: 'x', content: 'no' }, null], draft: 5 });
    expect(s.tab).toBe('chat');
    expect(s.turns).toEqual([{ role: 'user', content: 'ok' }]);
    expect(s.draft).toBe('');
  });

  it('stores server data for the tabs', () => {
    const s = apply(initialState(undefined),
      { type: 'sessions', sessions: [{ name: 'a', tokens: 1, bytes: 2, model: 'm', savedAt: 3, path: '/p', messages: 2 }], error: null },
      { type: 'showTab', tab: 'sessions' },
      { type: 'notice', level: 'error', text: 'boom' });
    expect(s.sessions[0]!.name).toBe('a');
    expect(s.tab).toBe('sessions');
    expect(s.notice).toEqual({ level: 'error', text: 'boom' });
  });
});

describe('chart layout', () => {
  it('builds a request waterfall relative to its arrival', () => {
    const w = waterfall({
      id: '7', kind: 'chat', replica: 0, slot: 1, finish: 'stop', error: null, accepted: 0, promptTokens: 106, reused: 12, restored: true, generated: 9,
      dispatched: 4, admitted: 10, promptDone: 50, firstToken: 60, finished: 200,
      promptLegs: [{ t: 10, tokens: 64, ms: 20 }, { t: 35, tokens: 30, ms: 15 }],
    });
    expect(w.total).toBe(200);
    expect(w.segments.map((s) => [s.kind, s.label, s.from, s.to])).toEqual([
      ['queue', 'queued', 0, 4], ['admit', 'admission (slot 1)', 4, 10], ['admit', 'restored 12 tok', 10, 10],
      ['prompt', 'prompt leg 1: 64 tok', 10, 30], ['prompt', 'prompt leg 2: 30 tok', 35, 50],
      ['first', 'first token', 60, 60], ['decode', 'decode 9 tok → stop', 60, 200],
    ]);
  });

  it('stacks step times and keeps the last steps', () => {
    const steps = Array.from({ length: 5 }, (_, i) => ({ step: i, t: i, buildMs: 1, decodeMs: i, sampleMs: 0.5, detokMs: 0.5, decodeTokens: 2, promptTokens: i * 10, sequences: 2 }));
    const b = stepBars(steps, 3);
    expect(b.bars.map((x) => x.step)).toEqual([2, 3, 4]);
    expect(b.maxMs).toBe(6);
    expect(b.maxTokens).toBe(42);
  });

  it('groups bench figures by name across runs', () => {
    const charts = benchCharts([
      { id: 'a', time: Date.UTC(2025, 0, 2, 3, 4), url: 'u', model: null, figures: [{ name: 'decode tok/s', value: 10, unit: 'tok/s' }, { name: 'ttft', value: 50, unit: 'ms' }] },
      { id: 'b', time: Date.UTC(2025, 0, 3, 3, 4), url: 'u', model: null, figures: [{ name: 'decode tok/s', value: 12, unit: 'tok/s' }] },
    ]);
    expect(charts.map((c) => [c.name, c.bars.map((b) => b.value), c.max])).toEqual([['decode tok/s', [10, 12], 12], ['ttft', [50], 50]]);
    expect(charts[0]!.bars[0]!.label).toBe('01-02 03:04');
  });
});
