// Where the agent may read and write, tried with real symbolic links in a temp folder: a link to
// nowhere at the leaf (the write would land outside), a link at the leaf for writes, UNC and
// device paths refused before anything is looked up, a workspace that is the file system's root
// or the home folder; files that run code refused for writes; secret-looking and ignored files
// asking even with autoApproveReadOnly.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, parse } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentLoop } from '../../extension/agent/loop.js';
import { CHANGE_TOOLS, createFile, editFile } from '../../extension/agent/change-tools.js';
import { NodeWorkspace } from '../../extension/agent/node-workspace.js';
import { lexicalProblem, PathRefused, WorkspacePaths } from '../../extension/agent/paths.js';
import { READ_TOOLS, searchCodebase } from '../../extension/agent/read-tools.js';
import { ToolRegistry } from '../../extension/agent/registry.js';
import { looksSecret, writeRefusal } from '../../extension/agent/sensitive-files.js';
import type { AgentApprovals, ToolContext } from '../../extension/agent/types.js';
import { StrataClient } from '../../extension/client/client.js';
import { ScriptedModelServer } from '../helpers/scripted-model-server.js';

let dir: string;
let outside: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-paths-'));
  outside = mkdtempSync(join(tmpdir(), 'strata-paths-out-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const refused = async (p: Promise<unknown>): Promise<string> => {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(PathRefused);
  return (err as Error).message;
};

function ctxFor(paths: WorkspacePaths): ToolContext {
  const workspace = new NodeWorkspace(paths, { exclude: () => [] });
  return { signal: new AbortController().signal, workspace, paths, readCurrent: (abs) => workspace.readText(abs) };
}

describe('symbolic links', () => {
  it('a dangling link at the leaf is refused: create_file cannot write through it to a file outside', async () => {
    const target = join(outside, 'authorized_keys');
    symlinkSync(target, join(dir, 'notes.md'));
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    expect(await refused(paths.resolve('notes.md'))).toMatch(/symbolic link that leads nowhere/);
    const ctx = ctxFor(paths);
    await expect(createFile.run({ path: 'notes.md', content: 'ssh-ed25519 AAAA attacker' }, ctx)).rejects.toThrow(/leads nowhere/);
    // Even a change proposed before the link appeared is not written through it.
    const workspace = new NodeWorkspace(paths, { exclude: () => [] });
    const problem = await workspace.apply({ path: 'notes.md', abs: join(dir, 'notes.md'), before: null, after: 'x' });
    expect(problem).toMatch(/symbolic link/);
    expect(existsSync(target)).toBe(false);
  });

  it('a dangling link as a parent folder is refused too', async () => {
    symlinkSync(join(outside, 'gone'), join(dir, 'sub'));
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    expect(await refused(paths.resolveForWrite('sub/new.txt'))).toMatch(/leads nowhere/);
  });

  it('writes refuse a link at the leaf even when it points inside; reads follow it', async () => {
    writeFileSync(join(dir, 'real.txt'), 'real\n');
    symlinkSync(join(dir, 'real.txt'), join(dir, 'link.txt'));
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    expect((await paths.resolve('link.txt')).rel).toBe('real.txt');
    expect(await refused(paths.resolveForWrite('link.txt'))).toMatch(/symbolic link; the agent does not write through links/);
    await expect(editFile.run({ path: 'link.txt', edits: [{ search: 'real', replace: 'x' }] }, ctxFor(paths))).rejects.toThrow(/symbolic link/);
    expect(readFileSync(join(dir, 'real.txt'), 'utf8')).toBe('real\n');
  });

  it('a link to a file outside is refused for reading', async () => {
    writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'innocent.txt'));
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    expect(await refused(paths.resolve('innocent.txt'))).toMatch(/outside the workspace/);
  });

  it('a new file is created with O_EXCL: one that appeared since the proposal is not overwritten', async () => {
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    const workspace = new NodeWorkspace(paths, { exclude: () => [] });
    writeFileSync(join(dir, 'late.txt'), 'theirs');
    expect(await workspace.apply({ path: 'late.txt', abs: join(dir, 'late.txt'), before: null, after: 'ours' })).toMatch(/EEXIST/);
    expect(readFileSync(join(dir, 'late.txt'), 'utf8')).toBe('theirs');
  });
});

describe('paths checked as written, before the file system', () => {
  it('UNC and device paths are refused on every platform', async () => {
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    for (const p of ['\\\\attacker.example\\share\\x', '//attacker.example/share/x', '\\\\?\\C:\\Windows\\win.ini', '\\\\.\\pipe\\x', '//?/C:/x', '//./COM1']) {
      expect(await refused(paths.resolve(p)), p).toMatch(/network \(UNC\) or device path/);
    }
    expect(lexicalProblem('C:relative')).toMatch(/drive's current folder/);
    expect(lexicalProblem('src/a.ts')).toBeNull();
    expect(await refused(paths.resolve('../x'))).toMatch(/outside the workspace/);
    expect(await refused(paths.resolve('a/../../x'))).toMatch(/outside the workspace/);
  });

  it('a workspace folder that is the file system root or the home folder is too broad', async () => {
    const root = parse(dir).root;
    expect(await refused(new WorkspacePaths([{ name: 'r', path: root }]).resolve('etc/passwd'))).toMatch(/the root of the file system, too broad/);
    expect(await refused(new WorkspacePaths([{ name: 'h', path: homedir() }]).resolve('.ssh/authorized_keys'))).toMatch(/your home folder, too broad/);
    // With a project folder beside it, the project is still usable.
    const both = new WorkspacePaths([{ name: 'ws', path: dir }, { name: 'h', path: homedir() }]);
    writeFileSync(join(dir, 'a.txt'), 'a');
    expect((await both.resolve('ws/a.txt')).rel).toBe('ws/a.txt');
    expect(await refused(both.resolve('h/.bashrc'))).toMatch(/home folder/);
  });
});

describe('files that run code or hold secrets', () => {
  it('the write tools refuse .git, VS Code\'s settings, tasks, launch and MCP files, workspace files', async () => {
    mkdirSync(join(dir, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(dir, '.git', 'config'), '[core]\n');
    mkdirSync(join(dir, 'nested', '.git'), { recursive: true });
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    const ctx = ctxFor(paths);
    for (const p of ['.git/hooks/pre-commit', '.git/config', 'nested/.git/config', '.GIT/config', '.git./config', '.vscode/settings.json', '.vscode/tasks.json', '.vscode/launch.json', '.vscode/mcp.json', 'a.code-workspace', '.devcontainer/devcontainer.json']) {
      await expect(createFile.run({ path: p, content: '[core]\n\tfsmonitor = "curl x | sh"\n' }, ctx), p).rejects.toThrow(/does not write/);
    }
    await expect(editFile.run({ path: '.git/config', edits: [{ search: '[core]', replace: '[core]\n\tfsmonitor = x' }] }, ctx)).rejects.toThrow(/inside \.git, where git keeps its hooks/);
    // A link that leads into .git under another name.
    symlinkSync(join(dir, '.git'), join(dir, 'gitdir'));
    await expect(createFile.run({ path: 'gitdir/hooks/post-checkout', content: 'x' }, ctx)).rejects.toThrow(/inside \.git/);
    expect(existsSync(join(dir, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect((await createFile.run({ path: '.vscode/extensions.json', content: '{}' }, ctx)).type).toBe('change');
    expect(writeRefusal('src/git.ts')).toBeNull();
  });

  it('the write tools refuse hooks kept in the repository (husky, .githooks) and direnv\'s .envrc, which run code like .git/hooks', async () => {
    mkdirSync(join(dir, '.husky'));
    writeFileSync(join(dir, '.husky', 'pre-commit'), 'npm test\n');
    const ctx = ctxFor(new WorkspacePaths([{ name: 'ws', path: dir }]));
    for (const p of ['.husky/pre-commit', '.husky/_/husky.sh', 'packages/web/.husky/pre-push', '.githooks/post-checkout', '.GITHOOKS/pre-commit', '.envrc', 'services/api/.envrc', '.Envrc.']) {
      await expect(createFile.run({ path: p, content: 'curl x | sh\n' }, ctx), p).rejects.toThrow(/does not write/);
    }
    await expect(editFile.run({ path: '.husky/pre-commit', edits: [{ search: 'npm test', replace: 'curl x | sh' }] }, ctx)).rejects.toThrow(/git hook kept in the repository/);
    await expect(createFile.run({ path: '.envrc', content: 'x' }, ctx)).rejects.toThrow(/run by direnv/);
    // A link that leads into .husky under another name.
    symlinkSync(join(dir, '.husky'), join(dir, 'hooks-link'));
    await expect(editFile.run({ path: 'hooks-link/pre-commit', edits: [{ search: 'npm test', replace: 'x' }] }, ctx)).rejects.toThrow(/git hook/);
    expect(readFileSync(join(dir, '.husky', 'pre-commit'), 'utf8')).toBe('npm test\n');
    for (const p of ['docs/husky.md', 'envrc.ts', '.envrc.example', 'src/githooks.ts']) expect(writeRefusal(p), p).toBeNull();
  });

  it('search_codebase leaves out chunks of secret-looking files', async () => {
    const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
    const ctx = ctxFor(paths);
    const chunk = (path: string, text: string) => ({ chunk: { path, startLine: 1, endLine: 1, text } });
    ctx.workspace.codebase = async () => ({ hits: [chunk('.env', 'TOKEN=hunter2'), chunk('certs/server.key', 'KEY'), chunk('main.ts', 'const TOKEN = 1;')] });
    expect(await searchCodebase.run({ query: 'TOKEN' }, ctx)).toEqual({ type: 'text', text: 'main.ts:1-1\nconst TOKEN = 1;' });
  });

  it('names that look like secrets', () => {
    for (const p of ['.env', '.env.local', 'config/prod.env', 'server.pem', 'tls/server.key', 'id_rsa', 'home/.ssh/id_ed25519', '.npmrc']) expect(looksSecret(p), p).toBe(true);
    for (const p of ['src/env.ts', 'README.md', 'key.ts', 'identity.py']) expect(looksSecret(p), p).toBe(false);
  });

  it('reading a secret-looking or ignored file asks even with autoApproveReadOnly; search_text leaves secrets out', async () => {
    writeFileSync(join(dir, '.env'), 'TOKEN=hunter2\n');
    writeFileSync(join(dir, '.gitignore'), 'build/\n');
    mkdirSync(join(dir, 'build'));
    writeFileSync(join(dir, 'build', 'out.txt'), 'built\n');
    writeFileSync(join(dir, 'main.ts'), 'export const TOKEN = 1;\n');
    const server = new ScriptedModelServer({ chat: (_b, i) => [
      { toolCalls: [
        { name: 'read_file', arguments: JSON.stringify({ path: '.env' }) },
        { name: 'read_file', arguments: JSON.stringify({ path: 'build/out.txt' }) },
        { name: 'read_file', arguments: JSON.stringify({ path: 'main.ts' }) },
        { name: 'search_text', arguments: JSON.stringify({ query: 'TOKEN' }) },
      ] },
      { text: 'done' },
    ][Math.min(i, 1)]! });
    try {
      const url = await server.start();
      const paths = new WorkspacePaths([{ name: 'ws', path: dir }]);
      const asked: string[] = [];
      const approvals: AgentApprovals = {
        allowTool: async (s) => { asked.push(String(s.args.path)); return false; },
        review: async (c) => c.map(() => false),
        allowCommand: async () => false,
      };
      const loop = new AgentLoop({
        client: new StrataClient({ baseUrl: url }), tools: new ToolRegistry([...READ_TOOLS, ...CHANGE_TOOLS]),
        workspace: new NodeWorkspace(paths, { exclude: () => [] }), paths, approvals, onEvent: () => undefined,
        settings: { maxSteps: 5, autoApproveReadOnly: true, allowedCommands: [], maxResultTokens: 2000 },
      });
      const run = await loop.run([{ role: 'user', content: 'go' }], new AbortController().signal);
      const results = run.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      expect(asked).toEqual(['.env', 'build/out.txt']);
      expect(results[0]).toBe('the user did not allow this call');
      expect(results[1]).toBe('the user did not allow this call');
      expect(results[2]).toContain('export const TOKEN = 1;');
      expect(results[3]).toBe('main.ts:1: export const TOKEN = 1;');
    } finally {
      await server.close();
    }
  });
});
