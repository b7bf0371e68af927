// The panel's Agent-mode conversations: one AgentLoop per answer, its text and steps streamed to
// every view, what the steps ask for (Accept / Reject a change, Run / Skip a command, Allow a
// tool) kept until the user answers in any view or presses Stop. No vscode: unit-tested.
import type { ChatMessage } from '../../contract/chat.js';
import type { AgentCompactionView, AgentContextView, AgentDecision, AgentStepView } from '../../contract/agent.js';
import { THINKING_EFFORT, type ContextItem, type ThinkingLevel, type ToWebview } from '../../contract/panel.js';
import { AnswerRuns, newAnswer, type Answer } from '../chat/answer-runs.js';
import type { AgentEvent, AgentLoop } from './loop.js';
import type { AgentApprovals, ProposedChange } from './types.js';
import { wellFormedToolTurns } from './history.js';
import type { StrataClient } from '../client/client.js';
import type { ToolSpec } from '../client/types.js';
import type { RuleFileView, TodoItem } from '../../contract/agent-plan.js';
import type { RestorePlanView, RestoreResultView } from '../../contract/agent-checkpoints.js';

/** chatSlotContext: absent, the loop does not compact (a client that cannot say the context). */
export type AgentClient = Pick<StrataClient, 'chatStream' | 'tokenize'> & Partial<Pick<StrataClient, 'chatSlotContext'>>;

/** A loop ready to run, its system message (with the repository's rules) and the rule files in it. */
export interface MadeLoop { loop: AgentLoop; system: string; rules?: RuleFileView[] }

/** Agent mode as the panel gets it from register-agent.ts (VS Code, settings, MCP). */
export interface AgentProvider {
  /** `chatId`: the answer the loop's checkpoints belong to. */
  makeLoop(client: AgentClient, onEvent: (e: AgentEvent) => void, approvals: AgentApprovals, chatId?: string): Promise<MadeLoop | string>;
  /** What Restore to here at a checkpoint step would do (files, diffs, conflicts, commands); changes nothing. */
  restorePlan?(chatId: string, stepId: string): Promise<RestorePlanView>;
  /** Restores the files to the checkpoint (conflicting files are left alone and reported). */
  restore?(chatId: string, stepId: string): Promise<RestoreResultView>;
  showDiff(change: ProposedChange): Promise<void>;
  closeDiff?(change: ProposedChange): Promise<void>;
  /** The system message agent conversations start with (saved with the session so its KV matches). */
  system(): string;
  /** The tools of the last run (saved with the session: the template renders them). */
  tools(): ToolSpec[];
  /** A step waits for the user while no panel view is visible. */
  attention?(what: string): void;
}

/** What a run needs that only the host knows (VS Code, settings, the server). */
export interface AgentHost<C> {
  ensureClient(): Promise<C>;
  /** The question fitted to the model with its context (the panel's ContextPlanner). */
  prepare(client: C, messages: ChatMessage[], context: ContextItem[]): Promise<{ messages: ChatMessage[]; content: string; note: string | null; error: string | null }>;
  /** A loop with the tools and settings of now, or why Agent mode cannot run (an untrusted workspace, no folder). */
  makeLoop(client: C, onEvent: (e: AgentEvent) => void, approvals: AgentApprovals, chatId?: string): Promise<MadeLoop | string>;
  showDiff(change: ProposedChange): Promise<void>;
  /** The change was decided: its diff editor (if open) has nothing left to show. */
  closeDiff?(change: ProposedChange): Promise<void>;
}

/** An agent's answer: the text and thinking of every answer, and its steps. */
interface AgentAnswer extends Answer {
  steps: Map<string, AgentStepView>;
  compactions: AgentCompactionView[];
  context: AgentContextView | null;
  rules?: RuleFileView[];
  todo?: TodoItem[];
}

interface Wait { kind: 'tool' | 'change' | 'command'; resolve(ok: boolean): void }

/** An agent answer's own part of a view's replay (its question, text and end: AnswerRuns). */
function agentReplay(chatId: string, a: AgentAnswer): ToWebview[] {
  const out: ToWebview[] = [];
  for (const step of a.steps.values()) out.push({ type: 'agentStep', chatId, step });
  if (a.rules) out.push({ type: 'agentRules', chatId, rules: a.rules });
  if (a.todo) out.push({ type: 'agentTodo', chatId, items: a.todo });
  for (const compaction of a.compactions) out.push({ type: 'agentCompaction', chatId, compaction });
  if (a.context) out.push({ type: 'agentContext', chatId, context: a.context });
  return out;
}

export class AgentChats<C> {
  private readonly runs: AnswerRuns<AgentAnswer>;
  private readonly waits = new Map<string, Wait>();
  private readonly changes = new Map<string, ProposedChange>();

  constructor(
    private readonly host: AgentHost<C>,
    private readonly broadcast: (m: ToWebview) => void,
    /** The conversation this answer leaves (for Save Session from the palette). */
    private readonly setLast: (name: string, messages: ChatMessage[]) => void,
  ) {
    this.runs = new AnswerRuns(broadcast, agentReplay);
  }

  isRunning(chatId: string): boolean {
    return this.runs.isRunning(chatId);
  }

  anyRunning(): boolean {
    return this.runs.anyRunning();
  }

  stop(chatId: string): void {
    this.runs.stop(chatId);
  }

  stopAll(): void {
    this.runs.stopAll();
  }

  /** The user answered what step `stepId` asks; acceptAll accepts every change of this answer that waits. */
  decide(chatId: string, stepId: string, decision: AgentDecision): boolean {
    if (decision === 'acceptAll') {
      let any = false;
      for (const [key, w] of this.waits) {
        if (w.kind !== 'change' || !key.startsWith(`${chatId}\u0000`)) continue;
        this.waits.delete(key);
        w.resolve(true);
        any = true;
      }
      return any;
    }
    const key = `${chatId}\u0000${stepId}`;
    const w = this.waits.get(key);
    if (!w) return false;
    this.waits.delete(key);
    w.resolve(decision === 'allow');
    return true;
  }

  async showDiff(chatId: string, stepId: string): Promise<string | null> {
    const c = this.changes.get(`${chatId}\u0000${stepId}`);
    if (!c) return 'that change is no longer pending';
    await this.host.showDiff(c);
    return null;
  }

  /** Everything a view that (re)opens needs to show this window's agent answers. */
  replay(): ToWebview[] {
    return this.runs.replay();
  }

  async run(chatId: string, name: string, messages: ChatMessage[], context: ContextItem[], thinking: ThinkingLevel = 'auto'): Promise<void> {
    let conversation = messages;
    const answer: AgentAnswer = { ...newAnswer(), steps: new Map(), compactions: [], context: null };
    await this.runs.run(chatId, answer, async (a) => {
      const client = await this.host.ensureClient();
      const plan = await this.host.prepare(client, messages, context);
      this.runs.sent(chatId, a, plan);
      conversation = wellFormedToolTurns(plan.messages);
      const made = await this.host.makeLoop(client, (e) => this.event(chatId, a, e), this.approvals(chatId, a.ac.signal), chatId);
      if (typeof made === 'string') throw new Error(made);
      if (made.rules) {
        a.rules = made.rules;
        this.broadcast({ type: 'agentRules', chatId, rules: made.rules });
      }
      const withSystem = conversation[0]?.role === 'system' ? conversation : [{ role: 'system' as const, content: made.system }, ...conversation];
      const effort = THINKING_EFFORT[thinking];
      const run = await made.loop.run(withSystem, a.ac.signal, effort ? { reasoningEffort: effort } : {});
      conversation = run.conversation ? withoutSystem(run.conversation, made.system) : [...conversation, ...run.messages];
      return {
        usage: run.usage, timings: run.timings, error: run.end === 'error' ? run.error : null, cancelled: run.end === 'cancelled',
        agent: {
          messages: run.messages, steps: run.steps, note: run.end === 'stepLimit' ? run.error : null,
          ...(run.conversation ? { conversation: withoutSystem(run.conversation, made.system) } : {}),
        },
      };
    }, (end) => {
      for (const key of [...this.changes.keys()]) if (key.startsWith(`${chatId}\u0000`)) this.changes.delete(key);
      this.setLast(name, conversation);
      return end;
    });
  }

  private event(chatId: string, a: AgentAnswer, e: AgentEvent): void {
    if (e.type === 'text') {
      this.runs.text(chatId, a, e.text);
    } else if (e.type === 'reasoning') {
      this.runs.reasoning(chatId, a, e.text);
    } else if (e.type === 'todo') {
      a.todo = e.items;
      this.broadcast({ type: 'agentTodo', chatId, items: e.items });
    } else if (e.type === 'context') {
      a.context = e.context;
      this.broadcast({ type: 'agentContext', chatId, context: e.context });
    } else if (e.type === 'compaction') {
      a.compactions.push(e.compaction);
      this.broadcast({ type: 'agentCompaction', chatId, compaction: e.compaction });
    } else {
      a.steps.set(e.step.id, e.step);
      this.broadcast({ type: 'agentStep', chatId, step: e.step });
    }
  }

  /**
   * The panel's Compact: the conversation summarised now (as the loop does when the context fills),
   * sent back to every view to go on from. Resolves with an error to show, or null.
   */
  async compact(name: string, messages: ChatMessage[]): Promise<string | null> {
    const ac = new AbortController();
    try {
      const client = await this.host.ensureClient();
      let context: AgentContextView | null = null;
      const made = await this.host.makeLoop(client, (e) => { if (e.type === 'context') context = e.context; }, this.approvals('compact', ac.signal));
      if (typeof made === 'string') return made;
      const conversation = wellFormedToolTurns(messages);
      const withSystem = conversation[0]?.role === 'system' ? conversation : [{ role: 'system' as const, content: made.system }, ...conversation];
      const done = await made.loop.compact(withSystem, ac.signal);
      if (!done) return 'there is nothing to compact yet: the conversation has no earlier steps to summarise';
      const shown = withoutSystem(done.messages, made.system);
      this.setLast(name, shown);
      this.broadcast({ type: 'agentCompacted', messages: shown, compaction: done.compaction, context });
      return null;
    } catch (err) {
      return `Compact failed: ${(err as Error).message}`;
    }
  }

  private approvals(chatId: string, signal: AbortSignal): AgentApprovals {
    const wait = (stepId: string, kind: Wait['kind']): Promise<boolean> => new Promise((resolve) => {
      if (signal.aborted) return resolve(false);
      const key = `${chatId}\u0000${stepId}`;
      this.waits.set(key, { kind, resolve });
      signal.addEventListener('abort', () => { this.waits.delete(key); resolve(false); }, { once: true });
    });
    return {
      allowTool: (step) => wait(step.id, 'tool'),
      allowCommand: (step) => wait(step.id, 'command'),
      review: (changes) => {
        for (const c of changes) this.changes.set(`${chatId}\u0000${c.step.id}`, c.change);
        return Promise.all(changes.map(async (c) => {
          const ok = await wait(c.step.id, 'change');
          this.changes.delete(`${chatId}\u0000${c.step.id}`);
          await this.host.closeDiff?.(c.change).catch(() => undefined);
          return ok;
        }));
      },
    };
  }
}

/** The conversation as the panel keeps it: without the loop's own system message (added again at each run). */
function withoutSystem(messages: ChatMessage[], system: string): ChatMessage[] {
  return messages[0]?.role === 'system' && messages[0].content === system ? messages.slice(1) : messages;
}
