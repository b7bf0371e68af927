// The agent loop: ask the chat model with the tools, run the calls it makes (after the user's
// approval where one is needed), give it the results, and go on until it answers without a call,
// the step limit is reached, or Stop aborts the signal (which ends the model request and the
// running tool at once). One step = one model request and the calls it made. Before each step the
// conversation is measured against the model's context per slot and compacted when the next step
// would not leave room for the answer (context-keeper.ts).
import type { ChatMessage, Timings, ToolCall, Usage } from '../../contract/chat.js';
import type { AgentCompactionView, AgentContextView, AgentStepView } from '../../contract/agent.js';
import type { StrataClient } from '../client/client.js';
import { CHAT_MAX_TOKENS, type ChatCall } from '../client/types.js';
import { boundResult, type TokenCounter } from './budget.js';
import { allowListedRun } from './command-policy.js';
import { ContextKeeper, type ContextStats } from './context-keeper.js';
import { unifiedDiff } from './diff-text.js';
import { PathRefused, type WorkspacePaths } from './paths.js';
import type { ToolRegistry } from './registry.js';
import type { AgentApprovals, AgentTool, AgentWorkspace, ProposedChange, StepRef, ToolContext } from './types.js';
import type { TodoItem } from '../../contract/agent-plan.js';
import type { CheckpointRecorder } from './checkpoints.js';

export interface AgentSettings {
  maxSteps: number;
  autoApproveReadOnly: boolean;
  allowedCommands: readonly string[];
  /** Largest tool result the model gets, in tokens. */
  maxResultTokens: number;
}

export type AgentEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'step'; step: AgentStepView }
  /** The model's plan (the todo tool) changed. */
  | { type: 'todo'; items: TodoItem[] }

  /** The conversation's size against the model's context, before and after each step. */
  | { type: 'context'; context: AgentContextView }
  /** The conversation was compacted (stubs, a summary) to stay within the context. */
  | { type: 'compaction'; compaction: AgentCompactionView };

export interface AgentRun {
  /** The messages the run added after the question (assistant calls, tool results, the answer). */
  messages: ChatMessage[];
  end: 'answer' | 'stepLimit' | 'cancelled' | 'error';
  error: string | null;
  steps: number;
  usage: Usage | null;
  timings: Timings | null;
  /** The whole conversation (system message first) when the run compacted it: it goes on from this, not from messages. */
  conversation: ChatMessage[] | null;
  /** What the run's prompts cost (tokens sent, computed, re-read by compactions). */
  context: ContextStats;
}

export interface AgentLoopDeps {
  client: Pick<StrataClient, 'chatStream'>;
  tools: ToolRegistry;
  workspace: AgentWorkspace;
  paths: WorkspacePaths;
  approvals: AgentApprovals;
  settings: AgentSettings;
  /** The server's tokenizer for bounding results; absent: a character estimate. */
  countTokens?: TokenCounter | undefined;
  onEvent(e: AgentEvent): void;
  model?: string | undefined;
  /** tool_choice per step (1-based); default "auto". A name forces that tool (tests, a forced first step). */
  toolChoice?: ((step: number) => ChatCall['toolChoice']) | undefined;
  /** Answer length cap per step (default CHAT_MAX_TOKENS). */
  maxTokens?: number | undefined;
  /** Records each applied change and each command as a checkpoint (Restore to here). */
  checkpoints?: CheckpointRecorder | undefined;
  /** The chat model's context per slot, from the server; absent or null: the loop does not compact. */
  contextWindow?: ((signal: AbortSignal) => Promise<number | null>) | undefined;
}

const CANCELLED = 'cancelled: the user pressed Stop';

/** A change waiting in this step, with every call that edited the same file. */
interface Pending { change: ProposedChange; steps: Array<{ index: number; view: AgentStepView; summary: string }> }

export class AgentLoop {
  constructor(private readonly deps: AgentLoopDeps) {}

  /** Keeps the conversation within the context; shared by run() and compact(). */
  private keeper(): ContextKeeper {
    return new ContextKeeper({
      client: this.deps.client, tools: this.deps.tools.specs(), model: this.deps.model, countTokens: this.deps.countTokens,
      maxTokens: this.deps.maxTokens ?? CHAT_MAX_TOKENS, contextWindow: this.deps.contextWindow,
      onEvent: (e) => this.deps.onEvent(e),
    });
  }

  /** Compacts a finished conversation now (the panel's Compact): a summary, else stubs. null: nothing to compact. */
  async compact(messages: readonly ChatMessage[], signal: AbortSignal): Promise<{ messages: ChatMessage[]; compaction: AgentCompactionView } | null> {
    return this.keeper().compactNow(messages, signal);
  }

  /** `reasoningEffort`: the conversation's thinking level, sent with each step's request. */
  async run(messages: readonly ChatMessage[], signal: AbortSignal, opts: { reasoningEffort?: ChatCall['reasoningEffort'] } = {}): Promise<AgentRun> {
    const added: ChatMessage[] = [];
    const keeper = this.keeper();
    const out: AgentRun = { messages: added, end: 'answer', error: null, steps: 0, usage: null, timings: null, conversation: null, context: keeper.stats };
    let textLength = 0;
    let callCount = 0;
    /** What is sent: the question's conversation and what the run added, compacted as needed. */
    let conv: ChatMessage[] = [...messages];
    const maxSteps = Math.max(1, Math.floor(this.deps.settings.maxSteps));
    try {
      for (;;) {
        signal.throwIfAborted();
        out.steps++;
        const compacted = await keeper.beforeStep(conv, { step: out.steps, afterSteps: callCount }, signal);
        if (compacted) { conv = compacted; out.conversation = conv; }
        let text = '';
        const calls: ToolCall[] = [];
        for await (const ev of this.deps.client.chatStream({
          messages: conv, tools: this.deps.tools.specs(), toolChoice: this.deps.toolChoice?.(out.steps) ?? 'auto', maxTokens: this.deps.maxTokens ?? CHAT_MAX_TOKENS,
          ...(this.deps.model ? { model: this.deps.model } : {}),
          ...(opts.reasoningEffort ? { reasoningEffort: opts.reasoningEffort } : {}),
        }, signal)) {
          if (ev.type === 'text') { text += ev.text; textLength += ev.text.length; this.deps.onEvent({ type: 'text', text: ev.text }); }
          else if (ev.type === 'reasoning') this.deps.onEvent({ type: 'reasoning', text: ev.text });
          else if (ev.type === 'toolCall') calls.push(ev.call);
          else if (ev.type === 'done') {
            if (ev.usage) out.usage = { ...ev.usage, completionTokens: (out.usage?.completionTokens ?? 0) + ev.usage.completionTokens };
            out.timings = ev.timings ?? out.timings;
            await keeper.afterStep(conv, ev.usage, signal);
          }
        }
        signal.throwIfAborted();
        const push = (m: ChatMessage): void => { added.push(m); conv.push(m); };
        if (!calls.length) {
          push({ role: 'assistant', content: text });
          return out;
        }
        // Call ids the model leaves empty or repeats would pair results with the wrong call.
        const seen = new Set<string>();
        const ided = calls.map((c, i) => {
          const id = c.id && !seen.has(c.id) ? c.id : `call_${out.steps}_${i}`;
          seen.add(id);
          return { ...c, id };
        });
        push({ role: 'assistant', content: text, toolCalls: ided });
        const results = await this.runCalls(ided, out.steps, textLength, signal);
        callCount += ided.length;
        ided.forEach((c, i) => push({ role: 'tool', toolCallId: c.id, name: c.name, content: results[i]! }));
        if (out.steps >= maxSteps) {
          out.end = 'stepLimit';
          out.error = `the agent stopped at the step limit (${maxSteps} steps, strata.agent.maxSteps); send a message to let it go on`;
          return out;
        }
      }
    } catch (err) {
      // Every call the last assistant message made must have a result, or the conversation cannot go on.
      const last = [...added].reverse().find((m) => m.role === 'assistant');
      if (last?.toolCalls) {
        const answered = new Set(added.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
        for (const c of last.toolCalls) {
          if (answered.has(c.id)) continue;
          const m: ChatMessage = { role: 'tool', toolCallId: c.id, name: c.name, content: signal.aborted ? CANCELLED : `error: ${(err as Error).message}` };
          added.push(m);
          conv.push(m);
        }
      }
      out.end = signal.aborted ? 'cancelled' : 'error';
      out.error = signal.aborted ? null : (err as Error).message;
      return out;
    }
  }

  /** Runs one step's calls in order; returns each call's result text for the model. */
  private async runCalls(calls: readonly ToolCall[], step: number, at: number, signal: AbortSignal): Promise<string[]> {
    const results: Array<string | undefined> = new Array(calls.length);
    const views: AgentStepView[] = calls.map((c, i) => ({ id: `s${step}-${i}`, tool: c.name, args: c.arguments, status: 'running', result: null, at, ask: null }));
    const emit = (v: AgentStepView): void => this.deps.onEvent({ type: 'step', step: { ...v } });
    const finish = (i: number, status: AgentStepView['status'], result: string): void => {
      results[i] = result;
      Object.assign(views[i]!, { status, result, ask: null });
      emit(views[i]!);
    };
    const pending = new Map<string, Pending>();
    const ctx: ToolContext = {
      signal, workspace: this.deps.workspace, paths: this.deps.paths,
      readCurrent: async (abs) => pending.get(abs)?.change.after ?? this.deps.workspace.readText(abs),
    };
    try {
      for (let i = 0; i < calls.length; i++) {
        signal.throwIfAborted();
        const call = calls[i]!;
        const view = views[i]!;
        emit(view);
        const parsed = this.deps.tools.parse(call.name, call.arguments);
        if (typeof parsed === 'string') { finish(i, 'error', `error: ${parsed}`); continue; }
        const ref: StepRef = { id: view.id, tool: call.name, args: parsed.args };
        if (await this.needsAsking(parsed.tool, parsed.args, ctx)) {
          Object.assign(view, { status: 'waiting', ask: 'tool' });
          emit(view);
          if (!(await this.deps.approvals.allowTool(ref, signal))) { signal.throwIfAborted(); finish(i, 'rejected', 'the user did not allow this call'); continue; }
          Object.assign(view, { status: 'running', ask: null });
          emit(view);
        }
        let outcome;
        try {
          outcome = await parsed.tool.run(parsed.args, ctx);
        } catch (err) {
          if (signal.aborted) throw err;
          finish(i, 'error', `error: ${err instanceof PathRefused ? `refused: ${err.message}` : (err as Error).message}`);
          continue;
        }
        if (outcome.type === 'text') {
          const b = await boundResult(outcome.text, this.deps.settings.maxResultTokens, { count: this.deps.countTokens, signal });
          finish(i, 'done', b.text);
        } else if (outcome.type === 'error') {
          finish(i, 'error', `error: ${outcome.message}`);
        } else if (outcome.type === 'change') {
          const c = outcome.change;
          const group = pending.get(c.abs);
          if (group) {
            group.change = { ...group.change, after: c.after };
            group.steps.push({ index: i, view, summary: outcome.summary });
            Object.assign(view, { status: 'waiting', ask: null, proposal: { path: c.path, diff: '', created: false, decision: 'part' } });
          } else {
            pending.set(c.abs, { change: c, steps: [{ index: i, view, summary: outcome.summary }] });
            Object.assign(view, { status: 'waiting', ask: 'change' });
          }
          const first = pending.get(c.abs)!.steps[0]!.view;
          const g = pending.get(c.abs)!.change;
          first.proposal = { path: g.path, diff: unifiedDiff(g.path, g.before, g.after), created: g.before === null, decision: 'pending' };
          emit(first);
          if (first !== view) emit(view);
        } else {
          // Changes before a command are decided first: the command may depend on them (a test run).
          await this.review(pending, finish, signal);
          const argv = await allowListedRun(outcome.command, this.deps.settings.allowedCommands, outcome.cwd, { paths: this.deps.paths, isIgnored: (abs) => this.deps.workspace.isIgnored(abs) });
          const allowListed = argv !== null;
          Object.assign(view, { command: { text: outcome.command, cwd: outcome.cwd, allowListed } });
          if (!allowListed) {
            Object.assign(view, { status: 'waiting', ask: 'command' });
            emit(view);
            if (!(await this.deps.approvals.allowCommand(ref, outcome.command, outcome.cwd, signal))) {
              signal.throwIfAborted();
              finish(i, 'skipped', 'the user skipped this command; it did not run');
              continue;
            }
          }
          if (this.deps.checkpoints) {
            await this.deps.checkpoints.commandRan(view.id, outcome.command, outcome.cwd);
            view.checkpoint = true;
          }
          Object.assign(view, { status: 'running', ask: null });
          emit(view);
          const r = await this.deps.workspace.runCommand(outcome.command, outcome.cwd, signal, argv ?? undefined);
          signal.throwIfAborted();
          const head = `exit code: ${r.exitCode ?? 'unknown'}${r.note ? ` (${r.note})` : ''}\n`;
          const b = await boundResult(r.output, this.deps.settings.maxResultTokens, { count: this.deps.countTokens, keepTail: true, signal });
          finish(i, r.exitCode === 0 || r.exitCode === null ? 'done' : 'error', `${head}${b.text}`);
        }
      }
      await this.review(pending, finish, signal);
    } catch (err) {
      if (!signal.aborted) throw err;
      views.forEach((v, i) => {
        if (results[i] !== undefined) return;
        results[i] = CANCELLED;
        Object.assign(v, { status: 'cancelled', result: CANCELLED, ask: null });
        if (v.proposal) v.proposal = { ...v.proposal, decision: 'rejected' };
        emit(v);
      });
      throw err;
    }
    return results.map((r) => r ?? CANCELLED);
  }

  /** Puts the step's changes before the user (a diff per file), applies the accepted ones. */
  private async review(pending: Map<string, Pending>, finish: (i: number, status: AgentStepView['status'], result: string) => void, signal: AbortSignal): Promise<void> {
    if (!pending.size) return;
    const groups = [...pending.values()];
    pending.clear();
    const decisions = await this.deps.approvals.review(groups.map((g) => ({ step: { id: g.steps[0]!.view.id, tool: g.steps[0]!.view.tool, args: {} }, change: g.change })), signal);
    signal.throwIfAborted();
    for (let k = 0; k < groups.length; k++) {
      const g = groups[k]!;
      const first = g.steps[0]!.view;
      let status: AgentStepView['status'];
      let result: string;
      if (decisions[k]) {
        const problem = await this.deps.workspace.apply(g.change);
        if (!problem && this.deps.checkpoints) {
          await this.deps.checkpoints.changed(first.id, g.change);
          first.checkpoint = true;
        }
        status = problem ? 'error' : 'done';
        result = problem ? `error: the change to ${g.change.path} could not be applied: ${problem}` : `applied: the user accepted the change to ${g.change.path}`;
        first.proposal = { ...first.proposal!, decision: problem ? 'rejected' : 'accepted' };
      } else {
        status = 'rejected';
        result = `the user rejected the change to ${g.change.path}; the file is unchanged`;
        first.proposal = { ...first.proposal!, decision: 'rejected' };
      }
      for (const s of g.steps) finish(s.index, status, g.steps.length > 1 ? `${result} (${s.summary}, one of ${g.steps.length} calls on this file)` : `${result} (${s.summary})`);
    }
  }

  private async needsAsking(tool: AgentTool, args: Record<string, unknown>, ctx: ToolContext): Promise<boolean> {
    // A path the tool would refuse is left to run() to report.
    if (tool.kind === 'read') return !this.deps.settings.autoApproveReadOnly || (await tool.askFirst?.(args, ctx).catch(() => null) ?? null) !== null;
    if (tool.kind === 'external') return !(tool.readOnlyHint && this.deps.settings.autoApproveReadOnly);
    return false; // change and command tools ask in their own way (review, allowCommand)
  }
}
