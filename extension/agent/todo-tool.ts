// The `todo` tool: the model keeps a short checklist of its task (each item pending, in progress
// or done) and rewrites it as it goes. The panel pins the latest list above the message box while
// the agent runs; renderTodo gives the same list as text for a compaction summary to restate.
import type { ChatMessage } from '../../contract/chat.js';
import { TODO_STATES, type TodoItem } from '../../contract/agent-plan.js';
import type { AgentTool, ToolOutcome } from './types.js';

export const TODO_TOOL = 'todo';
export const MAX_TODO_ITEMS = 20;
export const MAX_TODO_TEXT = 200;

/** The problem with a todo list as the model wrote it (naming the field), or null. */
export function todoProblem(items: readonly TodoItem[]): string | null {
  if (items.length > MAX_TODO_ITEMS) return `items: at most ${MAX_TODO_ITEMS} items (keep the plan short)`;
  let inProgress = -1;
  for (let i = 0; i < items.length; i++) {
    const text = items[i]!.text.trim();
    if (!text) return `items[${i}].text: must not be empty`;
    if (text.length > MAX_TODO_TEXT) return `items[${i}].text: at most ${MAX_TODO_TEXT} characters`;
    if (items[i]!.state === 'in_progress') {
      if (inProgress >= 0) return `items[${i}].state: only one item may be in_progress (items[${inProgress}] is)`;
      inProgress = i;
    }
  }
  return null;
}

const MARK: Record<TodoItem['state'], string> = { pending: '[ ]', in_progress: '[~]', done: '[x]' };

/** The list as text: one line per item with its state ([ ] pending, [~] in progress, [x] done). */
export function renderTodo(items: readonly TodoItem[]): string {
  if (!items.length) return 'Plan: (empty)';
  const done = items.filter((i) => i.state === 'done').length;
  return [`Plan (${done} of ${items.length} done):`, ...items.map((i) => `${MARK[i.state]} ${i.text.trim()}`)].join('\n');
}

/**
 * The latest list the model wrote in a conversation: the last todo call whose result was not an
 * error. What a compaction summary restates; null when the model kept no plan.
 */
export function latestTodo(messages: readonly ChatMessage[]): TodoItem[] | null {
  const failed = new Set(messages.filter((m) => m.role === 'tool' && m.content.startsWith('error: ')).map((m) => m.toolCallId));
  for (let i = messages.length - 1; i >= 0; i--) {
    const calls = messages[i]!.toolCalls ?? [];
    for (let k = calls.length - 1; k >= 0; k--) {
      const c = calls[k]!;
      if (c.name !== TODO_TOOL || failed.has(c.id)) continue;
      try {
        const items = (JSON.parse(c.arguments) as { items?: unknown }).items;
        if (Array.isArray(items) && items.every((x) => x && typeof x.text === 'string' && TODO_STATES.includes(x.state))) {
          return items.map((x: TodoItem) => ({ text: x.text.trim(), state: x.state }));
        }
      } catch { /* a malformed call got an error result; look further back */ }
    }
  }
  return null;
}

/** The plan of one agent answer; `onChange` gets every new list (the panel's pinned view). */
export class TodoList {
  private current: TodoItem[] = [];

  constructor(private readonly onChange: (items: TodoItem[]) => void) {}

  get items(): TodoItem[] {
    return this.current.map((i) => ({ ...i }));
  }

  /** Replaces the list; returns the problem (and keeps the old list) when it is malformed. */
  update(items: readonly TodoItem[]): string | null {
    const problem = todoProblem(items);
    if (problem) return problem;
    this.current = items.map((i) => ({ text: i.text.trim(), state: i.state }));
    this.onChange(this.items);
    return null;
  }
}

/** The tool the model calls; the registry checks the schema (field names in its errors) before run. */
export function todoTool(list: TodoList): AgentTool {
  return {
    name: TODO_TOOL,
    kind: 'plan',
    description: 'Keep a short plan of the task as a checklist the user sees: send the whole list each time, with each item pending, in_progress (one at a time) or done. Write it when a task has several steps, and update it as items start and finish.',
    parameters: {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          description: `The whole checklist, in order (at most ${MAX_TODO_ITEMS} items)`,
          items: {
            type: 'object',
            properties: {
              text: { type: 'string', description: 'What the item is, in a few words' },
              state: { type: 'string', enum: [...TODO_STATES] },
            },
            required: ['text', 'state'],
            additionalProperties: false,
          },
        },
      },
      required: ['items'],
      additionalProperties: false,
    },
    async run(args): Promise<ToolOutcome> {
      const problem = list.update(args.items as TodoItem[]);
      if (problem) return { type: 'error', message: problem };
      return { type: 'text', text: `updated. ${renderTodo(list.items)}` };
    },
  };
}
