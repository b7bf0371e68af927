// Counts tokens with the server's tokenizer (cached by text) and plans what a chat request sends:
// the conversation and its context fitted into the model's context per conversation (fit.ts).
// Shared by the panel chat and @strata, so both trim the same way and say so the same way.
import type { StrataClient } from '../client/client.js';
import type { ChatMessage } from '../../contract/chat.js';
import type { ContextItem } from '../../contract/panel.js';
import { fitToContext, promptBudget, type FitPlan } from './fit.js';

export type PlannerClient = Pick<StrataClient, 'tokenize' | 'models'>;

/** Context per conversation when the server does not report one (llama.cpp's old default). */
const FALLBACK_CTX = 4096;
const MAX_CACHED = 512;

/** Characters per token for an estimate when there is no server to ask. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

export class ContextPlanner {
  private readonly counts = new Map<string, number>();
  private ctx: { client: PlannerClient; value: Promise<number> } | undefined;

  /** The server changed (restart, other model): counts and context size no longer hold. */
  reset(): void {
    this.counts.clear();
    this.ctx = undefined;
  }

  async count(client: PlannerClient, text: string): Promise<number> {
    if (!text) return 0;
    const hit = this.counts.get(text);
    if (hit !== undefined) return hit;
    const n = (await client.tokenize(text)).length;
    if (this.counts.size >= MAX_CACHED) this.counts.delete(this.counts.keys().next().value!);
    this.counts.set(text, n);
    return n;
  }

  /** Prompt tokens a conversation may use on this server. */
  async budget(client: PlannerClient): Promise<number> {
    if (this.ctx?.client !== client) {
      const value = client.models().then((m) => m[0]?.contextLength ?? FALLBACK_CTX, () => FALLBACK_CTX);
      this.ctx = { client, value };
    }
    return promptBudget(await this.ctx.value);
  }

  async plan(client: PlannerClient, messages: readonly ChatMessage[], context: readonly ContextItem[]): Promise<FitPlan> {
    return fitToContext(messages, context, await this.budget(client), (t) => this.count(client, t));
  }
}
