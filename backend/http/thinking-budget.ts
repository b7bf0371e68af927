// A reasoning model's thinking budget as the engine samples it: `<think>` and the family's end of
// thinking (`\n</think>\n\n`, as the models write it) in the model's tokens; once the budget is
// spent inside the thinking, the engine writes the end itself and the answer goes on
// (SamplingParams.thinkingBudget). The budget comes from the request (Anthropic's
// thinking.budget_tokens), its reasoning effort (--reasoning-effort-budgets) or the server's
// --reasoning-budget; thinking switched off needs none.
import type { SamplingParams } from '../../native/lib/addon.js';
import type { RenderedPrompt } from '../chat/chat-prompt.js';
import { promptOpensThinking } from '../chat/reasoning.js';
import type { AppContext } from './app-context.js';
import { onEngine } from './generation.js';

const OPEN = '<think>';
const CLOSE = '\n</think>\n\n';

/**
 * The budget a request thinks within: its own (Messages' thinking.budget_tokens), else its effort's
 * (low, medium, high: --reasoning-effort-budgets; none and minimal switch thinking off, so need
 * none), else the server's --reasoning-budget.
 */
export function budgetOf(app: Pick<AppContext, 'config'>, given: { budget?: number | null; effort?: string | null }): number {
  if (given.budget !== undefined && given.budget !== null) return given.budget;
  // xhigh (OpenAI's effort above high) thinks within high's budget, the most this server offers.
  const level = ['low', 'medium', 'high'].indexOf(given.effort === 'xhigh' ? 'high' : given.effort ?? '');
  if (level >= 0) return app.config.reasoningEffortBudgets[level] ?? app.config.reasoningBudget;
  return app.config.reasoningBudget;
}

/**
 * The sampling a request generates with, its thinking budget added; `budget` null or < 0: none. A
 * budget beyond the context per slot cannot be spent there, so it is the context (an effort's
 * default budget, 16,384 for high, is more than a small context holds).
 */
export async function withThinkingBudget(
  app: AppContext, sampling: SamplingParams, rendered: RenderedPrompt, budget: number | null,
): Promise<SamplingParams> {
  if (budget === null || budget < 0) return sampling;
  const [open, close, ctx] = await onEngine(app, 'tokenize', 'the engine could not tokenize the thinking tags', async (c) => [
    ...await Promise.all([c.tokenize(OPEN, false, true), c.tokenize(CLOSE, false, true)]), c.info?.ctx ?? budget,
  ] as const);
  return { ...sampling, thinkingBudget: { tokens: Math.min(budget, ctx), open, close, inside: promptOpensThinking(rendered.text) } };
}
