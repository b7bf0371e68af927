// The agent conversation's size in tokens before each step: the server's own count of the last
// prompt (usage.prompt_tokens) plus what was added since, counted with the server's tokenizer
// (/v1/tokenize; a character estimate without one). The same per-message sizes tell compaction
// (compaction.ts) what each message weighs.
import type { ChatMessage } from '../../contract/chat.js';
import { estimateTokens, type TokenCounter } from './budget.js';
import { MESSAGE_OVERHEAD, sumTokens, type Sized } from './compaction.js';

const MAX_CACHED = 2048;

export class PromptMeter {
  private readonly counts = new Map<string, number>();
  /** The server's prompt size less the sum of the message sizes (tools, template): set by each usage. */
  private extra: number | null = null;

  constructor(private readonly count: TokenCounter | undefined) {}

  /** Tokens of a text (cached; the server's tokenizer, else an estimate). */
  async tokens(text: string, signal: AbortSignal): Promise<number> {
    if (!text) return 0;
    const hit = this.counts.get(text);
    if (hit !== undefined) return hit;
    let n = estimateTokens(text);
    if (this.count) {
      try {
        n = await this.count(text, signal);
      } catch (err) {
        if (signal.aborted) throw err;
      }
    }
    if (this.counts.size >= MAX_CACHED) this.counts.delete(this.counts.keys().next().value!);
    this.counts.set(text, n);
    return n;
  }

  /** A message's size: its content, its calls (name and arguments), the template's markup around it. */
  async sizeOf(m: ChatMessage, signal: AbortSignal): Promise<number> {
    let n = MESSAGE_OVERHEAD + await this.tokens(m.content, signal);
    for (const c of m.toolCalls ?? []) n += await this.tokens(`${c.name}${c.arguments}`, signal) + 4;
    return n;
  }

  async sized(messages: readonly ChatMessage[], signal: AbortSignal): Promise<Sized[]> {
    const out: Sized[] = [];
    for (const message of messages) out.push({ message, tokens: await this.sizeOf(message, signal) });
    return out;
  }

  /** The prompt these messages make, as the server would count it (calibrated by the last usage). */
  promptOf(sized: readonly Sized[], toolsTokens: number): number {
    return sumTokens(sized) + (this.extra ?? toolsTokens);
  }

  /** The server counted `promptTokens` for a request of these messages: later estimates start from it. */
  observe(sized: readonly Sized[], promptTokens: number): void {
    this.extra = promptTokens - sumTokens(sized);
  }
}
