// MCP servers from strata.agent.mcpServers (stdio), through the official SDK's Client and
// StdioClientTransport: each server's tools join the agent's with their input schemas, named
// "<server>_<tool>". A server is started on the first agent run that needs it and kept while its
// settings stay the same; one that fails to start is logged and left out, the others still serve.
// Before a server's command first runs the user consents (McpConsent: shown the exact command,
// arguments, environment and folder); a server the user declines is left out for the session.
// A tool's annotations are the server's own claims: they count only for a server the user marked
// trusted, and a tool that may reach the network always asks.
import { createHash } from 'node:crypto';
import nodePath from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Platform } from '../../common/os/process.js';
import { findProgram } from './child-command.js';
import type { JsonSchema } from './schema.js';
import type { AgentTool, ToolOutcome } from './types.js';

export interface McpServerSpec { command: string; args: string[]; env: Record<string, string>; trusted?: boolean }

/** Asks the user whether a server's command may start (resolves true when it may). */
export type McpConsent = (name: string, spec: McpServerSpec, cwd: string | undefined) => Promise<boolean>;

/** The identity of what a consent allows: the exact command, arguments, environment and folder. */
export function mcpConfigHash(spec: McpServerSpec, cwd: string | undefined): string {
  const env = Object.keys(spec.env).sort().map((k) => [k, spec.env[k]]);
  return createHash('sha256').update(JSON.stringify([spec.command, spec.args, env, cwd ?? null])).digest('hex');
}

/** Whether a tool may run without asking: its server is trusted, and it says it only reads and stays off the network. */
export function mcpRunsUnasked(trusted: boolean, annotations: { readOnlyHint?: boolean | undefined; openWorldHint?: boolean | undefined } | undefined): boolean {
  return trusted && annotations?.readOnlyHint === true && annotations.openWorldHint === false;
}

/**
 * The program a server's command starts, as an absolute path: a name is looked up on PATH's
 * absolute folders only (PATHEXT's extensions on Windows), never in the folder the server starts
 * in, which the repository controls (cross-spawn's lookup on Windows tries that folder first, so
 * a repository's npx.cmd would run as "npx"); a path is taken relative to that folder.
 */
export async function mcpProgram(command: string, cwd: string | undefined, env: NodeJS.ProcessEnv, platform: Platform = process.platform, path: nodePath.PlatformPath = nodePath): Promise<string> {
  const found = await findProgram(command, cwd ?? process.cwd(), env, platform, path);
  if (!found) throw new Error(`${command}: no such program on PATH (only its absolute folders are searched, never the workspace folder)`);
  return found;
}

/** How long a server may take to start and list its tools. */
const START_TIMEOUT_MS = 20_000;

interface Connection { key: string; client: Client; tools: AgentTool[] }

/** "<server>_<tool>" within the 64 characters and the letters a function name may use. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}_${tool}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
}

/** An MCP tool result as the text the model reads (text parts; other parts named, not inlined). */
export function mcpResultText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content.map((c: { type?: unknown; text?: unknown; mimeType?: unknown; resource?: { uri?: unknown; text?: unknown } }) => {
    if (c.type === 'text' && typeof c.text === 'string') return c.text;
    if (c.type === 'resource' && typeof c.resource?.text === 'string') return c.resource.text;
    return `[${String(c.type)} content${typeof c.mimeType === 'string' ? ` (${c.mimeType})` : ''} left out]`;
  }).join('\n');
}

/** Tells the model which configured MCP servers the user did not allow, so it can say why their tools are missing. */
export function mcpDeclinedNote(declined: readonly string[]): string {
  if (!declined.length) return '';
  return `\n\nThe MCP server${declined.length > 1 ? 's' : ''} ${declined.map((n) => JSON.stringify(n)).join(', ')} ${declined.length > 1 ? 'are' : 'is'} configured, but the user did not allow ${declined.length > 1 ? 'them' : 'it'} to start, so ${declined.length > 1 ? 'their' : 'its'} tools are not available. Say so when a request needs them.`;
}

export class McpTools {
  private readonly connections = new Map<string, Connection>();
  /** Configurations the user declined in this session (not asked again until it changes). */
  private readonly declined = new Set<string>();

  constructor(private readonly log: (message: string) => void, private readonly cwd: () => string | undefined, private readonly consent: McpConsent) {}

  /**
   * The tools of every configured server (starting the ones not running, after consent), and the
   * servers the user did not allow to start; closes servers no longer configured.
   */
  async tools(servers: Record<string, McpServerSpec>, signal?: AbortSignal): Promise<{ tools: AgentTool[]; declined: string[] }> {
    for (const [name, c] of this.connections) {
      if (!servers[name] || c.key !== JSON.stringify(servers[name])) await this.close(name);
    }
    const out: AgentTool[] = [];
    const declined: string[] = [];
    for (const [name, spec] of Object.entries(servers)) {
      try {
        let c = this.connections.get(name);
        if (!c) {
          const hash = mcpConfigHash(spec, this.cwd());
          if (this.declined.has(hash) || !(await this.consent(name, spec, this.cwd()))) {
            if (!this.declined.has(hash)) this.log(`MCP server "${name}": not started (the user did not allow its command)`);
            this.declined.add(hash);
            declined.push(name);
            continue;
          }
          c = await this.connect(name, spec, signal);
        }
        out.push(...c.tools);
      } catch (err) {
        if (signal?.aborted) throw err;
        this.log(`MCP server "${name}" (${spec.command}) could not start: ${(err as Error).message}`);
      }
    }
    return { tools: out, declined };
  }

  private async connect(name: string, spec: McpServerSpec, signal?: AbortSignal): Promise<Connection> {
    const cwd = this.cwd();
    const env = { ...getDefaultEnvironment(), ...spec.env };
    // PATHEXT is not among the variables the server inherits; the lookup uses this machine's.
    const command = await mcpProgram(spec.command, cwd, { PATHEXT: process.env.PATHEXT, ...env });
    const transport = new StdioClientTransport({ command, args: spec.args, env, stderr: 'pipe', ...(cwd ? { cwd } : {}) });
    transport.stderr?.on('data', (d: Buffer) => this.log(`MCP ${name}: ${String(d).trimEnd()}`));
    const client = new Client({ name: 'strata-vscode', version: '1' }, { capabilities: {} });
    try {
      await client.connect(transport, { timeout: START_TIMEOUT_MS, ...(signal ? { signal } : {}) });
      const listed = await client.listTools(undefined, { timeout: START_TIMEOUT_MS, ...(signal ? { signal } : {}) });
      const tools = listed.tools.map((t): AgentTool => ({
        name: mcpToolName(name, t.name),
        kind: 'external',
        readOnlyHint: mcpRunsUnasked(spec.trusted === true, t.annotations),
        description: `${t.description ?? t.title ?? t.name} (MCP server ${name})`,
        parameters: t.inputSchema as JsonSchema,
        run: async (args, ctx): Promise<ToolOutcome> => {
          const r = await client.callTool({ name: t.name, arguments: args }, undefined, { signal: ctx.signal, timeout: 120_000 });
          const text = mcpResultText(r.content) || (r.structuredContent ? JSON.stringify(r.structuredContent) : '');
          return r.isError ? { type: 'error', message: text || 'the MCP tool failed' } : { type: 'text', text: text || '(no content)' };
        },
      }));
      const c: Connection = { key: JSON.stringify(spec), client, tools };
      this.connections.set(name, c);
      this.log(`MCP server "${name}": ${tools.length} tool(s): ${tools.map((t) => t.name).join(', ')}`);
      return c;
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  }

  private async close(name: string): Promise<void> {
    const c = this.connections.get(name);
    this.connections.delete(name);
    await c?.client.close().catch(() => undefined);
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.connections.keys()].map((n) => this.close(n)));
  }
}
