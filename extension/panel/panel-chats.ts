// The panel's chat streams: plans each request (context fitted to the model, ContextPlanner),
// streams the answer (through AnswerRuns, the runner Agent mode shares: every view, Stop, replay)
// and keeps the conversation last used (for "Save Session"). No vscode: unit-tested.
import type { StrataClient } from '../client/client.js';
import type { ChatMessage } from '../../contract/chat.js';
import { CHAT_MAX_TOKENS } from '../client/types.js';
import type { ContextPlanner } from '../context/planner.js';
import { THINKING_EFFORT, type ContextItem, type ThinkingLevel, type ToWebview } from '../../contract/panel.js';
import { AnswerRuns, emptyEnd, newAnswer, type Answer } from '../chat/answer-runs.js';

export type ChatClient = Pick<StrataClient, 'chatStream' | 'tokenize' | 'models'>;

export class PanelChats {
  private readonly runs: AnswerRuns<Answer>;
  private conversation: { name: string; messages: ChatMessage[] } | undefined;

  constructor(
    private readonly ensureClient: () => Promise<ChatClient>,
    private readonly planner: ContextPlanner,
    broadcast: (m: ToWebview) => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.runs = new AnswerRuns(broadcast);
  }

  /** The conversation last used in a panel chat (for "Save Session" from the palette). */
  last(): { name: string; messages: ChatMessage[] } | undefined {
    return this.conversation;
  }

  setLast(name: string, messages: ChatMessage[]): void {
    this.conversation = { name, messages };
  }

  /** Everything a view that (re)opens needs to show the answers of this window's chats. */
  replay(): ToWebview[] {
    return this.runs.replay();
  }

  stop(chatId: string): void {
    this.runs.stop(chatId);
  }

  stopAll(): void {
    this.runs.stopAll();
  }

  async run(chatId: string, name: string, messages: ChatMessage[], context: ContextItem[], thinking: ThinkingLevel = 'auto'): Promise<void> {
    if (this.runs.isRunning(chatId)) return;
    let firstAt: number | null = null;
    let chunks = 0;
    // The thinking's pieces (one a token as the server streams them) and its span, for the panel's Thinking block.
    let thoughtAt: number | null = null;
    let thoughts = 0;
    let sent: ChatMessage[] = messages;
    this.conversation = { name, messages };
    const answer = newAnswer();
    await this.runs.run(chatId, answer, async (a) => {
      let end = emptyEnd();
      const client = await this.ensureClient();
      const plan = await this.planner.plan(client, messages, context);
      this.runs.sent(chatId, a, { content: plan.messages.at(-1)!.content, note: plan.note, error: plan.error });
      sent = plan.messages;
      this.conversation = { name, messages: sent };
      const effort = THINKING_EFFORT[thinking];
      try {
        for await (const ev of client.chatStream({ messages: sent, maxTokens: CHAT_MAX_TOKENS, ...(effort ? { reasoningEffort: effort } : {}) }, a.ac.signal)) {
          if (ev.type === 'text') {
            firstAt ??= this.now();
            chunks++;
            this.runs.text(chatId, a, ev.text);
          } else if (ev.type === 'reasoning') {
            firstAt ??= this.now();
            thoughtAt ??= this.now();
            thoughts++;
            this.runs.reasoning(chatId, a, ev.text, { tokens: thoughts, ms: Math.round(this.now() - thoughtAt) });
          } else if (ev.type === 'done') {
            end = { ...end, usage: ev.usage, timings: ev.timings };
          }
        }
      } catch (err) {
        if (!a.ac.signal.aborted) throw err;
      }
      return end;
    }, (end) => {
      // The answer only: models expect earlier turns without their thinking.
      if (answer.text && this.conversation?.messages === sent) {
        this.conversation = { name, messages: [...sent, { role: 'assistant', content: answer.text }] };
      }
      // The server's count of the thinking's tokens, where it gives one, over the pieces counted.
      const counted = end.usage?.reasoningTokens;
      if (answer.thinking && counted !== undefined) answer.thinking = { ...answer.thinking, tokens: counted };
      return answer.ac.signal.aborted ? { ...end, cancelled: true, partial: { tokens: chunks, ms: firstAt === null ? 0 : this.now() - firstAt } } : end;
    });
  }
}
