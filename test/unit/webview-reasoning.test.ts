// The model's thinking in the panel chat: the client reads reasoning_content apart from the answer,
// the hub streams it to the views, the view state keeps it beside the answer, and it never goes
// back to the server as conversation. (The DOM part, a <details> block drawn from thinkingView,
// has no unit test: the webview tests here are DOM-free.)
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reasoningOf, StrataClient, type ChatEvent } from '../../extension/client/client.js';
import type { ChatCall } from '../../extension/client/types.js';
import { PanelHub, type PanelClient } from '../../extension/panel/hub.js';
import { validateFromWebview, type ToWebview } from '../../contract/panel.js';
import { conversation, initialState, persisted, reduce, sendChat, setThinking, thinkingView, type ViewState } from '../../webview/state.js';

const apply = (s: ViewState, ...msgs: ToWebview[]): ViewState => msgs.reduce(reduce, s);
const end = { usage: null, timings: null, error: null, cancelled: false };

describe('panel view state with thinking', () => {
  it('keeps thinking apart from the answer and never sends it back', () => {
    const sent = sendChat({ ...initialState(undefined), draft: 'why?' }, 'c1');
    let s = apply(sent.state,
      { type: 'chatReasoning', chatId: 'c1', text: 'let me ' },
      { type: 'chatReasoning', chatId: 'other', text: 'ignored' },
      { type: 'chatReasoning', chatId: 'c1', text: 'think' },
      { type: 'chatDelta', chatId: 'c1', text: 'Because.' },
      { type: 'chatEnd', chatId: 'c1', end });
    expect(s.turns.at(-1)).toMatchObject({ role: 'assistant', content: 'Because.', reasoning: 'let me think', pending: false });
    expect(conversation(s.turns)).toEqual([{ role: 'user', content: 'why?' }, { role: 'assistant', content: 'Because.' }]);
    const next = sendChat({ ...s, draft: 'more' }, 'c2');
    expect(next.out).toMatchObject({ type: 'chatSend', messages: [{ role: 'user', content: 'why?' }, { role: 'assistant', content: 'Because.' }, { role: 'user', content: 'more' }] });
    expect(JSON.stringify(next.out)).not.toContain('let me think');
    // A finished turn takes no more thinking.
    s = apply(s, { type: 'chatReasoning', chatId: 'c1', text: 'late' });
    expect(s.turns.at(-1)!.reasoning).toBe('let me think');
  });

  it('a snapshot restores the thinking of a re-created view; the thinking survives persistence', () => {
    const sent = sendChat({ ...initialState(undefined), draft: 'q' }, 'c1');
    const back = initialState(JSON.parse(JSON.stringify(persisted(sent.state))));
    const s = apply(back, { type: 'chatSnapshot', chatId: 'c1', text: 'ans', reasoning: 'plan' }, { type: 'chatEnd', chatId: 'c1', end });
    expect(s.turns.at(-1)).toMatchObject({ content: 'ans', reasoning: 'plan' });
    const again = initialState(JSON.parse(JSON.stringify(persisted(s))));
    expect(again.turns.at(-1)).toMatchObject({ content: 'ans', reasoning: 'plan' });
    // Saved state from elsewhere with a bad reasoning value: the turn stays, the value goes.
    const odd = initialState({ turns: [{ role: 'assistant', content: 'x', reasoning: 42 }] });
    expect(odd.turns).toHaveLength(1);
    expect(odd.turns[0]!.reasoning).toBeUndefined();
    const badStats = initialState({ turns: [{ role: 'assistant', content: 'x', reasoning: 'r', thinking: { tokens: 'many' } }] });
    expect(badStats.turns[0]).toMatchObject({ reasoning: 'r' });
    expect(badStats.turns[0]!.thinking).toBeUndefined();
  });

  it('thinkingView: none without thinking; collapsed while it streams and after, its label counting tokens and time; the user opens it', () => {
    expect(thinkingView({ role: 'assistant', content: 'a' })).toBeNull();
    expect(thinkingView({ role: 'assistant', content: '', reasoning: '', pending: true })).toBeNull();
    const thinking = { role: 'assistant' as const, content: '', reasoning: 'hmm', pending: true };
    expect(thinkingView(thinking)).toEqual({ text: 'hmm', open: false, label: 'Thinking…' });
    expect(thinkingView({ ...thinking, thinking: { tokens: 12, ms: 1440 } })).toEqual({ text: 'hmm', open: false, label: 'Thinking… · 12 tokens · 1.4 s' });
    expect(thinkingView(thinking, true)).toEqual({ text: 'hmm', open: true, label: 'Thinking…' });
    const answering = { ...thinking, content: 'A', thinking: { tokens: 1, ms: 3210 } };
    expect(thinkingView(answering)).toEqual({ text: 'hmm', open: false, label: 'Thought for 3.2 s · 1 token' });
    expect(thinkingView({ ...answering, pending: false, thinking: undefined }, true)).toEqual({ text: 'hmm', open: true, label: 'Thinking' });
  });

  it('the thinking control: per conversation, persisted, sent with the question (auto: not sent), locked while an answer streams', () => {
    let s = initialState(undefined);
    expect(s.thinking).toBe('auto');
    expect(sendChat({ ...s, draft: 'q' }, 'c0').out).not.toHaveProperty('thinking');
    s = setThinking(s, 'low');
    expect(sendChat({ ...s, draft: 'q' }, 'c1').out).toMatchObject({ type: 'chatSend', thinking: 'low' });
    expect(initialState(JSON.parse(JSON.stringify(persisted(s)))).thinking).toBe('low');
    expect(initialState({ thinking: 'maximum' }).thinking).toBe('auto');
    const streaming = sendChat({ ...s, draft: 'q' }, 'c2').state;
    expect(setThinking(streaming, 'off').thinking).toBe('low');
    // The stats follow the stream; the server's count at the end wins over the pieces counted.
    const done = apply(streaming,
      { type: 'chatReasoning', chatId: 'c2', text: 'a', thinking: { tokens: 1, ms: 0 } },
      { type: 'chatReasoning', chatId: 'c2', text: 'b', thinking: { tokens: 2, ms: 500 } },
      { type: 'chatDelta', chatId: 'c2', text: 'ans' },
      { type: 'chatEnd', chatId: 'c2', end: { ...end, usage: { promptTokens: 3, completionTokens: 9, cachedTokens: 0, reasoningTokens: 7 } } });
    expect(done.turns.at(-1)!.thinking).toEqual({ tokens: 7, ms: 500 });
  });
});

describe('panel hub with thinking', () => {
  it('streams thinking as chatReasoning with its count and time, the answer as chatDelta, and keeps only the answer as conversation', async () => {
    const requests: ChatCall[] = [];
    const client = {
      async *chatStream(req: ChatCall): AsyncGenerator<ChatEvent> {
        requests.push(req);
        yield { type: 'reasoning', text: 'pl' };
        yield { type: 'reasoning', text: 'an' };
        yield { type: 'text', text: 'Answer' };
        yield { type: 'done', finishReason: 'stop', usage: null, timings: null };
      },
      tokenize: async (t: string) => t.split(' '),
      models: async () => [{ id: 'm', contextLength: 4096, maxOutputTokens: null, toolCalling: false }],
    } as unknown as PanelClient;
    const hub = new PanelHub({
      client: () => client, chatClient: () => client, ensureClient: async () => client, runCommand: () => undefined, revealSession: () => undefined,
      clearBench: async () => undefined, visibilityChanged: () => undefined, log: () => undefined,
      editor: { copy: async () => undefined, insert: async () => null, apply: async () => null, context: async () => null },
    });
    const posted: ToWebview[] = [];
    const view = hub.attach({ post: (m) => posted.push(m) }, true);
    await view.receive({ type: 'chatSend', chatId: 'c1', name: 'n', messages: [{ role: 'user', content: 'q' }] });
    expect(posted.filter((m) => m.type === 'chatReasoning')).toEqual([
      { type: 'chatReasoning', chatId: 'c1', text: 'pl', thinking: { tokens: 1, ms: 0 } },
      { type: 'chatReasoning', chatId: 'c1', text: 'an', thinking: { tokens: 2, ms: expect.any(Number) } },
    ]);
    expect(requests[0]).not.toHaveProperty('reasoningEffort');
    expect(posted.filter((m) => m.type === 'chatDelta')).toEqual([{ type: 'chatDelta', chatId: 'c1', text: 'Answer' }]);
    expect(hub.lastConversation()).toEqual({ name: 'n', messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'Answer' }] });

    // A view that opens later gets the answer and its thinking.
    const later: ToWebview[] = [];
    const v2 = hub.attach({ post: (m) => later.push(m) }, true);
    await v2.receive({ type: 'ready', tab: 'chat' });
    expect(later.filter((m) => m.type === 'chatSnapshot')).toEqual([{ type: 'chatSnapshot', chatId: 'c1', text: 'Answer', reasoning: 'plan', thinking: { tokens: 2, ms: expect.any(Number) } }]);

    // The conversation's thinking control becomes the request's reasoning_effort.
    await view.receive({ type: 'chatSend', chatId: 'c2', name: 'n', messages: [{ role: 'user', content: 'q' }], thinking: 'low' });
    await view.receive({ type: 'chatSend', chatId: 'c3', name: 'n', messages: [{ role: 'user', content: 'q' }], thinking: 'off' });
    await view.receive({ type: 'chatSend', chatId: 'c4', name: 'n', messages: [{ role: 'user', content: 'q' }], thinking: 'high' });
    expect(requests.slice(1).map((r) => r.reasoningEffort)).toEqual(['low', 'none', 'high']);
    expect(validateFromWebview({ type: 'chatSend', chatId: 'c5', name: 'n', messages: [{ role: 'user', content: 'q' }], thinking: 'max' })).toMatchObject({ ok: false, reason: expect.stringContaining('thinking must be one of') });
  });
});

describe('client: reasoning_content in a chat stream', () => {
  it('reads delta.reasoning_content, and delta.reasoning from servers that use that name', () => {
    expect(reasoningOf({ choices: [{ delta: { reasoning_content: 'a' } }] })).toBe('a');
    expect(reasoningOf({ choices: [{ delta: { reasoning: 'b', content: 'x' } }] })).toBe('b');
    expect(reasoningOf({ choices: [{ delta: { content: 'x' } }] })).toBe('');
    expect(reasoningOf({ choices: [] })).toBe('');
    expect(reasoningOf(null)).toBe('');
  });

  let server: Server;
  let base = '';
  const bodies: unknown[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => { text += c; });
      req.on('end', () => { bodies.push(JSON.parse(text || '{}')); answer(res); });
    });
    const answer = (res: import('node:http').ServerResponse): void => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (delta: object, finish: string | null = null) => res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      send({ role: 'assistant', content: '' });
      send({ reasoning_content: 'plan' });
      send({ reasoning_content: ' more' });
      send({ content: 'answer' });
      send({}, 'stop');
      res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4, completion_tokens_details: { reasoning_tokens: 2 } } })}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const a = server.address();
    base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  });
  afterAll(() => { server.closeAllConnections(); server.close(); });

  it('yields thinking as reasoning events, apart from the answer text, in stream order', async () => {
    const c = new StrataClient({ baseUrl: base });
    const events: ChatEvent[] = [];
    for await (const e of c.chatStream({ messages: [{ role: 'user', content: 'q' }], reasoningEffort: 'low' }, new AbortController().signal)) events.push(e);
    expect(bodies[0]).toMatchObject({ reasoning_effort: 'low' });
    expect(events.at(-1)).toMatchObject({ type: 'done', usage: { completionTokens: 3, reasoningTokens: 2 } });
    expect(events.map((e) => (e.type === 'reasoning' || e.type === 'text' ? `${e.type}:${e.text}` : e.type))).toEqual([
      'reasoning:plan', 'reasoning: more', 'text:answer', 'done',
    ]);
  });
});
