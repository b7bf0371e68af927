// The one rule for session names, applied by the server (a 400 naming the field), the commands,
// @strata and the panel (before anything is sent): the name becomes a file name, so 1-64
// letters, digits, '.', '_' and '-', not starting with a dot (it can neither leave the sessions
// folder nor hide a file).
export const SESSION_NAME_MAX = 64;

const ALLOWED = /^[A-Za-z0-9._-]$/;

/** Why `name` cannot name a session ("must be 1-64 characters, got 0"), or null when it can. */
export function sessionNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > SESSION_NAME_MAX) return `must be 1-${SESSION_NAME_MAX} characters, got ${name.length}`;
  if (name.startsWith('.')) return 'must not start with a dot';
  const bad = [...name].find((c) => !ALLOWED.test(c));
  if (bad !== undefined) return `may contain only letters, digits, '.', '_' and '-' (found ${JSON.stringify(bad)})`;
  return null;
}

/** The same rule in a sentence for an input box or a chat reply; null when the name is fine. */
export function sessionNameAdvice(name: string): string | null {
  if (!name) return 'Give the conversation a name first.';
  return sessionNameProblem(name) === null ? null : `A session name is 1-${SESSION_NAME_MAX} letters, digits, dots, dashes or underscores (no spaces, not starting with a dot).`;
}
