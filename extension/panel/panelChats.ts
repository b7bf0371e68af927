// The panel's chat streams: plans each request (context fitted to the model, ContextPlanner),
// streams the answer to every view, keeps running and recently finished answers for views that
// come back, and the conversation last used (for "Save Session"). No vscode: unit-tested.
import type { StrataClient } from '../client/client.js';
import type { ChatMessage } from '../../contract/chat.js';
import { CHAT_MAX_TOKENS } from '../client/types.js';
import type { ContextPlanner } from '../context/planner.js';
import type { ChatEndInfo, ContextItem, ThinkingLevel, ThinkingStats, ToWebview } from '../../contract/panel.js';

/** The thinking control as the request's reasoning_effort (auto: not sent, the server decides). */
const EFFORT = { auto: undefined, off: 'none', low: 'low', high: 'high' } as const;

export type ChatClient = Pick<StrataClient, 'chatStream' | 'tokenize' | 'models'>;

/** reasoning: the model's thinking, shown in the panel but never part of the conversation. */
interface RunningChat { text: string; reasoning: string; thinking?: ThinkingStats; sent: { content: string; note: string | null } | null; ac: AbortController }
interface FinishedChat { text: string; reasoning: string; thinking?: ThinkingStats; sent: RunningChat['sent']; end: ChatEndInfo }

const KEEP_FINISHED = 20;

function replayOf(chatId: string, c: { text: string; reasoning: string; thinking?: ThinkingStats; sent: RunningChat['sent'] }): ToWebview[] {
  const out: ToWebview[] = [];
  if (c.sent) out.push({ type: 'chatSent', chatId, content: c.sent.content, note: c.sent.note });
  out.push({ type: 'chatSnapshot', chatId, text: c.text, ...(c.reasoning ? { reasoning: c.reasoning } : {}), ...(c.thinking ? { thinking: c.thinking } : {}) });
  return out;
}

export class PanelChats {
  private readonly running = new Map<string, RunningChat>();
  private readonly finished = new Map<string, FinishedChat>();
  private conversation: { name: string; messages: ChatMessage[] } | undefined;

  constructor(
    private readonly ensureClient: () => Promise<ChatClient>,
    private readonly planner: ContextPlanner,
    private readonly broadcast: (m: ToWebview) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The conversation last used in a panel chat (for "Save Session" from the palette). */
  last(): { name: string; messages: ChatMessage[] } | undefined {
    return this.conversation;
  }

  setLast(name: string, messages: ChatMessage[]): void {
    this.conversation = { name, messages };
  }

  /** Everything a view that (re)opens needs to show the answers of this window's chats. */
  replay(): ToWebview[] {
    const out: ToWebview[] = [];
    for (const [chatId, c] of this.running) out.push(...replayOf(chatId, c));
    for (const [chatId, c] of this.finished) out.push(...replayOf(chatId, c), { type: 'chatEnd', chatId, end: c.end });
    return out;
  }

  stop(chatId: string): void {
    this.running.get(chatId)?.ac.abort();
  }

  stopAll(): void {
    for (const c of this.running.values()) c.ac.abort();
  }

  async run(chatId: string, name: string, messages: ChatMessage[], context: ContextItem[], thinking: ThinkingLevel = 'auto'): Promise<void> {
    if (this.running.has(chatId)) return;
    const ac = new AbortController();
    const run: RunningChat = { text: '', reasoning: '', sent: null, ac };
    this.running.set(chatId, run);
    let end: ChatEndInfo = { usage: null, timings: null, error: null, cancelled: false };
    let firstAt: number | null = null;
    let chunks = 0;
    // The thinking's pieces (one a token as the server streams them) and its span, for the panel's Thinking block.
    let thoughtAt: number | null = null;
    let thoughts = 0;
    let sent: ChatMessage[] = messages;
    this.conversation = { name, messages };
    try {
      const client = await this.ensureClient();
      const plan = await this.planner.plan(client, messages, context);
      const content = plan.messages.at(-1)!.content;
      run.sent = { content, note: plan.note };
      this.broadcast({ type: 'chatSent', chatId, content, note: plan.note });
      if (plan.error) throw new Error(plan.error);
      sent = plan.messages;
      this.conversation = { name, messages: sent };
      const effort = EFFORT[thinking];
      for await (const ev of client.chatStream({ messages: sent, maxTokens: CHAT_MAX_TOKENS, ...(effort ? { reasoningEffort: effort } : {}) }, ac.signal)) {
        if (ev.type === 'text') {
          firstAt ??= this.now();
          chunks++;
          run.text += ev.text;
          this.broadcast({ type: 'chatDelta', chatId, text: ev.text });
        } else if (ev.type === 'reasoning') {
          firstAt ??= this.now();
          run.reasoning += ev.text;
          thoughtAt ??= this.now();
          thoughts++;
          run.thinking = { tokens: thoughts, ms: Math.round(this.now() - thoughtAt) };
          this.broadcast({ type: 'chatReasoning', chatId, text: ev.text, thinking: run.thinking });
        } else if (ev.type === 'done') {
          end = { ...end, usage: ev.usage, timings: ev.timings };
        }
      }
    } catch (err) {
      if (!ac.signal.aborted) end = { ...end, error: (err as Error).message };
    } finally {
      this.running.delete(chatId);
    }
    if (ac.signal.aborted) end = { ...end, cancelled: true, partial: { tokens: chunks, ms: firstAt === null ? 0 : this.now() - firstAt } };
    // The answer only: models expect earlier turns without their thinking.
    if (run.text && this.conversation?.messages === sent) {
      this.conversation = { name, messages: [...sent, { role: 'assistant', content: run.text }] };
    }
    // The server's count of the thinking's tokens, where it gives one, over the pieces counted.
    const counted = end.usage?.reasoningTokens;
    if (run.thinking && counted !== undefined) run.thinking = { ...run.thinking, tokens: counted };
    this.finished.set(chatId, { text: run.text, reasoning: run.reasoning, ...(run.thinking ? { thinking: run.thinking } : {}), sent: run.sent, end });
    while (this.finished.size > KEEP_FINISHED) this.finished.delete(this.finished.keys().next().value!);
    this.broadcast({ type: 'chatEnd', chatId, end });
  }
}
