// The consent before an MCP server's command first starts: a modal that shows exactly what will
// run (command, arguments, environment, folder; hidden characters escaped), remembered per exact
// configuration in the extension's global state, so a changed setting asks again.
import * as vscode from 'vscode';
import { visibleText } from '../../contract/visible-text.js';
import { mcpConfigHash, type McpConsent } from './mcp.js';

/** globalState key: the configuration hashes the user allowed to start. */
export const MCP_CONSENT_KEY = 'strata.mcpServersAllowed';
export const START_BUTTON = 'Start Server';

export function mcpConsent(state: vscode.Memento): McpConsent {
  return async (name, spec, cwd) => {
    const hash = mcpConfigHash(spec, cwd);
    const allowed = state.get<string[]>(MCP_CONSENT_KEY, []);
    if (allowed.includes(hash)) return true;
    const env = Object.entries(spec.env);
    const detail = [
      `Command: ${visibleText(spec.command)}`,
      `Arguments: ${spec.args.length ? spec.args.map((a) => visibleText(JSON.stringify(a))).join(' ') : '(none)'}`,
      `Environment: ${env.length ? env.map(([k, v]) => visibleText(`${k}=${JSON.stringify(v)}`)).join(' ') : '(nothing added)'}`,
      `Folder: ${cwd ? visibleText(cwd) : '(none)'}`,
      '',
      'The program runs with your permissions. Start it only if you know it (strata.agent.mcpServers, user settings).',
    ].join('\n');
    const pick = await vscode.window.showWarningMessage(`Start the MCP server "${visibleText(name)}" for the agent?`, { modal: true, detail }, START_BUTTON);
    if (pick !== START_BUTTON) return false;
    await state.update(MCP_CONSENT_KEY, [...allowed, hash]);
    return true;
  };
}
