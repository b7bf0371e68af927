// How an agent conversation is kept within the model's context per slot. Pure (no I/O): the loop
// (loop.ts) measures the messages, asks this module what to do, and sends the requests.
//
// Compaction works in large steps (hysteresis): it starts when the next prompt would pass `high`
// and brings it down to `low`, so the server re-reads the conversation's KV once per compaction,
// not at every step. First the older tool results become stubs (the latest step's stay whole);
// if that is not enough, the model summarises the conversation and it goes on from the system
// message, the question with the summary, and the last step.
import type { ChatMessage, ToolCall } from '../../contract/chat.js';
import { withSummary } from '../../contract/compaction.js';
import { estimateTokens } from './budget.js';

/** Compaction starts above this share of the context... */
export const HIGH_SHARE = 0.85;
/** ...and brings the prompt down to this share. */
export const LOW_SHARE = 0.5;
/** Longest summary, as a share of the context (and at most SUMMARY_MAX_TOKENS). */
const SUMMARY_SHARE = 0.15;
const SUMMARY_MAX_TOKENS = 1024;

export interface CompactionLimits {
  /** The chat model's context per slot, as the server reports it. */
  ctx: number;
  /** Room kept for the next answer: the answer cap, at most 15% of the context. */
  reserve: number;
  /** A prompt above this is compacted before it is sent. */
  high: number;
  /** What compaction brings the prompt down to. */
  low: number;
  /** The summary's answer cap. */
  summaryMaxTokens: number;
}

export function compactionLimits(ctx: number, maxAnswerTokens: number): CompactionLimits {
  const reserve = Math.max(1, Math.min(maxAnswerTokens, Math.floor(ctx * (1 - HIGH_SHARE))));
  // At most 85% even with a small answer cap: the estimate between two server counts has some slack.
  const high = Math.min(Math.floor(ctx * HIGH_SHARE), ctx - reserve);
  return { ctx, reserve, high, low: Math.min(Math.floor(ctx * LOW_SHARE), high), summaryMaxTokens: Math.min(SUMMARY_MAX_TOKENS, Math.floor(ctx * SUMMARY_SHARE)) };
}

/** A message with its size in tokens (content, calls and the template's markup around it). */
export interface Sized { message: ChatMessage; tokens: number }

export const sumTokens = (sized: readonly Sized[]): number => sized.reduce((n, s) => n + s.tokens, 0);

const STUB_PREFIX = '[elided to save context:';

export const isStub = (m: ChatMessage): boolean => m.role === 'tool' && m.content.startsWith(STUB_PREFIX);

/** The argument that names what a call was about (a path, a command, a query), for stubs and step headers. */
export function mainArgument(args: string): string | null {
  try {
    const o = JSON.parse(args) as Record<string, unknown>;
    for (const k of ['path', 'command', 'query', 'glob', 'url', 'name']) if (typeof o[k] === 'string') return `${k}: ${JSON.stringify(o[k])}`;
    const first = Object.entries(o).find(([, v]) => typeof v === 'string' || typeof v === 'number');
    return first ? `${first[0]}: ${JSON.stringify(first[1])}` : null;
  } catch {
    return null;
  }
}

/** What replaces an older tool result: the call it answered, its size, and that it can be asked for again. */
export function stubText(result: ChatMessage, call: ToolCall | undefined, tokens: number): string {
  const tool = call?.name ?? result.name ?? 'a tool';
  const arg = call ? mainArgument(call.arguments) : null;
  return `${STUB_PREFIX} the result of ${tool}${arg ? `(${arg})` : ''}, ${tokens} tokens, was left out of the conversation to save context. Call the tool again if you need it.]`;
}

/** Index of the last assistant message with calls: its results are the latest and stay whole. -1: none. */
export function lastStepIndex(messages: readonly ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'assistant' && messages[i]!.toolCalls?.length) return i;
  return -1;
}

export interface StubPlan {
  /** Indices of the tool results to replace, oldest first. */
  indices: number[];
  /** The prompt's estimated size once they are stubs. */
  tokens: number;
}

/**
 * Older tool results to stub, oldest first, until the prompt (`current` tokens now) is at most
 * `target`; results at or after `protectFrom` (the latest step's) are never stubbed.
 */
export function planStubs(sized: readonly Sized[], protectFrom: number, current: number, target: number): StubPlan {
  const calls = callsById(sized.map((s) => s.message));
  const indices: number[] = [];
  let tokens = current;
  const end = protectFrom < 0 ? sized.length : protectFrom;
  for (let i = 0; i < end && tokens > target; i++) {
    const { message: m, tokens: n } = sized[i]!;
    if (m.role !== 'tool' || isStub(m)) continue;
    const saved = n - stubTokens(m, calls.get(m.toolCallId ?? ''), n);
    if (saved <= 0) continue;
    indices.push(i);
    tokens -= saved;
  }
  return { indices, tokens };
}

/** Tokens the chat template adds around a message (role markers, a tool response's tags), about. */
export const MESSAGE_OVERHEAD = 8;

const stubTokens = (m: ChatMessage, call: ToolCall | undefined, n: number): number => estimateTokens(stubText(m, call, n)) + MESSAGE_OVERHEAD;

export function callsById(messages: readonly ChatMessage[]): Map<string, ToolCall> {
  const out = new Map<string, ToolCall>();
  for (const m of messages) for (const c of m.toolCalls ?? []) out.set(c.id, c);
  return out;
}

/** The messages with the planned results replaced by stubs (new objects; the input is untouched). */
export function applyStubs(sized: readonly Sized[], indices: readonly number[]): ChatMessage[] {
  const calls = callsById(sized.map((s) => s.message));
  const set = new Set(indices);
  return sized.map(({ message: m, tokens }, i) => (set.has(i) ? { ...m, content: stubText(m, calls.get(m.toolCallId ?? ''), tokens) } : m));
}

// --- the summary --------------------------------------------------------------------------------

export const SUMMARY_PROMPT = [
  'The conversation is about to be compacted to save context: everything above except the system message, the task and the last step will be replaced by your summary.',
  'Write the summary now, without calling a tool. Use these headings:',
  '## Task: what the user asked, in their words where it matters.',
  '## Learned: the facts found so far (files, functions, line numbers, errors, command results) that the rest of the work needs.',
  '## Files changed: each file created or edited and what changed (say which changes the user rejected).',
  '## Left to do: the next steps, in order.',
  'If there is a plan or checklist, restate it with each item\'s state. Be complete but brief.',
].join('\n');

/** Where a summary cuts the conversation. */
export interface SummaryCut {
  /** The system message's index (0) or -1 when there is none. */
  system: number;
  /** The question the conversation goes on from: the last user message before the kept step. */
  question: number;
  /** First message kept after the summary (the last step: its calls and results, and what follows). */
  keepFrom: number;
}

/** null: there is nothing between the question and the last step to summarise. */
export function summaryCut(messages: readonly ChatMessage[]): SummaryCut | null {
  const system = messages[0]?.role === 'system' ? 0 : -1;
  const last = lastStepIndex(messages);
  const keepFrom = last < 0 ? messages.length : last;
  let question = -1;
  for (let i = keepFrom - 1; i > system; i--) if (messages[i]!.role === 'user') { question = i; break; }
  if (question < 0) return null;
  const between = keepFrom - question - 1 + (question - system - 1);
  return between > 0 ? { system, question, keepFrom } : null;
}

export interface SummaryInput {
  /** The messages the summary request sends before SUMMARY_PROMPT. */
  messages: ChatMessage[];
  /** Its estimated prompt size (without SUMMARY_PROMPT). */
  tokens: number;
  /** Tool results it sends as stubs, and whole steps it leaves out, to fit. */
  stubbed: number;
  dropped: number;
}

/**
 * What the summary request sends, within `budget` tokens (the context less the summary's answer
 * and the prompt's own size): the conversation as it is when it fits (the server reuses its KV),
 * else with tool results stubbed oldest first, else without the oldest steps. The system message
 * and the question are always sent. null: even they do not fit.
 */
export function summaryInput(sized: readonly Sized[], cut: SummaryCut, budget: number, overhead: number): SummaryInput | null {
  const whole = sumTokens(sized) + overhead;
  if (whole <= budget) return { messages: sized.map((s) => s.message), tokens: whole, stubbed: 0, dropped: 0 };
  const plan = planStubs(sized, -1, whole, budget);
  const stubbed = applyStubs(sized, plan.indices);
  const calls = callsById(stubbed);
  let items = stubbed.map((message, i) => ({
    message, pinned: i === cut.system || i === cut.question,
    tokens: plan.indices.includes(i) ? stubTokens(sized[i]!.message, calls.get(message.toolCallId ?? ''), sized[i]!.tokens) : sized[i]!.tokens,
  }));
  let tokens = plan.tokens;
  let dropped = 0;
  // Whole steps out, oldest first: an assistant message goes with its results, so every call keeps its result.
  let i = 0;
  while (tokens > budget && i < items.length) {
    if (items[i]!.pinned) { i++; continue; }
    let j = i + 1;
    if (items[i]!.message.role === 'assistant' && items[i]!.message.toolCalls?.length) while (j < items.length && items[j]!.message.role === 'tool') j++;
    tokens -= items.slice(i, j).reduce((n, x) => n + x.tokens, 0);
    items = [...items.slice(0, i), ...items.slice(j)];
    dropped++;
  }
  if (tokens > budget) return null;
  return { messages: items.map((x) => x.message), tokens, stubbed: plan.indices.length, dropped };
}

/** The conversation after a summary: system + the question with the summary + the last step onwards. */
export function summarised(messages: readonly ChatMessage[], cut: SummaryCut, label: string, summary: string): ChatMessage[] {
  const q = messages[cut.question]!;
  return [
    ...(cut.system >= 0 ? [messages[cut.system]!] : []),
    { ...q, content: withSummary(q.content, label, summary) },
    ...messages.slice(cut.keepFrom),
  ];
}

/** The marker's words: "12 tool results elided; steps 1–9 summarised". */
export function compactionLabel(elided: number, summarisedWhat: { from: number; to: number } | 'earlier' | 'conversation' | null): string {
  const parts: string[] = [];
  if (elided > 0) parts.push(`${elided} tool result${elided === 1 ? '' : 's'} elided`);
  const steps = summarisedWhat;
  if (steps === 'earlier') parts.push('the earlier conversation summarised');
  else if (steps === 'conversation') parts.push('the conversation summarised');
  else if (steps) parts.push(steps.from === steps.to ? `step ${steps.from} summarised` : `steps ${steps.from}–${steps.to} summarised`);
  return parts.join('; ') || 'nothing to compact';
}
