import { describe, expect, it } from 'vitest';
import {
  activeRequests, canRegenerate, conversation, editLastQuestion, estimateRequest, initialState, newChat, persisted, reduce, regenerate, sendChat, type ViewState,
} from '../../webview/state.js';
import type { ToWebview } from '../../contract/panel.js';
import { benchTable, comparison, figureHistory, modelSummary, stepBars, waterfall } from '../../webview/layout.js';
import { parseMetrics } from '../../contract/metrics.js';
import { metricsBody } from '../helpers/contract-bodies.js';
import type { RequestTraceView } from '../../contract/traces.js';

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
    // The thinking level it was saved with; one saved without it is auto.
    expect(s.thinking).toBe('auto');
    s = apply(s, { type: 'chatLoad', name: 'deep', messages: [{ role: 'user', content: 'a' }], thinking: 'high' });
    expect([s.chatName, s.thinking]).toEqual(['deep', 'high']);
    s = apply(s, { type: 'chatLoad', name: 'work', messages: [{ role: 'user', content: 'a' }] });
    expect(s.thinking).toBe('auto');
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

  it('puts bench runs side by side, newest first, with the change since the run before', () => {
    const t = (d: number) => Date.UTC(2025, 0, d, 3, 4);
    const runs = [
      { id: 'a', time: t(1), url: 'u', model: null, figures: [{ key: 'tps', name: 'decode tok/s', value: 10, unit: 'tok/s', better: 'higher' as const }, { key: 'ttft', name: 'ttft', value: 50, unit: 'ms', better: 'lower' as const }] },
      { id: 'b', time: t(2), url: 'u', model: null, figures: [{ key: 'tps', name: 'decode tok/s', value: 12, unit: 'tok/s', better: 'higher' as const }, { key: 'ttft', name: 'ttft', value: 60, unit: 'ms', better: 'lower' as const }] },
      { id: 'c', time: t(3), url: 'u', model: null, figures: [{ key: 'tps', name: 'decode tok/s', value: 15, unit: 'tok/s', better: 'higher' as const }] },
    ];
    const { runs: cols, rows } = benchTable(runs, 2);
    expect(cols.map((r) => r.id)).toEqual(['c', 'b']);
    expect(rows.map((r) => [r.id, r.values, r.change, r.improved])).toEqual([['tps', [15, 12], 0.25, true], ['ttft', [null, 60], null, null]]);
    expect(benchTable(runs.slice(0, 2)).rows.find((r) => r.id === 'ttft')).toMatchObject({ change: 0.2, improved: false });
    expect(figureHistory(runs, 'ttft')).toEqual({ labels: ['01-01 03:04', '01-02 03:04', '01-03 03:04'], values: [50, 60, null] });
  });

  it('compares a run with the other server it measured: >1 means ours is better either way', () => {
    const run = {
      id: 'x', time: 0, url: 'ours', model: null,
      figures: [{ key: 'tps', name: 'tok/s', value: 30, unit: 'tok/s', better: 'higher' as const }, { key: 'ttft', name: 'ttft', value: 50, unit: 'ms', better: 'lower' as const }, { key: 'n', name: 'n', value: 3, unit: '' }],
      baseline: { url: 'theirs', model: null, figures: [{ key: 'tps', name: 'tok/s', value: 20, unit: 'tok/s', better: 'higher' as const }, { key: 'ttft', name: 'ttft', value: 100, unit: 'ms', better: 'lower' as const }, { key: 'n', name: 'n', value: 3, unit: '' }] },
    };
    expect(comparison(run).map((r) => [r.id, r.advantage])).toEqual([['tps', 1.5], ['ttft', 2], ['n', null]]);
    expect(comparison({ ...run, baseline: null })).toEqual([]);
  });
});

describe('chat with context, regenerate and edit', () => {
  const sel = { id: 's1', kind: 'selection' as const, path: 'src/a.py', range: { startLine: 2, endLine: 3 }, language: 'python', text: 'x = 1\ny = 2', tokens: 9 };
  const end = { usage: null, timings: null, error: null, cancelled: false };

  it('attaches context chips to the draft (once each) and sends them with the question', () => {
    let s = apply(initialState(undefined), { type: 'contextAdd', item: sel }, { type: 'contextAdd', item: { ...sel, id: 's2' } });
    expect(s.draftContext.map((c) => c.id)).toEqual(['s1']);
    s = { ...s, draft: 'what does it do?' };
    const sent = sendChat(s, 'c1');
    expect(sent.out).toEqual({ type: 'chatSend', chatId: 'c1', name: 'chat', messages: [{ role: 'user', content: 'what does it do?' }], context: [sel] });
    expect([sent.state.draft, sent.state.draftContext]).toEqual(['', []]);
    // The extension says what it sent: the question with the context, and any trimming.
    s = apply(sent.state, { type: 'chatSent', chatId: 'c1', content: 'CONTEXT\n\nwhat does it do?', note: 'Trimmed: left out 1 earlier message.' });
    expect(s.turns[0]).toEqual({ role: 'user', content: 'CONTEXT\n\nwhat does it do?', text: 'what does it do?', context: [sel], note: 'Trimmed: left out 1 earlier message.' });
    // Later requests send the question as it was sent (so the server's cache matches), not as typed.
    s = apply(s, { type: 'chatDelta', chatId: 'c1', text: 'It sets x.' }, { type: 'chatEnd', chatId: 'c1', end });
    expect(conversation(s.turns)).toEqual([{ role: 'user', content: 'CONTEXT\n\nwhat does it do?' }, { role: 'assistant', content: 'It sets x.' }]);
  });

  it('regenerates the last answer with the same question and context', () => {
    let s = apply({ ...initialState(undefined), draft: 'q1' });
    s = apply(sendChat(s, 'c1').state, { type: 'chatDelta', chatId: 'c1', text: 'a1' }, { type: 'chatEnd', chatId: 'c1', end });
    s = apply(sendChat({ ...s, draft: 'q2', draftContext: [sel] }, 'c2').state, { type: 'chatSent', chatId: 'c2', content: 'CTX q2', note: null },
      { type: 'chatDelta', chatId: 'c2', text: 'a2' }, { type: 'chatEnd', chatId: 'c2', end });
    expect(canRegenerate(s)).toBe(true);
    const r = regenerate(s, 'c3');
    expect(r.out).toEqual({ type: 'chatSend', chatId: 'c3', name: 'chat', messages: [{ role: 'user', content: 'q1' }, { role: 'assistant', content: 'a1' }, { role: 'user', content: 'q2' }], context: [sel] });
    expect(r.state.turns.map((t) => [t.role, t.content, t.pending ?? false])).toEqual([
      ['user', 'q1', false], ['assistant', 'a1', false], ['user', 'q2', false], ['assistant', '', true],
    ]);
    // Nothing to redo while an answer streams.
    expect(regenerate(r.state, 'c4').out).toBeNull();
  });

  it('takes the last question back into the message box to edit it', () => {
    let s = apply(sendChat({ ...initialState(undefined), draft: 'typo questoin', draftContext: [sel] }, 'c1').state,
      { type: 'chatSent', chatId: 'c1', content: 'CTX typo questoin', note: null }, { type: 'chatEnd', chatId: 'c1', end: { ...end, error: 'engine died' } });
    s = editLastQuestion(s);
    expect([s.turns, s.draft, s.draftContext]).toEqual([[], 'typo questoin', [sel]]);
  });

  it('says how much a stopped answer got, and drops the figures of a server that stopped', () => {
    let s = apply(sendChat({ ...initialState(undefined), draft: 'q' }, 'c1').state, { type: 'chatDelta', chatId: 'c1', text: 'par' },
      { type: 'chatEnd', chatId: 'c1', end: { ...end, cancelled: true, partial: { tokens: 11, ms: 2000 } } });
    expect(s.turns.at(-1)!.stats).toBe('~11 tok · 5.0 tok/s · stopped');
    const metrics = { state: 'idle', queued: 0, admitting: 0, running: 1, finishing: 0, slots: [], requests: [], totals: {}, cache: { parked: 0, bytes: 0, budget: 0, hits: 0, misses: 0, evictions: 0 }, engines: [], staleFrames: 0 };
    const server = { state: 'ready' as const, busy: false, mode: 'managed' as const, model: 'tiny', url: 'http://x', message: null };
    s = apply(s, { type: 'server', server }, { type: 'metrics', metrics, at: 1 }, { type: 'devices', devices: [{ name: 'CPU', description: 'cpu', type: 'cpu', replica: 0, memoryFree: null, memoryTotal: 8, layers: 4, planned: null }], fit: [], error: null });
    expect(activeRequests(s)).toBe(1);
    s = apply(s, { type: 'server', server: { ...server, state: 'stopped', model: null, url: null } });
    expect([s.metrics, s.devices, s.traces]).toEqual([null, [], null]);
    expect(activeRequests(s)).toBe(0);
    // The settings swap the managed server for a remote one: ready to ready, still another server.
    s = apply(s, { type: 'server', server }, { type: 'metrics', metrics, at: 2 }, { type: 'server', server: { ...server, busy: true } });
    expect(activeRequests(s)).toBe(1);
    s = apply(s, { type: 'server', server: { ...server, mode: 'remote', model: 'scripted', url: 'http://y' } });
    expect([s.metrics, s.devices, s.traces]).toEqual([null, [], null]);
  });

  it('keeps only the newest estimate and asks for one only when there is a draft', () => {
    let s = initialState(undefined);
    expect(estimateRequest(s, 1)).toBeNull();
    s = { ...s, draft: 'hello' };
    expect(estimateRequest(s, 2)).toEqual({ type: 'estimate', id: 2, messages: [{ role: 'user', content: 'hello' }], context: [] });
    s = apply(s, { type: 'estimate', id: 3, tokens: 10, budget: 384, note: null, error: null }, { type: 'estimate', id: 2, tokens: 9, budget: 384, note: null, error: null });
    expect(s.estimate).toEqual({ id: 3, tokens: 10, budget: 384, note: null, error: null });
  });
});

describe('served models in the panel', () => {
  it('reads the /metrics models section through the contract and lists several models in the header', () => {
    const body = metricsBody({
      models: {
        max_loaded: 2, ram_budget: 8 * 2 ** 30, idle_unload_ms: 0, device_margin: 2 ** 30,
        data: [
          { name: 'coder', state: 'loaded', role: 'completion', file: 'coder.gguf', pinned: true, memory_estimate: 2 ** 30, device_memory: { CUDA0: 3 * 2 ** 30 }, last_used: '2025-01-02T03:04:05.000Z', requests_in_flight: 1, requests_total: 7, loads: 1, unloads: 0, loading_ms: null, error: null },
          { name: 'chat', state: 'loading', role: 'chat', file: 'chat.gguf', pinned: false, memory_estimate: 2 ** 31, device_memory: {}, last_used: null, requests_in_flight: 0, requests_total: 0, loads: 0, unloads: 0, loading_ms: 120, error: null },
        ],
      },
    });
    const m = parseMetrics(body);
    expect(m.models).toEqual([
      { name: 'coder', state: 'loaded', role: 'completion', pinned: true, memoryBytes: 2 ** 30, deviceMemory: { CUDA0: 3 * 2 ** 30 }, lastUsed: Date.UTC(2025, 0, 2, 3, 4, 5), inFlight: 1, requests: 7, error: null },
      { name: 'chat', state: 'loading', role: 'chat', pinned: false, memoryBytes: 2 ** 31, deviceMemory: {}, lastUsed: null, inFlight: 0, requests: 0, error: null },
    ]);
    expect(modelSummary(m.models!)!.map((x) => `${x.name} ${x.state}`)).toEqual(['coder loaded', 'chat loading']);
    expect(modelSummary(m.models!.slice(0, 1))).toBeNull(); // one model: the header's model name says it all
    expect(parseMetrics(metricsBody()).models).toEqual([]);
    const wrong = { ...body, models: { ...body.models!, data: [{ ...body.models!.data[0]!, state: 'sleeping' }] } };
    expect(() => parseMetrics(wrong)).toThrow(/models\.data\.0\.state/);
  });
});
