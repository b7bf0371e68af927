// The panel's answers: the runner plain chat and Agent mode share (AnswerRuns: one run per chat,
// streamed to every view, Stop, replay, the finished ones kept) and plain chat on it (PanelChats).
// The chat client is scripted (its stream says what the test needs); the context planner is real.
import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../extension/client/client.js';
import type { ChatMessage } from '../../contract/chat.js';
import type { ToWebview } from '../../contract/panel.js';
import { AnswerRuns, emptyEnd, KEEP_FINISHED, newAnswer } from '../../extension/chat/answer-runs.js';
import { PanelChats, type ChatClient } from '../../extension/panel/panel-chats.js';
import { ContextPlanner } from '../../extension/context/planner.js';

/** A client whose stream yields `events`, then (hold) waits until the request is aborted. */
function scripted(events: ChatEvent[], hold = false): ChatClient & { asked: ChatMessage[][] } {
  const asked: ChatMessage[][] = [];
  return {
    asked,
    tokenize: async (text: string) => text.split(/\s+/).filter(Boolean).map((_, i) => i),
    models: async () => [{ id: 'm', contextLength: 4096 }],
    async *chatStream(req: { messages: ChatMessage[] }, signal: AbortSignal): AsyncGenerator<ChatEvent> {
      asked.push(req.messages);
      for (const ev of events) yield ev;
      if (hold) {
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
      }
    },
  } as unknown as ChatClient & { asked: ChatMessage[][] };
}

function panel(client: ChatClient, clock = { t: 0 }) {
  const seen: ToWebview[] = [];
  const chats = new PanelChats(async () => client, new ContextPlanner(), (m) => seen.push(m), () => clock.t);
  return { chats, seen };
}

const user = (content: string): ChatMessage[] => [{ role: 'user', content }];
const usage = { promptTokens: 3, completionTokens: 2, cachedTokens: 0 };

describe('PanelChats on the shared runner', () => {
  it('streams the answer to every view, ends with the usage, and keeps the conversation with the answer', async () => {
    const client = scripted([{ type: 'reasoning', text: 'hm' }, { type: 'text', text: 'Hel' }, { type: 'text', text: 'lo' },
      { type: 'done', finishReason: 'stop', usage, timings: null }]);
    const { chats, seen } = panel(client);
    await chats.run('c1', 'talk', user('say hello'), []);
    expect(seen.map((m) => m.type)).toEqual(['chatSent', 'chatReasoning', 'chatDelta', 'chatDelta', 'chatEnd']);
    expect(seen.at(-1)).toEqual({ type: 'chatEnd', chatId: 'c1', end: { ...emptyEnd(), usage } });
    expect(chats.last()).toEqual({ name: 'talk', messages: [...user('say hello'), { role: 'assistant', content: 'Hello' }] });
    // A view that comes back sees the question, the answer with its thinking (one piece, no time on a stopped clock), and the end.
    expect(chats.replay()).toEqual([
      { type: 'chatSent', chatId: 'c1', content: 'say hello', note: null },
      { type: 'chatSnapshot', chatId: 'c1', text: 'Hello', reasoning: 'hm', thinking: { tokens: 1, ms: 0 } },
      { type: 'chatEnd', chatId: 'c1', end: { ...emptyEnd(), usage } },
    ]);
  });

  it('Stop ends the answer as cancelled with what arrived, never as an error', async () => {
    const client = scripted([{ type: 'text', text: 'one ' }, { type: 'text', text: 'two' }], true);
    const clock = { t: 100 };
    const { chats, seen } = panel(client, clock);
    const running = chats.run('c1', 'n', user('count'), []);
    while (!seen.some((m) => m.type === 'chatDelta' && m.text === 'two')) await new Promise((r) => setImmediate(r));
    // A second run of the same chat while it runs does nothing.
    await chats.run('c1', 'n', user('again'), []);
    expect(client.asked).toHaveLength(1);
    expect(chats.replay().map((m) => m.type)).toEqual(['chatSent', 'chatSnapshot']);
    clock.t = 350;
    chats.stop('c1');
    await running;
    expect(seen.at(-1)).toEqual({ type: 'chatEnd', chatId: 'c1', end: { ...emptyEnd(), cancelled: true, partial: { tokens: 2, ms: 250 } } });
  });

  it('a failed request ends with its error; the conversation keeps the question', async () => {
    const client = scripted([]);
    (client as { chatStream: unknown }).chatStream = async function* () { yield* []; throw new Error('the server answered 503'); };
    const { chats, seen } = panel(client);
    await chats.run('c1', 'n', user('hi'), []);
    expect(seen.at(-1)).toEqual({ type: 'chatEnd', chatId: 'c1', end: { ...emptyEnd(), error: 'the server answered 503' } });
    expect(chats.last()).toEqual({ name: 'n', messages: user('hi') });
  });
});

describe('AnswerRuns', () => {
  it(`keeps the last ${KEEP_FINISHED} finished answers for replay, the oldest going first, and never a running one`, async () => {
    const seen: ToWebview[] = [];
    const runs = new AnswerRuns((m) => seen.push(m), (chatId) => [{ type: 'chatDelta', chatId, text: '(more)' }]);
    let release!: () => void;
    const held = runs.run('held', newAnswer(), () => new Promise((r) => { release = () => r(emptyEnd()); }));
    for (let i = 0; i < KEEP_FINISHED + 3; i++) await runs.run(`c${i}`, newAnswer(), async (a) => { runs.text(`c${i}`, a, `answer ${i}`); return emptyEnd(); });
    const ids = (): string[] => [...new Set(runs.replay().map((m) => (m as { chatId: string }).chatId))];
    expect(ids()).toEqual(['held', ...Array.from({ length: KEEP_FINISHED }, (_, i) => `c${i + 3}`)]);
    expect(runs.replay().filter((m) => m.type === 'chatDelta')).toHaveLength(KEEP_FINISHED + 1);
    expect(runs.anyRunning()).toBe(true);
    release();
    await held;
    expect(runs.anyRunning()).toBe(false);
    // The answer that ended last stays; the oldest finished one goes.
    expect(ids()).toEqual([...Array.from({ length: KEEP_FINISHED - 1 }, (_, i) => `c${i + 4}`), 'held']);
  });

  it("a plan's error ends the answer after its question was shown", async () => {
    const seen: ToWebview[] = [];
    const runs = new AnswerRuns(seen.push.bind(seen));
    await runs.run('c', newAnswer(), async (a) => {
      runs.sent('c', a, { content: 'q', note: 'trimmed', error: 'the question alone is longer than the context' });
      return emptyEnd();
    });
    expect(seen).toEqual([
      { type: 'chatSent', chatId: 'c', content: 'q', note: 'trimmed' },
      { type: 'chatEnd', chatId: 'c', end: { ...emptyEnd(), error: 'the question alone is longer than the context' } },
    ]);
  });
});
