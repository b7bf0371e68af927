// Compaction in the panel's state: the markers an agent answer shows where it compacted the
// conversation, the context meter's figure, and the conversation the next question goes on from
// (a compacted answer's whole conversation replaces the turns before it). Pure: unit-tested.
import type { ChatMessage } from '../contract/chat.js';
import type { AgentCompactionView, AgentContextView } from '../contract/agent.js';
import { splitSummary } from '../contract/compaction.js';
import { turnMessages, type AgentTurnPart } from './agent-turns.js';

/** The compaction fields a turn carries (state.ts's ChatTurn has them). */
export interface CompactionTurnPart extends AgentTurnPart {
  /** Where the answer (or the Compact action after it) compacted the conversation. */
  compactions?: AgentCompactionView[];
  /** The whole conversation to go on from after this turn, when it was compacted. */
  agentBase?: ChatMessage[];
  /** The agent conversation's context use after this turn. */
  agentContext?: AgentContextView;
}

export function addCompaction(list: readonly AgentCompactionView[] | undefined, c: AgentCompactionView): AgentCompactionView[] {
  return [...(list ?? []).filter((x) => x.id !== c.id), c];
}

/** The messages of the turns to send: from the last compacted turn's conversation on, else all. */
export function compactedConversation(turns: readonly CompactionTurnPart[]): ChatMessage[] {
  let from = -1;
  for (let i = turns.length - 1; i >= 0; i--) if (turns[i]!.agentBase) { from = i; break; }
  if (from < 0) return turns.flatMap(turnMessages);
  return [...turns[from]!.agentBase!.map((m) => ({ ...m })), ...turns.slice(from + 1).flatMap(turnMessages)];
}

/** The Compact action's result: the last turn carries the compacted conversation and its marker. */
export function withCompacted<T extends CompactionTurnPart>(turns: readonly T[], messages: ChatMessage[], compaction: AgentCompactionView, context: AgentContextView | null): T[] {
  if (!turns.length) return turns.slice();
  const out = turns.slice();
  const last = out[out.length - 1]!;
  out[out.length - 1] = {
    ...last, agentBase: messages, compactions: addCompaction(last.compactions, { ...compaction, afterSteps: -1 }),
    ...(context ? { agentContext: context } : {}),
  };
  return out;
}

/** The context figure the meter shows: the latest turn's. */
export function latestContext(turns: readonly CompactionTurnPart[]): AgentContextView | null {
  for (let i = turns.length - 1; i >= 0; i--) if (turns[i]!.agentContext) return turns[i]!.agentContext!;
  return null;
}

/** Restored turns: a question that carries a summary shows the question, and the summary as a marker. */
export function withSummaryMarkers<T extends CompactionTurnPart & { text?: string }>(turns: readonly T[]): T[] {
  return turns.map((t, i) => {
    if (t.role !== 'user') return t;
    const s = splitSummary(t.content);
    if (s.summary === null) return t;
    const marker: AgentCompactionView = { id: `restored-${i}`, afterSteps: -1, elided: 0, steps: null, summary: s.summary, label: s.label ?? 'compacted', before: 0, after: 0 };
    return { ...t, text: s.question, compactions: [marker] };
  });
}
