// Keeps an agent run's conversation within the chat model's context per slot: measures the prompt
// before each step (PromptMeter), compacts it when the next step would not leave room for the
// answer (compaction.ts decides how: stubs, then a summary the model writes), tells the panel the
// context use, and keeps the figures of what the prompts cost (sent, computed, re-read).
import type { ChatMessage, Usage } from '../../contract/chat.js';
import type { AgentCompactionView, AgentContextView } from '../../contract/agent.js';
import type { StrataClient } from '../client/client.js';
import type { ToolSpec } from '../client/types.js';
import type { TokenCounter } from './budget.js';
import {
  applyStubs, compactionLabel, compactionLimits, lastStepIndex, planStubs, SUMMARY_PROMPT, summarised, summaryCut, summaryInput,
  sumTokens, type CompactionLimits, type Sized,
} from './compaction.js';
import { PromptMeter } from './context-budget.js';

export interface ContextStats {
  /** The chat model's context per slot (null: the server did not say; nothing was compacted). */
  ctx: number | null;
  /** Model requests: the steps and the summary requests. */
  requests: number;
  /** Prompt tokens sent, all requests together. */
  promptTokens: number;
  /** Of those, the ones the server computed (not reused from its KV cache). */
  computedTokens: number;
  /** The least that had to be computed: the first prompt, then each step's new messages once. */
  newTokens: number;
  compactions: Array<{ kind: 'stubs' | 'summary'; before: number; after: number; reread: number }>;
  /** Tokens computed again outside compactions (the server's cache did not hold the prefix). */
  rereadElsewhere: number;
}

export type KeeperEvent = { type: 'context'; context: AgentContextView } | { type: 'compaction'; compaction: AgentCompactionView };

export interface KeeperDeps {
  client: Pick<StrataClient, 'chatStream'>;
  tools: ToolSpec[];
  model?: string | undefined;
  countTokens?: TokenCounter | undefined;
  /** The steps' answer cap: the room compaction keeps for it (at most 15% of the context). */
  maxTokens: number;
  contextWindow?: ((signal: AbortSignal) => Promise<number | null>) | undefined;
  onEvent(e: KeeperEvent): void;
}

/** Where in the run a compaction happens (for its marker and label). */
interface At { step: number | null; afterSteps: number }

export class ContextKeeper {
  readonly stats: ContextStats = { ctx: null, requests: 0, promptTokens: 0, computedTokens: 0, newTokens: 0, compactions: [], rereadElsewhere: 0 };
  private readonly meter: PromptMeter;
  private window: Promise<number | null> | undefined;
  private toolsTokens: number | undefined;
  /** Messages whose tokens are in newTokens already (compaction's own messages count as none). */
  private readonly counted = new WeakSet<ChatMessage>();
  private pendingNew = 0;
  /** The compaction the next requests' re-reads belong to. */
  private open: ContextStats['compactions'][number] | null = null;
  /** The first step of the run the conversation still holds (the ones before were summarised). */
  private firstLive = 1;
  private seq = 0;

  constructor(private readonly deps: KeeperDeps) {
    this.meter = new PromptMeter(deps.countTokens);
  }

  private async limits(signal: AbortSignal): Promise<CompactionLimits | null> {
    this.window ??= (this.deps.contextWindow?.(signal) ?? Promise.resolve(null)).catch(() => null);
    const ctx = await this.window;
    this.stats.ctx = ctx;
    return ctx ? compactionLimits(ctx, this.deps.maxTokens) : null;
  }

  private async measure(messages: readonly ChatMessage[], signal: AbortSignal): Promise<{ sized: Sized[]; prompt: number }> {
    this.toolsTokens ??= this.deps.tools.length ? await this.meter.tokens(JSON.stringify(this.deps.tools), signal) : 0;
    const sized = await this.meter.sized(messages, signal);
    return { sized, prompt: this.meter.promptOf(sized, this.toolsTokens) };
  }

  /** Before step `step`: the compacted conversation to send instead, or null to send it as it is. */
  async beforeStep(conv: readonly ChatMessage[], at: { step: number; afterSteps: number }, signal: AbortSignal): Promise<ChatMessage[] | null> {
    const limits = await this.limits(signal);
    const { sized, prompt } = await this.measure(conv, signal);
    this.pendingNew = sized.filter((s) => !this.counted.has(s.message)).reduce((n, s) => n + s.tokens, 0);
    if (!limits || prompt <= limits.high) {
      this.deps.onEvent({ type: 'context', context: { used: prompt, ctx: limits?.ctx ?? null } });
      return this.markCounted(null, conv);
    }
    const out = await this.compact(sized, prompt, limits, at, false, signal);
    if (!out) this.deps.onEvent({ type: 'context', context: { used: prompt, ctx: limits.ctx } });
    return this.markCounted(out?.messages ?? null, conv);
  }

  private markCounted(out: ChatMessage[] | null, conv: readonly ChatMessage[]): ChatMessage[] | null {
    for (const m of out ?? conv) this.counted.add(m);
    return out;
  }

  /** After a step's request: the server's count calibrates the next estimate. */
  async afterStep(sent: readonly ChatMessage[], usage: Usage | null, signal: AbortSignal): Promise<void> {
    if (!usage) return;
    const first = this.stats.requests === 0;
    this.meter.observe(await this.meter.sized(sent, signal), usage.promptTokens);
    this.record(usage, first ? usage.promptTokens : this.pendingNew, true);
    this.deps.onEvent({ type: 'context', context: { used: usage.promptTokens + usage.completionTokens, ctx: this.stats.ctx } });
  }

  private record(usage: Usage, fresh: number, closes: boolean): void {
    const computed = usage.promptTokens - (usage.cachedTokens ?? 0);
    this.stats.requests++;
    this.stats.promptTokens += usage.promptTokens;
    this.stats.computedTokens += computed;
    if (closes) this.stats.newTokens += fresh;
    const reread = Math.max(0, computed - fresh);
    if (this.open) this.open.reread += reread;
    else this.stats.rereadElsewhere += reread;
    if (closes) this.open = null;
  }

  /** The panel's Compact: a summary of the conversation (stubs when there is nothing to summarise). */
  async compactNow(messages: readonly ChatMessage[], signal: AbortSignal): Promise<{ messages: ChatMessage[]; compaction: AgentCompactionView } | null> {
    const limits = await this.limits(signal);
    if (!limits) throw new Error('the server does not say its context per slot, so there is nothing to compact against');
    const { sized, prompt } = await this.measure(messages, signal);
    return this.compact(sized, prompt, limits, { step: null, afterSteps: -1 }, true, signal);
  }

  private async compact(sized: Sized[], prompt: number, limits: CompactionLimits, at: At, force: boolean, signal: AbortSignal): Promise<{ messages: ChatMessage[]; compaction: AgentCompactionView } | null> {
    const messages = sized.map((s) => s.message);
    // Older results first: cheap, and the conversation keeps every step's call.
    const plan = force ? { indices: [], tokens: prompt } : planStubs(sized, lastStepIndex(messages), prompt, limits.low);
    const stubbed = plan.indices.length ? applyStubs(sized, plan.indices) : messages;
    if (!force && plan.tokens <= limits.low) return this.done('stubs', stubbed, plan.indices.length, null, prompt, at, signal);
    const cut = summaryCut(messages);
    if (!cut) return plan.indices.length ? this.done('stubs', stubbed, plan.indices.length, null, prompt, at, signal) : null;
    // The summary request: the conversation with the stubs just planned (the server's KV holds it up
    // to the first new stub; the older stubs are in it from earlier compactions), less of it if it must.
    const instruction: ChatMessage = { role: 'user', content: SUMMARY_PROMPT };
    const instructionTokens = await this.meter.sizeOf(instruction, signal);
    const base = plan.indices.length ? await this.meter.sized(stubbed, signal) : sized;
    const input = summaryInput(base, cut, limits.ctx - limits.summaryMaxTokens - instructionTokens, prompt - sumTokens(sized));
    if (!input) return plan.indices.length ? this.done('stubs', stubbed, plan.indices.length, null, prompt, at, signal) : null;
    const entry = { kind: 'summary' as const, before: prompt, after: prompt, reread: 0 };
    this.stats.compactions.push(entry);
    this.open = entry;
    let summary = '';
    for await (const ev of this.deps.client.chatStream({
      messages: [...input.messages, instruction], tools: this.deps.tools, toolChoice: 'none', maxTokens: limits.summaryMaxTokens,
      ...(this.deps.model ? { model: this.deps.model } : {}),
    }, signal)) {
      if (ev.type === 'text') summary += ev.text;
      else if (ev.type === 'done' && ev.usage) this.record(ev.usage, instructionTokens, false);
    }
    signal.throwIfAborted();
    if (!summary.trim()) {
      this.stats.compactions.pop();
      this.open = null;
      return plan.indices.length ? this.done('stubs', stubbed, plan.indices.length, null, prompt, at, signal) : null;
    }
    const steps = at.step !== null && at.step - 2 >= this.firstLive ? { from: this.firstLive, to: at.step - 2 } : null;
    const label = compactionLabel(plan.indices.length, steps ?? (at.step === null ? 'conversation' : 'earlier'));
    const next = summarised(messages, cut, label, summary);
    if (at.step !== null) this.firstLive = at.step - 1;
    return this.done('summary', next, plan.indices.length, { label, summary, steps }, prompt, at, signal, entry);
  }

  private async done(kind: 'stubs' | 'summary', messages: ChatMessage[], elided: number, summary: { label: string; summary: string; steps: { from: number; to: number } | null } | null,
    before: number, at: At, signal: AbortSignal, started?: ContextStats['compactions'][number]): Promise<{ messages: ChatMessage[]; compaction: AgentCompactionView }> {
    const { prompt: after } = await this.measure(messages, signal);
    const entry = started ?? { kind, before, after, reread: 0 };
    entry.after = after;
    if (!started) this.stats.compactions.push(entry);
    this.open = entry;
    const compaction: AgentCompactionView = {
      id: `c${++this.seq}`, afterSteps: at.afterSteps, elided, steps: summary?.steps ?? null, summary: summary?.summary ?? null,
      label: summary?.label ?? compactionLabel(elided, null), before, after,
    };
    this.deps.onEvent({ type: 'compaction', compaction });
    this.deps.onEvent({ type: 'context', context: { used: after, ctx: this.stats.ctx } });
    return { messages, compaction };
  }
}
