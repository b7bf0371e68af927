// The read-only tools: read_file, list_files, search_text, get_diagnostics, search_codebase.
// They only look; with strata.agent.autoApproveReadOnly (the default) they run without asking.
import picomatch from 'picomatch';
import { looksSecret } from './sensitive-files.js';
import type { AgentTool, ToolContext, ToolOutcome } from './types.js';

const MAX_LIST = 400;
const MAX_MATCHES = 100;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

async function inWorkspace(ctx: ToolContext, path: unknown): Promise<{ abs: string; rel: string }> {
  return ctx.paths.resolve(str(path) ?? '');
}

export const readFile: AgentTool = {
  name: 'read_file',
  kind: 'read',
  description: 'Read a text file of the workspace, whole or a range of lines (1-based, inclusive). The text comes back exactly as in the file (no line numbers added).',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Path relative to the workspace folder' },
      startLine: { type: 'integer', minimum: 1, description: 'First line to read (default 1)' },
      endLine: { type: 'integer', minimum: 1, description: 'Last line to read (default: the end)' },
    },
    required: ['path'],
  },
  async askFirst(args, ctx): Promise<string | null> {
    const { abs, rel } = await inWorkspace(ctx, args.path);
    if (looksSecret(rel)) return `${rel} looks like it holds secrets`;
    if (await ctx.workspace.isIgnored(abs)) return `the workspace ignores ${rel} (.gitignore)`;
    return null;
  },
  async run(args, ctx): Promise<ToolOutcome> {
    const { abs, rel } = await inWorkspace(ctx, args.path);
    const text = await ctx.readCurrent(abs);
    if (text === null) return { type: 'error', message: `${rel}: no such text file in the workspace` };
    const lines = text.split('\n');
    const start = int(args.startLine) ?? 1;
    const end = Math.min(int(args.endLine) ?? lines.length, lines.length);
    if (start > lines.length) return { type: 'error', message: `${rel} has ${lines.length} lines; startLine ${start} is past the end` };
    if (end < start) return { type: 'error', message: `endLine ${end} is before startLine ${start}` };
    const whole = start === 1 && end === lines.length;
    const head = whole ? `${rel} (${lines.length} lines):` : `${rel}, lines ${start}-${end} of ${lines.length}:`;
    return { type: 'text', text: `${head}\n${lines.slice(start - 1, end).join('\n')}` };
  },
};

export const listFiles: AgentTool = {
  name: 'list_files',
  kind: 'read',
  description: 'List the files of the workspace (respecting .gitignore and files.exclude), optionally only those matching a glob such as "src/**/*.ts".',
  parameters: {
    type: 'object',
    properties: { glob: { type: 'string', description: 'Glob relative to the workspace folder (default: all files)' } },
  },
  async run(args, ctx): Promise<ToolOutcome> {
    const glob = str(args.glob)?.trim() || '**';
    const match = picomatch(glob, { dot: true });
    const all = (await ctx.workspace.listFiles(ctx.signal)).filter((p) => match(p) || (!glob.includes('/') && match(p.split('/').pop()!)));
    if (!all.length) return { type: 'text', text: `no files match ${glob}` };
    const shown = all.slice(0, MAX_LIST);
    const more = all.length > shown.length ? `\n[${all.length - shown.length} more files not listed: use a narrower glob]` : '';
    return { type: 'text', text: `${all.length} file(s) match ${glob}:\n${shown.join('\n')}${more}` };
  },
};

export const searchText: AgentTool = {
  name: 'search_text',
  kind: 'read',
  description: 'Search the text of the workspace files for a string (or a regular expression); answers path:line: text for each matching line. Files that look like they hold secrets (.env, keys) are left out: read_file them (the user is asked).',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'The text to find' },
      regex: { type: 'boolean', description: 'Treat query as a regular expression (default false)' },
      glob: { type: 'string', description: 'Only files matching this glob, e.g. "**/*.py"' },
    },
    required: ['query'],
  },
  async run(args, ctx): Promise<ToolOutcome> {
    const query = str(args.query) ?? '';
    if (!query) return { type: 'error', message: 'query: must not be empty' };
    const regex = args.regex === true;
    if (regex) {
      try { new RegExp(query); } catch (err) { return { type: 'error', message: `query is not a valid regular expression: ${(err as Error).message}` }; }
    }
    const hits = await ctx.workspace.searchText(query, { regex, glob: str(args.glob)?.trim() || null, maxResults: MAX_MATCHES + 1 }, ctx.signal);
    if (!hits.length) return { type: 'text', text: `no matches for ${JSON.stringify(query)}` };
    const shown = hits.slice(0, MAX_MATCHES);
    const more = hits.length > MAX_MATCHES ? `\n[more than ${MAX_MATCHES} matches: only the first ${MAX_MATCHES} are shown; narrow the query or the glob]` : '';
    return { type: 'text', text: `${shown.map((m) => `${m.path}:${m.line}: ${m.text.trim().slice(0, 240)}`).join('\n')}${more}` };
  },
};

export const getDiagnostics: AgentTool = {
  name: 'get_diagnostics',
  kind: 'read',
  description: "The Problems (errors, warnings) VS Code reports for a file, or for the whole workspace when no path is given.",
  parameters: { type: 'object', properties: { path: { type: 'string', description: 'A file (default: every file)' } } },
  async run(args, ctx): Promise<ToolOutcome> {
    const target = str(args.path) ? await inWorkspace(ctx, args.path) : undefined;
    const items = ctx.workspace.diagnostics(target?.abs);
    if (!items.length) return { type: 'text', text: target ? `no problems reported for ${target.rel}` : 'no problems reported in the workspace' };
    return { type: 'text', text: items.map((d) => `${d.path}:${d.line}:${d.column}: ${d.severity}: ${d.message}${d.source ? ` (${d.source})` : ''}`).join('\n') };
  },
};

export const searchCodebase: AgentTool = {
  name: 'search_codebase',
  kind: 'read',
  description: "Search the workspace's codebase index by meaning and keywords; answers the best matching code chunks with their paths and lines.",
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'What to look for, in words or identifiers' },
      limit: { type: 'integer', minimum: 1, maximum: 20, description: 'How many chunks (default 5)' },
    },
    required: ['query'],
  },
  async run(args, ctx): Promise<ToolOutcome> {
    const search = ctx.workspace.codebase;
    if (!search) return { type: 'error', message: 'the codebase index is off (strata.codebase.enabled) or not built; use search_text' };
    const r = await search(str(args.query) ?? '', { limit: int(args.limit) ?? 5 }, ctx.signal);
    // As search_text: files that look like they hold secrets only through read_file, which asks.
    const hits = r.hits.filter((h) => !looksSecret(h.chunk.path));
    if (!hits.length) return { type: 'text', text: 'the codebase index found nothing for that query' };
    return { type: 'text', text: hits.map((h) => `${h.chunk.path}:${h.chunk.startLine}-${h.chunk.endLine}\n${h.chunk.text}`).join('\n\n') };
  },
};

export const READ_TOOLS: readonly AgentTool[] = [readFile, listFiles, searchText, getDiagnostics, searchCodebase];
