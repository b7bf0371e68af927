// What Agent mode shows beside its steps, in the panel's state: the rule files of the last agent
// answer (chips with their token counts), the plan the model keeps (pinned while it runs), and
// Restore to here (the plan to confirm, then the conversation cut at the step). Pure: unit-tested.
import type { ChatMessage } from '../contract/chat.js';
import type { RuleFileView, TodoItem } from '../contract/agent-plan.js';
import type { RestorePlanView, RestoreResultView } from '../contract/agent-checkpoints.js';
import type { AgentTurnPart } from './agent-turns.js';

export interface AgentWorkState {
  /** The rule files in the last agent answer's system message. */
  rules: RuleFileView[] | null;
  /** The plan of an answer, by its chatId. */
  todo: { chatId: string; items: TodoItem[] } | null;
  /** Restore to here, waiting for the user's confirmation. */
  restorePlan: RestorePlanView | null;
}

export const emptyAgentWork = (): AgentWorkState => ({ rules: null, todo: null, restorePlan: null });

/** The turn fields a cut needs (state.ts's ChatTurn has them). */
export interface CuttableTurn extends AgentTurnPart {
  chatId?: string;
  pending?: boolean;
  note?: string | null;
}

/** Step ids of a live answer: `s<loop step>-<call index>` (the loop's). */
function parseStepId(id: string): { step: number; call: number } | null {
  const m = /^s(\d+)-(\d+)$/.exec(id);
  return m ? { step: Number(m[1]), call: Number(m[2]) } : null;
}

/**
 * The answer's messages up to the call `stepId`: the assistant messages of the loop steps before
 * it whole, its own with the calls up to it, and their results.
 */
export function cutMessages(messages: readonly ChatMessage[], stepId: string): ChatMessage[] | null {
  const at = parseStepId(stepId);
  if (!at) return null;
  const out: ChatMessage[] = [];
  let step = 0;
  let keep: Set<string> | null = null;
  for (const m of messages) {
    if (m.role === 'assistant') {
      if (step === at.step) break; // the message after the cut step's
      step++;
      if (step === at.step) {
        const calls = (m.toolCalls ?? []).slice(0, at.call + 1);
        if (calls.length !== at.call + 1) return null;
        keep = new Set(calls.map((c) => c.id));
        out.push({ ...m, toolCalls: calls });
        continue;
      }
      out.push({ ...m });
    } else if (m.role === 'tool') {
      if (keep === null || keep.has(m.toolCallId ?? '')) out.push({ ...m });
    }
  }
  return step === at.step ? out : null;
}

/** A sentence saying what Restore to here did, for the note under the cut answer. */
export function restoreNote(r: RestoreResultView): string {
  const parts = [`Restored to this step: ${r.restored.length ? `put back ${r.restored.join(', ')}` : 'no file needed putting back'}.`];
  if (r.conflicts.length) parts.push(`Left as they are: ${r.conflicts.map((c) => `${c.path} (${c.reason})`).join('; ')}.`);
  parts.push('Ask again from here.');
  return parts.join(' ');
}

/**
 * The conversation after Restore to here: the answer keeps its steps and text up to the step,
 * every later turn goes. Null when this view does not show that answer (or it cannot be cut).
 */
export function cutAtStep<T extends CuttableTurn>(turns: readonly T[], r: RestoreResultView): T[] | null {
  const i = turns.findIndex((t) => t.chatId === r.chatId);
  if (i < 0) return null;
  const t = turns[i]!;
  const k = (t.steps ?? []).findIndex((s) => s.id === r.stepId);
  if (k < 0 || t.pending || !t.agentMessages) return null;
  const messages = cutMessages(t.agentMessages, r.stepId);
  if (!messages) return null;
  const at = parseStepId(r.stepId)!;
  const steps = t.steps!.filter((s) => {
    const p = parseStepId(s.id);
    return p !== null && (p.step < at.step || (p.step === at.step && p.call <= at.call));
  });
  const cut: T = { ...t, content: t.content.slice(0, t.steps![k]!.at), steps, agentMessages: messages, note: restoreNote(r) };
  return [...turns.slice(0, i), cut];
}

type AgentWorkMessage =
  | { type: 'agentRules'; chatId: string; rules: RuleFileView[] }
  | { type: 'agentTodo'; chatId: string; items: TodoItem[] }
  | { type: 'agentRestorePlan'; plan: RestorePlanView }
  | { type: 'agentRestored'; result: RestoreResultView };

interface WithAgentWork<T> { agentWork: AgentWorkState; turns: T[]; notice: { level: 'info' | 'error'; text: string } | null }

export function reduceAgentWork<T extends CuttableTurn, S extends WithAgentWork<T>>(s: S, msg: AgentWorkMessage): S {
  const w = s.agentWork;
  switch (msg.type) {
    case 'agentRules': return { ...s, agentWork: { ...w, rules: msg.rules } };
    case 'agentTodo': return { ...s, agentWork: { ...w, todo: { chatId: msg.chatId, items: msg.items } } };
    case 'agentRestorePlan':
      return msg.plan.error
        ? { ...s, agentWork: { ...w, restorePlan: null }, notice: { level: 'error', text: `Restore to here: ${msg.plan.error}` } }
        : { ...s, agentWork: { ...w, restorePlan: msg.plan } };
    case 'agentRestored': {
      const r = msg.result;
      const shown = w.restorePlan?.chatId === r.chatId && w.restorePlan.stepId === r.stepId ? null : w.restorePlan;
      if (r.error) return { ...s, agentWork: { ...w, restorePlan: shown }, notice: { level: 'error', text: `Restore to here: ${r.error}` } };
      const turns = cutAtStep(s.turns, r);
      const work = { ...w, restorePlan: shown, todo: null };
      if (turns) return { ...s, turns, agentWork: work };
      // Shown here but not cut (its messages no longer match its steps): the files were still put back.
      return s.turns.some((t) => t.chatId === r.chatId) ? { ...s, agentWork: work, notice: { level: 'info', text: restoreNote(r).replace(' Ask again from here.', ' The conversation could not be cut at that step.') } } : { ...s, agentWork: work };
    }
  }
}

/** The user cancels the Restore to here they were shown. */
export const cancelRestore = <S extends { agentWork: AgentWorkState }>(s: S): S => ({ ...s, agentWork: { ...s.agentWork, restorePlan: null } });
