// The agent's shapes: tools, what a tool returns, the workspace the tools act on, and the
// approvals the user gives. No vscode here: the loop and the tools run in unit tests on a
// folder (node-workspace.ts) and in VS Code (vscode-workspace.ts).
import type { JsonSchema } from './schema.js';
import type { WorkspacePaths } from './paths.js';

/** read: looks only; change: edits or creates a file (a proposal); command: runs a shell command; external: an MCP server's tool; plan: the agent's own checklist (touches nothing, never asks). */
export type ToolKind = 'read' | 'change' | 'command' | 'external' | 'plan';

/** A file change a tool proposes; nothing is written until the user accepts it. */
export interface ProposedChange {
  /** Workspace-relative path (forward slashes), as shown to the user. */
  path: string;
  /** Absolute path, symlinks resolved, inside the workspace. */
  abs: string;
  /** The file's content before (null: the file is created). */
  before: string | null;
  after: string;
}

export type ToolOutcome =
  /** The text the model gets as the tool's result. */
  | { type: 'text'; text: string }
  /** A tool error, returned to the model as the result (the loop goes on). */
  | { type: 'error'; message: string }
  /** A change to review; the result says whether it was applied. */
  | { type: 'change'; change: ProposedChange; summary: string }
  /** A command to confirm (unless allow-listed), then run. */
  | { type: 'command'; command: string; cwd: string };

export interface ToolContext {
  signal: AbortSignal;
  workspace: AgentWorkspace;
  paths: WorkspacePaths;
  /** A file's text as the step sees it: a change proposed earlier in the same step, else the file. */
  readCurrent(abs: string): Promise<string | null>;
}

export interface AgentTool {
  name: string;
  description: string;
  /** JSON schema of the arguments (sent to the model as the function's parameters). */
  parameters: JsonSchema;
  kind: ToolKind;
  /** external tools only: it may run without asking (the user trusts its server, which says it only reads and stays off the network). */
  readOnlyHint?: boolean;
  /** Why this call asks even where its kind runs without asking (a file that looks secret), or null. */
  askFirst?(args: Record<string, unknown>, ctx: ToolContext): Promise<string | null>;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
}

export interface TextMatch { path: string; line: number; text: string }
export interface DiagnosticItem { path: string; line: number; column: number; severity: 'error' | 'warning' | 'info' | 'hint'; message: string; source: string | null }
export interface CommandResult {
  output: string;
  /** null: unknown (the shell did not report it) or the command was stopped. */
  exitCode: number | null;
  /** How it ran, when that is worth telling the model (a child process instead of the terminal). */
  note: string | null;
}

/** The hits of the codebase index's search (CodebaseService.search), as the search_codebase tool reads them. */
export type CodebaseSearchFn = (query: string, opts?: { limit?: number }, signal?: AbortSignal) =>
  Promise<{ hits: Array<{ chunk: { path: string; startLine: number; endLine: number; text: string } }> }>;

/** What the tools need from the editor; the folder roots are in WorkspacePaths. */
export interface AgentWorkspace {
  /** A file's text: the open document's (unsaved edits included) when it is open, else the disk's; null: no such file or not text. */
  readText(abs: string): Promise<string | null>;
  /** Whether the workspace ignores the file (.gitignore, or inside .git). */
  isIgnored(abs: string): Promise<boolean>;
  /** Files under the roots, respecting .gitignore and files.exclude, workspace-relative, sorted. */
  listFiles(signal: AbortSignal): Promise<string[]>;
  searchText(query: string, opts: { regex: boolean; glob: string | null; maxResults: number }, signal: AbortSignal): Promise<TextMatch[]>;
  /** The Problems of one file (abs) or of the workspace (undefined). */
  diagnostics(abs: string | undefined): DiagnosticItem[];
  /** Writes an accepted change (one undo step in VS Code); resolves with a problem, or null. */
  apply(change: ProposedChange): Promise<string | null>;
  /** argv: an allow-listed command's words, run without a shell (the command line is what the user saw). */
  runCommand(command: string, cwd: string, signal: AbortSignal, argv?: readonly string[]): Promise<CommandResult>;
  codebase?: CodebaseSearchFn | undefined;
}

/** A step as the approvals see it. */
export interface StepRef { id: string; tool: string; args: Record<string, unknown> }

/** The user's decisions; every ask ends when `signal` aborts (Stop), as a refusal. */
export interface AgentApprovals {
  /** Read-only tools when they are not auto-approved, and MCP tools. */
  allowTool(step: StepRef, signal: AbortSignal): Promise<boolean>;
  /** The changes of one step, a diff per file; resolves with one decision per change, in order. */
  review(changes: Array<{ step: StepRef; change: ProposedChange }>, signal: AbortSignal): Promise<boolean[]>;
  /** A command that is not on the allow-list. */
  allowCommand(step: StepRef, command: string, cwd: string, signal: AbortSignal): Promise<boolean>;
}
