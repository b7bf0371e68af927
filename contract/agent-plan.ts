// What Agent mode shows beside its steps, shared by the extension and the panel: the plan the
// model keeps with its todo tool, and the rule files (AGENTS.md and the like) its system message holds.

export type TodoState = 'pending' | 'in_progress' | 'done';
export const TODO_STATES: readonly TodoState[] = ['pending', 'in_progress', 'done'];

export interface TodoItem { text: string; state: TodoState }

/** A rules file in the agent's system message, as the panel's chip shows it. */
export interface RuleFileView {
  /** Workspace-relative path (forward slashes). */
  path: string;
  /** The folder its rules apply to ('' for the whole workspace). */
  scope: string;
  /** Tokens by the server's tokenizer (/v1/tokenize). */
  tokens: number;
  /** The server could not count: tokens is an estimate from the characters. */
  estimated: boolean;
  /** Set when the file was cut to the rules budget. */
  cut?: boolean;
}
