// The repository's rules for the agent: AGENTS.md at a workspace folder's root and in any folder
// below it (the AGENTS.md convention: a folder's file applies to the files under it, the nearest
// one wins), plus the files strata.agent.rulesFiles names (CLAUDE.md, .github/copilot-instructions.md).
// They go into the system message, so they count in the context like the rest of it, stay the
// same from step to step (the server keeps their KV) and survive a compaction, which keeps the
// system message. Each file is bounded in tokens, and all of them together.
// The system message goes to the chat server, which may be remote, so a rules file gets the checks
// read_file's asking applies: a file outside the workspace (also through a link), one that looks
// like it holds secrets, or one the workspace ignores is not read, and the user is told which.
import type { RuleFileView } from '../../contract/agent-plan.js';
import { boundResult, type TokenCounter } from './budget.js';
import type { WorkspacePaths } from './paths.js';
import { looksSecret } from './sensitive-files.js';

export const RULES_FILE = 'AGENTS.md';
/** The most the rules may take of the system message (tokens), all files together. */
export const RULES_MAX_TOKENS = 6000;
/** Nested AGENTS.md files read at most (the nearest to the root first). */
export const MAX_RULE_FILES = 24;

export interface RuleFile {
  /** Workspace-relative path, forward slashes. */
  path: string;
  /** The folder the rules apply to, workspace-relative ('' for the whole workspace). */
  scope: string;
  text: string;
  tokens: number;
  /** tokens is a character estimate (the server's tokenizer was not there). */
  estimated: boolean;
  cut: boolean;
}

export interface RulesSource {
  paths: WorkspacePaths;
  /** Workspace-relative files (respecting .gitignore), as list_files sees them. */
  listFiles(signal: AbortSignal): Promise<string[]>;
  readText(abs: string): Promise<string | null>;
  /** Whether the workspace ignores a file (.gitignore, .git/), as read_file asks. */
  isIgnored(abs: string): Promise<boolean>;
  /** Told of each rules file that is not read, with why (the message names it). */
  skipped?: ((message: string) => void) | undefined;
  /** strata.agent.rulesFiles: more files, relative to each workspace folder. */
  extra: readonly string[];
  count?: TokenCounter | undefined;
  maxTokens?: number;
}

const dirOf = (rel: string): string => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');
const depth = (scope: string): number => (scope ? scope.split('/').length : 0);

/** The rule files of the workspace: each folder root's (AGENTS.md, then the extra ones), then nested AGENTS.md by depth. */
export async function loadRules(src: RulesSource, signal: AbortSignal): Promise<RuleFile[]> {
  const multi = src.paths.roots.length > 1;
  const wanted: Array<{ rel: string; scope: string; named: boolean }> = [];
  for (const root of src.paths.roots) {
    const prefix = multi ? `${root.name}/` : '';
    for (const name of [RULES_FILE, ...src.extra]) wanted.push({ rel: `${prefix}${name.replace(/\\/g, '/').replace(/^\.\//, '')}`, scope: multi ? root.name : '', named: name !== RULES_FILE });
  }
  const listed = await src.listFiles(signal);
  const nested = listed
    .filter((rel) => (rel === RULES_FILE || rel.endsWith(`/${RULES_FILE}`)) && !wanted.some((w) => w.rel === rel))
    .map((rel) => ({ rel, scope: dirOf(rel), named: false }))
    .sort((a, b) => depth(a.scope) - depth(b.scope) || a.rel.localeCompare(b.rel))
    .slice(0, MAX_RULE_FILES);
  const out: RuleFile[] = [];
  const seen = new Set<string>();
  let left = src.maxTokens ?? RULES_MAX_TOKENS;
  for (const w of [...wanted, ...nested]) {
    if (left <= 0) break;
    let resolved: { abs: string; rel: string };
    try {
      resolved = await src.paths.resolve(w.rel);
    } catch (err) {
      src.skipped?.(`rules file ${w.rel} not read: ${(err as Error).message}`); // outside the workspace: never read
      continue;
    }
    if (seen.has(resolved.abs)) continue;
    if (looksSecret(w.rel) || looksSecret(resolved.rel)) {
      src.skipped?.(`rules file ${w.rel} not read: ${resolved.rel} looks like it holds secrets`);
      continue;
    }
    // A plain AGENTS.md is rules whatever git makes of it (one kept out of git is common); a file
    // the setting names, or one reached through a link, is not read when the workspace ignores it.
    if ((w.named || resolved.rel !== w.rel) && (await src.isIgnored(resolved.abs))) {
      src.skipped?.(`rules file ${w.rel} not read: the workspace ignores ${resolved.rel} (.gitignore)`);
      continue;
    }
    seen.add(resolved.abs);
    const text = (await src.readText(resolved.abs))?.trim();
    if (!text) continue;
    const b = await boundResult(text, left, { count: src.count, signal });
    const exact = b.counted === 'tokenizer' ? b.tokens : await countExact(src.count, b.text, signal);
    out.push({ path: resolved.rel, scope: w.scope, text: b.text, tokens: exact ?? b.tokens, estimated: exact === null, cut: b.cut });
    left -= exact ?? b.tokens;
  }
  return out;
}

/** The server's count of `text`, or null without a server (a short text boundResult did not count). */
async function countExact(count: TokenCounter | undefined, text: string, signal: AbortSignal): Promise<number | null> {
  if (!count) return null;
  try {
    return await count(text, signal);
  } catch (err) {
    if (signal.aborted) throw err;
    return null;
  }
}

/** The rule files that apply to a workspace-relative path, the nearest first. */
export function rulesFor(rules: readonly RuleFile[], rel: string): RuleFile[] {
  const norm = rel.replace(/\\/g, '/');
  return rules.filter((r) => r.scope === '' || norm.startsWith(`${r.scope}/`)).sort((a, b) => depth(b.scope) - depth(a.scope));
}

/** The rules as the system message's last part ('' when there are none). */
export function rulesSection(rules: readonly RuleFile[]): string {
  if (!rules.length) return '';
  const parts = ["# The repository's rules", "Follow these rules from the repository's own files. A folder's rules apply to the files under it; where they disagree, the rules of the folder nearest to the file win."];
  for (const r of rules) parts.push(`## ${r.path} (${r.scope ? `for files under ${r.scope}/` : 'for the whole workspace'})`, r.text);
  return parts.join('\n\n');
}

/** The system message with the rules after the agent's own instructions. */
export function withRules(system: string, rules: readonly RuleFile[]): string {
  const section = rulesSection(rules);
  return section ? `${system}\n\n${section}` : system;
}

export const ruleViews = (rules: readonly RuleFile[]): RuleFileView[] =>
  rules.map((r) => ({ path: r.path, scope: r.scope, tokens: r.tokens, estimated: r.estimated, ...(r.cut ? { cut: true } : {}) }));
