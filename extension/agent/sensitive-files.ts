// Files the agent treats apart from the rest of the workspace. Some run code without anyone
// asking (git's hooks and core.fsmonitor run on the next git command, and so do hooks kept in the
// repository for husky or core.hooksPath; direnv runs .envrc on cd; VS Code's tasks can run on
// folder open, workspace settings steer extensions and terminals): the agent's write tools refuse
// them, whatever the user would accept in a diff. Others look like they hold secrets: reading
// them always asks, and search_text leaves them out. Pure: paths are workspace-relative with "/".
import picomatch from 'picomatch';

/** Names (any folder) that look like credentials or keys. */
export const SECRET_NAME_GLOBS: readonly string[] = [
  '.env', '.env.*', '*.env', '*.pem', '*.key', '*.p12', '*.pfx', '*.jks', '*.keystore', 'id_*',
  '.npmrc', '.pypirc', '.netrc', '_netrc', '.git-credentials', 'credentials', 'credentials.json',
];

const secretName = picomatch([...SECRET_NAME_GLOBS], { dot: true, nocase: true });

/** A path segment as Windows reads it (trailing dots and spaces dropped), lower case. */
const norm = (segment: string): string => segment.replace(/[. ]+$/, '').toLowerCase() || segment;

/** VS Code's files in .vscode that run code or change how the editor and its extensions behave. */
const VSCODE_FILES = new Set(['settings.json', 'tasks.json', 'launch.json', 'mcp.json']);

/** Why the agent may not write `rel`, or null when it may. */
export function writeRefusal(rel: string): string | null {
  const parts = rel.split('/').filter((s) => s && s !== '.').map(norm);
  // "git~1" is the 8.3 short name Windows may give .git.
  if (parts.some((s) => s === '.git' || /^git~\d+$/.test(s))) {
    return `${rel} is inside .git, where git keeps its hooks and configuration (they run code on the next git command); the agent does not write there`;
  }
  // Hooks kept in the repository (husky, core.hooksPath = .githooks) run like .git/hooks once installed.
  if (parts.some((s) => s === '.husky' || s === '.githooks' || /^(husky|githoo)~\d+$/.test(s))) {
    return `${rel} is a git hook kept in the repository (it runs on the next git command); the agent does not write it: change it yourself`;
  }
  const name = parts[parts.length - 1] ?? '';
  const parent = parts[parts.length - 2];
  if (name === '.envrc' || /^envrc~\d+$/.test(name)) {
    return `${rel} is run by direnv when a shell enters the folder; the agent does not write it: change it yourself`;
  }
  if ((parent === '.vscode' || /^vscode~\d+$/.test(parent ?? '')) && VSCODE_FILES.has(name)) {
    return `${rel} configures VS Code (settings, tasks, launch configurations and MCP servers can run programs); the agent does not write it: change it yourself`;
  }
  if (name.endsWith('.code-workspace')) {
    return `${rel} is a VS Code workspace file (its settings and tasks can run programs); the agent does not write it: change it yourself`;
  }
  if (parts.includes('.devcontainer') || name === '.devcontainer.json') {
    return `${rel} configures a dev container (its commands run on this machine); the agent does not write it: change it yourself`;
  }
  return null;
}

/** Whether `rel` looks like a file holding secrets (by its name). */
export function looksSecret(rel: string): boolean {
  return secretName(rel.split('/').pop() ?? rel);
}
