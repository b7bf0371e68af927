// Agent mode's shapes shared by the extension (extension/agent/, the panel's hub) and the panel UI
// (webview/): the conversation's mode and one tool step as the conversation shows it.

/** Ask: the model answers; Agent: the model may call the workspace tools. Per conversation. */
export type ChatMode = 'ask' | 'agent';

export const isChatMode = (v: unknown): v is ChatMode => v === 'ask' || v === 'agent';

export type AgentStepStatus = 'running' | 'waiting' | 'done' | 'error' | 'rejected' | 'skipped' | 'cancelled';

/** One tool call of an agent answer: what was called, what it returned, what waits for the user. */
export interface AgentStepView {
  /** Unique within the answer (the model's call ids may repeat across steps). */
  id: string;
  tool: string;
  /** The arguments as the model wrote them (JSON text). */
  args: string;
  status: AgentStepStatus;
  /** What the model got back (bounded), shown collapsed; null while it runs. */
  result: string | null;
  /** Where in the answer's text the call happened (characters), to show it between the texts. */
  at: number;
  /** What the user is asked for now: a read or MCP tool, a change to review, a command to run. */
  ask: 'tool' | 'change' | 'command' | null;
  /** A change: a unified diff of the file, and what became of it. */
  proposal?: { path: string; diff: string; created: boolean; decision: 'pending' | 'accepted' | 'rejected' | 'part' };
  /** A command: its text and folder; allowListed: it ran without asking. */
  command?: { text: string; cwd: string; allowListed: boolean };
  /** An applied change or a command that ran: the panel offers Restore to here. */
  checkpoint?: boolean;
}

/** The user's answer to a step's ask. acceptAll: every change of this answer waiting now. */
export type AgentDecision = 'allow' | 'deny' | 'acceptAll';

/** Where an agent conversation was compacted to stay within the model's context (a marker in the conversation). */
export interface AgentCompactionView {
  id: string;
  /** How many tool steps of the answer came before it (the marker shows after them). */
  afterSteps: number;
  /** Older tool results replaced by stubs. */
  elided: number;
  /** The run's steps the summary replaced (1-based, inclusive); null: no summary. */
  steps: { from: number; to: number } | null;
  summary: string | null;
  /** "12 tool results elided; steps 1–9 summarised". */
  label: string;
  /** The prompt's size before and after, in tokens. */
  before: number;
  after: number;
}

/** How much of the model's context per slot the agent conversation uses (the panel's meter). */
export interface AgentContextView {
  used: number;
  /** The chat model's context per slot, as the server reports it; null when it does not say. */
  ctx: number | null;
}
