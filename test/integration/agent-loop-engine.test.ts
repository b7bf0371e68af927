// The agent loop on the real server and engine: a random-weight model that speaks the hermes
// format (Qwen2.5's tokenizer and chat template), each step forced to name one tool in turn
// (tool_choice {type: function}), so the grammar makes every call of every tool parse and validate
// against its schema; the loop runs each call (on a temp folder, the user rejecting every change and
// skipping every command), gives the results back, and ends with a plain answer (tool_choice none).
// The arguments are noise (random weights): what is tested is the loop's plumbing through the real
// server, not the model's judgement.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AgentLoop } from '../../extension/agent/loop.js';
import { CHANGE_TOOLS } from '../../extension/agent/change-tools.js';
import { NodeWorkspace } from '../../extension/agent/node-workspace.js';
import { WorkspacePaths } from '../../extension/agent/paths.js';
import { READ_TOOLS } from '../../extension/agent/read-tools.js';
import { ToolRegistry } from '../../extension/agent/registry.js';
import type { JsonSchema } from '../../extension/agent/schema.js';
import type { AgentTool } from '../../extension/agent/types.js';
import { StrataClient } from '../../extension/client/client.js';
import { ensureTestModel } from '../helpers/models.js';
import { startServer, type Running } from './server-helpers.js';

// Constrained sampling over a 152K vocabulary on a loaded 2-core machine.
vi.setConfig({ testTimeout: 900_000 });

/** The tool's schema with every string cut to 8 characters and arrays to one item: a random model's strings end. */
function bounded(s: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...s };
  if (s.type === 'string') out.maxLength = 8;
  if (s.type === 'array') { out.maxItems = 1; if (s.items) out.items = bounded(s.items); }
  if (s.properties) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, bounded(v)]));
  out.additionalProperties = s.type === 'object' ? false : out.additionalProperties;
  return out;
}

describe('the agent loop on the real engine, each tool forced in turn', () => {
  let srv: Running;
  let dir: string;
  beforeAll(async () => {
    srv = await startServer(await ensureTestModel({ vocab: 'qwen2.5-coder', chatTemplate: 'Qwen-Qwen2.5-7B-Instruct' }), { ctx: 4096, slots: 1 });
    dir = mkdtempSync(join(tmpdir(), 'strata-agent-engine-'));
    writeFileSync(join(dir, 'notes.md'), '# notes\nhello\n');
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every forced call parses and validates, runs, and its result goes back; the last step answers in text', async () => {
    const tools: AgentTool[] = [...READ_TOOLS, ...CHANGE_TOOLS].map((t) => ({ ...t, parameters: bounded(t.parameters) }));
    const order = tools.map((t) => t.name);
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    const reviewed: string[] = [];
    const commands: string[] = [];
    const loop = new AgentLoop({
      client: new StrataClient({ baseUrl: srv.url }),
      tools: new ToolRegistry(tools),
      workspace: new NodeWorkspace(paths, { exclude: () => [] }),
      paths,
      approvals: {
        allowTool: async () => true,
        review: async (changes) => { reviewed.push(...changes.map((c) => c.change.path)); return changes.map(() => false); },
        allowCommand: async (_s, command) => { commands.push(command); return false; },
      },
      settings: { maxSteps: order.length + 1, autoApproveReadOnly: true, allowedCommands: [], maxResultTokens: 300 },
      toolChoice: (step) => (step <= order.length ? { name: order[step - 1]! } : 'none'),
      maxTokens: 120,
      onEvent: () => undefined,
    });
    const run = await loop.run([{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'Use the tools.' }], new AbortController().signal);
    expect(run.error).toBeNull();
    expect(run.end).toBe('answer');
    expect(run.steps).toBe(order.length + 1);
    const assistants = run.messages.filter((m) => m.role === 'assistant');
    // One forced call per step, of the tool named, in order; then the answer without a call.
    expect(assistants.slice(0, -1).map((m) => m.toolCalls?.map((c) => c.name))).toEqual(order.map((n) => [n]));
    expect(assistants.at(-1)!.toolCalls).toBeUndefined();
    const results = run.messages.filter((m) => m.role === 'tool');
    expect(results).toHaveLength(order.length);
    for (const r of results) {
      // A result, never a complaint about the call's shape: the grammar made it valid.
      expect(r.content).not.toMatch(/not valid JSON|is required|must be|is not a parameter|no tool named/);
      expect(r.content.length).toBeGreaterThan(0);
    }
    // Nothing was written or run: every change was rejected, every command skipped (if the noise made one).
    expect(readdirSync(dir)).toEqual(['notes.md']);
    expect(commands.length + results.filter((r) => r.name === 'run_command' && r.content.startsWith('error:')).length).toBe(1);
    console.log(`agent loop on the engine: ${run.steps} steps; results:\n${results.map((r) => `  ${r.name}: ${r.content.split('\n')[0]!.slice(0, 100)}`).join('\n')}; reviewed ${JSON.stringify(reviewed)}`);
  });
});
