// The tools that change the workspace: edit_file, create_file, run_command. None of them writes
// or runs anything itself: they return a proposal (a change, a command) that the loop puts before
// the user, and only what the user accepts happens.
import { applyBlocks, type EditBlock } from './edit-blocks.js';
import type { AgentTool, ToolOutcome } from './types.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export const editFile: AgentTool = {
  name: 'edit_file',
  kind: 'change',
  description: 'Change a file with search/replace blocks: each search text must appear exactly once in the file (copy it exactly, whitespace included); it is replaced by the replace text. The user reviews the change as a diff before it is applied.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Path relative to the workspace folder' },
      edits: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: { search: { type: 'string', description: 'Exact text to find' }, replace: { type: 'string', description: 'Text to put instead' } },
          required: ['search', 'replace'],
        },
      },
    },
    required: ['path', 'edits'],
  },
  async run(args, ctx): Promise<ToolOutcome> {
    const { abs, rel } = await ctx.paths.resolveForWrite(str(args.path) ?? '');
    const before = await ctx.readCurrent(abs);
    if (before === null) return { type: 'error', message: `${rel}: no such text file in the workspace (use create_file for a new file)` };
    const r = applyBlocks(before, args.edits as EditBlock[]);
    if (!r.ok) return { type: 'error', message: `${rel}: ${r.error}` };
    if (r.text === before) return { type: 'error', message: `${rel}: the edit changes nothing` };
    const n = (args.edits as unknown[]).length;
    return { type: 'change', change: { path: rel, abs, before, after: r.text }, summary: `${n} block${n === 1 ? '' : 's'}` };
  },
};

export const createFile: AgentTool = {
  name: 'create_file',
  kind: 'change',
  description: 'Create a new file with the given content (folders are created as needed). Fails when the file exists: change existing files with edit_file. The user reviews it before it is written.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string', description: 'Path relative to the workspace folder' }, content: { type: 'string', description: 'The whole content' } },
    required: ['path', 'content'],
  },
  async run(args, ctx): Promise<ToolOutcome> {
    const { abs, rel } = await ctx.paths.resolveForWrite(str(args.path) ?? '');
    if ((await ctx.readCurrent(abs)) !== null) return { type: 'error', message: `${rel} exists already; change it with edit_file` };
    const content = str(args.content) ?? '';
    return { type: 'change', change: { path: rel, abs, before: null, after: content }, summary: `new file, ${content.split('\n').length} lines` };
  },
};

export const runCommand: AgentTool = {
  name: 'run_command',
  kind: 'command',
  description: "Run a shell command in the workspace folder (an integrated terminal); answers its output (long output is cut) and exit code. The user confirms each command unless it is on the allow-list.",
  parameters: {
    type: 'object',
    properties: { command: { type: 'string', description: 'The command line' }, cwd: { type: 'string', description: 'Folder to run in, relative to the workspace (default: the workspace folder)' } },
    required: ['command'],
  },
  async run(args, ctx): Promise<ToolOutcome> {
    const command = (str(args.command) ?? '').trim();
    if (!command) return { type: 'error', message: 'command: must not be empty' };
    const { abs } = await ctx.paths.resolve(str(args.cwd)?.trim() || '.');
    return { type: 'command', command, cwd: abs };
  },
};

export const CHANGE_TOOLS: readonly AgentTool[] = [editFile, createFile, runCommand];
