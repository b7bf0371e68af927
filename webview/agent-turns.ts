// Agent-mode turns in the panel's state: a tool step upserted into its answer, the messages an
// agent answer adds to the conversation, and a saved conversation's messages (tool calls and
// results included) turned back into turns with their steps. Pure: unit-tested.
import type { ChatMessage, ImageAttachment } from '../contract/chat.js';
import type { AgentStepView } from '../contract/agent.js';

/** The turn fields Agent mode uses (state.ts's ChatTurn has them). */
export interface AgentTurnPart {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** User turns: the images sent with the question. */
  images?: ImageAttachment[];
  /** The tool steps of an agent answer, in order. */
  steps?: AgentStepView[];
  /** An agent answer's messages for the conversation (assistant calls, tool results, the answer). */
  agentMessages?: ChatMessage[];
}

export function upsertStep(steps: readonly AgentStepView[] | undefined, step: AgentStepView): AgentStepView[] {
  const list = steps ? steps.slice() : [];
  const i = list.findIndex((s) => s.id === step.id);
  if (i >= 0) list[i] = step;
  else list.push(step);
  return list;
}

/** What a turn sends back to the model: an agent answer's own messages, else its text. */
export function turnMessages(t: AgentTurnPart): ChatMessage[] {
  if (t.agentMessages?.length) return t.agentMessages.map((m) => ({ ...m }));
  return [{ role: t.role, content: t.content, ...(t.images?.length ? { images: t.images } : {}) }];
}

/**
 * Turns from a saved conversation: every run of assistant/tool messages after a question is one
 * answer; its calls become steps (done, with their results), its texts the answer's content.
 */
export function turnsFromMessages<T extends AgentTurnPart>(messages: readonly ChatMessage[]): T[] {
  const out: AgentTurnPart[] = [];
  let i = 0;
  while (i < messages.length) {
    const m = messages[i]!;
    if (m.role !== 'assistant' && m.role !== 'tool') {
      out.push({ role: m.role, content: m.content, ...(m.images?.length ? { images: m.images } : {}) });
      i++;
      continue;
    }
    const group: ChatMessage[] = [];
    while (i < messages.length && (messages[i]!.role === 'assistant' || messages[i]!.role === 'tool')) group.push(messages[i++]!);
    const agentic = group.some((g) => g.role === 'tool' || g.toolCalls?.length);
    if (!agentic) {
      for (const g of group) out.push({ role: 'assistant', content: g.content });
      continue;
    }
    let content = '';
    const steps: AgentStepView[] = [];
    const results = new Map(group.filter((g) => g.role === 'tool').map((g) => [g.toolCallId ?? '', g.content]));
    let n = 0;
    for (const g of group) {
      if (g.role !== 'assistant') continue;
      content += g.content;
      for (const c of g.toolCalls ?? []) {
        const result = results.get(c.id) ?? null;
        steps.push({
          id: `r${n++}`, tool: c.name, args: c.arguments, result, at: content.length, ask: null,
          status: result === null ? 'cancelled' : /^error: /.test(result) ? 'error' : /^the user (rejected|did not allow|skipped)/.test(result) ? 'rejected' : 'done',
        });
      }
    }
    out.push({ role: 'assistant', content, steps, agentMessages: group.map((g) => ({ ...g })) });
  }
  return out as T[];
}

/** A one-line summary of a call's arguments for the step's header (the path or command when there is one). */
export function argsSummary(args: string): string {
  try {
    const o = JSON.parse(args) as Record<string, unknown>;
    for (const k of ['path', 'command', 'query', 'glob']) if (typeof o[k] === 'string') return String(o[k]).slice(0, 120);
    if (Array.isArray(o.items)) return `${o.items.length} item${o.items.length === 1 ? '' : 's'}`; // the todo tool's plan
    return args.slice(0, 120);
  } catch {
    return args.slice(0, 120);
  }
}
