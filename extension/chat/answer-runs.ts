// The panel's answers as every view sees them, for plain chat (panel/panel-chats.ts) and Agent mode
// (agent/agent-chats.ts) alike: one run per chatId, its question as sent, its text and thinking
// streamed to every view, Stop, the running and recently finished answers replayed to a view that
// comes back, and the end. What a run does between is the caller's. No vscode: unit-tested.
import type { ChatEndInfo, ThinkingStats, ToWebview } from '../../contract/panel.js';

/** What every answer holds; a caller's answer may hold more (an agent's steps). */
export interface Answer {
  text: string;
  /** The model's thinking, shown in the panel but never part of the conversation. */
  reasoning: string;
  /** The thinking's token count and time, for the panel's Thinking block. */
  thinking?: ThinkingStats;
  /** The question as sent, after the context was fitted to the model. */
  sent: { content: string; note: string | null } | null;
  ac: AbortController;
  /** null while it runs. */
  end: ChatEndInfo | null;
}

/** Finished answers kept for views that come back (the oldest go first). */
export const KEEP_FINISHED = 20;

export const newAnswer = (): Answer => ({ text: '', reasoning: '', sent: null, ac: new AbortController(), end: null });

export const emptyEnd = (): ChatEndInfo => ({ usage: null, timings: null, error: null, cancelled: false });

export class AnswerRuns<A extends Answer> {
  private readonly answers = new Map<string, A>();

  constructor(
    private readonly broadcast: (m: ToWebview) => void,
    /** What a view needs of an answer besides its question, text and end (an agent's steps). */
    private readonly replayMore: (chatId: string, a: A) => ToWebview[] = () => [],
  ) {}

  isRunning(chatId: string): boolean {
    const a = this.answers.get(chatId);
    return !!a && a.end === null;
  }

  anyRunning(): boolean {
    return [...this.answers.values()].some((a) => a.end === null);
  }

  stop(chatId: string): void {
    const a = this.answers.get(chatId);
    if (a && !a.end) a.ac.abort();
  }

  stopAll(): void {
    for (const a of this.answers.values()) if (!a.end) a.ac.abort();
  }

  /** Everything a view that (re)opens needs to show these answers (the finished ones in the order they ended). */
  replay(): ToWebview[] {
    const out: ToWebview[] = [];
    for (const [chatId, a] of this.answers) {
      if (a.sent) out.push({ type: 'chatSent', chatId, content: a.sent.content, note: a.sent.note });
      out.push({ type: 'chatSnapshot', chatId, text: a.text, ...(a.reasoning ? { reasoning: a.reasoning } : {}), ...(a.thinking ? { thinking: a.thinking } : {}) });
      out.push(...this.replayMore(chatId, a));
      if (a.end) out.push({ type: 'chatEnd', chatId, end: a.end });
    }
    return out;
  }

  /**
   * Runs `body` as the answer `chatId` (nothing while that answer runs already; a finished one is
   * replaced). A throw ends it with the error, or as cancelled after Stop. `settle` sees the end
   * before the views do (to adjust it, or to keep the conversation it leaves).
   */
  async run(chatId: string, a: A, body: (a: A) => Promise<ChatEndInfo>, settle?: (end: ChatEndInfo) => ChatEndInfo): Promise<void> {
    if (this.isRunning(chatId)) return;
    this.answers.delete(chatId);
    this.answers.set(chatId, a);
    let end: ChatEndInfo;
    try {
      end = await body(a);
    } catch (err) {
      const cancelled = a.ac.signal.aborted;
      end = { ...emptyEnd(), error: cancelled ? null : (err as Error).message, cancelled };
    }
    a.end = settle ? settle(end) : end;
    this.broadcast({ type: 'chatEnd', chatId, end: a.end });
    // Finished answers in the order they ended: the one that ran longest is not the first to go.
    this.answers.delete(chatId);
    this.answers.set(chatId, a);
    const done = [...this.answers].filter(([, x]) => x.end);
    for (const [id] of done.slice(0, Math.max(0, done.length - KEEP_FINISHED))) this.answers.delete(id);
  }

  /** The question as sent (every view shows it); a plan that could not be made ends the answer with its error. */
  sent(chatId: string, a: A, plan: { content: string; note: string | null; error: string | null }): void {
    a.sent = { content: plan.content, note: plan.note };
    this.broadcast({ type: 'chatSent', chatId, content: plan.content, note: plan.note });
    if (plan.error) throw new Error(plan.error);
  }

  text(chatId: string, a: A, text: string): void {
    a.text += text;
    this.broadcast({ type: 'chatDelta', chatId, text });
  }

  reasoning(chatId: string, a: A, text: string, thinking?: ThinkingStats): void {
    a.reasoning += text;
    if (thinking) a.thinking = thinking;
    this.broadcast({ type: 'chatReasoning', chatId, text, ...(thinking ? { thinking } : {}) });
  }
}
