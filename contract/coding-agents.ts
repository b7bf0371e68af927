// The coding agents `strata launch` runs, as the CLI and the extension's "Use with a Coding Agent"
// both name them: the launch name, what users call it, its command and the npm package that
// installs it. How each is pointed at a server: backend/cli/launch-clients.ts.
export const CODING_AGENT_NAMES = ['claude', 'codex', 'opencode', 'continue'] as const;
export type CodingAgentName = (typeof CODING_AGENT_NAMES)[number];

export interface CodingAgent { name: CodingAgentName; title: string; bin: string; npmPackage: string }

export const CODING_AGENTS: readonly CodingAgent[] = [
  { name: 'claude', title: 'Claude Code', bin: 'claude', npmPackage: '@anthropic-ai/claude-code' },
  { name: 'codex', title: 'Codex CLI', bin: 'codex', npmPackage: '@openai/codex' },
  { name: 'opencode', title: 'opencode', bin: 'opencode', npmPackage: 'opencode-ai' },
  { name: 'continue', title: 'Continue CLI', bin: 'cn', npmPackage: '@continuedev/cli' },
];
