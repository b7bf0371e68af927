// What "Strata: Use with a Coding Agent" opens: a terminal whose program is `strata launch AGENT`
// under the editor's own runtime (Electron as Node, as the managed server runs), pointed at the
// server the extension uses. The key travels in the terminal's environment, never on its command
// line. No vscode here: the unit tests read the options.
import { CODING_AGENTS, type CodingAgent, type CodingAgentName } from '../../contract/coding-agents.js';

export interface AgentTerminalOptions {
  name: string;
  shellPath: string;
  shellArgs: string[];
  env: Record<string, string>;
}

/** The picks, in the order the CLI lists them. */
export const AGENT_PICKS: readonly CodingAgent[] = CODING_AGENTS;

export function agentTerminalOptions(agent: CodingAgentName, server: { baseUrl: string; apiKey: string | undefined }, runtime: { execPath: string; cli: string }): AgentTerminalOptions {
  const a = CODING_AGENTS.find((x) => x.name === agent)!;
  return {
    name: `Strata: ${a.title}`,
    shellPath: runtime.execPath,
    shellArgs: [runtime.cli, 'launch', agent, '--url', server.baseUrl],
    // An empty STRATA_API_KEY is no key (a server without one). A failure (no such agent on PATH)
    // waits for Enter, so the terminal does not close with its message.
    env: { ELECTRON_RUN_AS_NODE: '1', STRATA_API_KEY: server.apiKey ?? '', STRATA_LAUNCH_HOLD: '1' },
  };
}
