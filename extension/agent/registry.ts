// The tools the agent offers the model: names, descriptions and JSON schemas as sent with the
// request, and the argument check before one runs. Built-in tools and MCP tools live side by side;
// a name may be taken once.
import type { ToolSpec } from '../client/types.js';
import { schemaProblem } from './schema.js';
import type { AgentTool } from './types.js';

export class ToolRegistry {
  private readonly tools = new Map<string, AgentTool>();

  constructor(tools: readonly AgentTool[] = []) {
    for (const t of tools) this.add(t);
  }

  add(tool: AgentTool): void {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) throw new Error(`tool name ${JSON.stringify(tool.name)}: letters, digits, _ and - only (at most 64)`);
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    this.tools.set(tool.name, tool);
  }

  get(name: string): AgentTool | undefined {
    return this.tools.get(name);
  }

  get names(): string[] {
    return [...this.tools.keys()];
  }

  get size(): number {
    return this.tools.size;
  }

  specs(): ToolSpec[] {
    return [...this.tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
  }

  /**
   * The arguments of a call, parsed and checked against the tool's schema; a string is the error
   * to return to the model (unknown tool, arguments that are not JSON or miss a field).
   */
  parse(name: string, argsText: string): { tool: AgentTool; args: Record<string, unknown> } | string {
    const tool = this.tools.get(name);
    if (!tool) return `there is no tool named ${JSON.stringify(name)}; the tools are: ${this.names.join(', ')}`;
    let args: unknown;
    try {
      args = argsText.trim() === '' ? {} : JSON.parse(argsText);
    } catch (err) {
      return `the arguments of ${name} are not valid JSON (${(err as Error).message}): ${argsText.slice(0, 200)}`;
    }
    if (!args || typeof args !== 'object' || Array.isArray(args)) return `the arguments of ${name} must be a JSON object`;
    const problem = schemaProblem(tool.parameters, args);
    return problem ? `${name}: ${problem}` : { tool, args: args as Record<string, unknown> };
  }
}
