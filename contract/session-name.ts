// The one rule for session names, applied by the server (a 400 naming the field), the commands,
// @strata and the panel (before anything is sent): the name becomes a file name, so 1-64
// letters, digits, '.', '_' and '-', not starting with a dot (it can neither leave the sessions
// folder nor hide a file), and not a Windows device name before its first dot ("con", "nul.1",
// "COM1": Windows would open the device, not a file). The rule is the same on every platform, so
// a session folder moves between machines and the panel needs no word of the server's platform.
import { windowsNameProblem } from './file-names.js';

export const SESSION_NAME_MAX = 64;

const ALLOWED = /^[A-Za-z0-9._-]$/;

/** Why `name` cannot name a session ("must be 1-64 characters, got 0"), or null when it can. */
export function sessionNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > SESSION_NAME_MAX) return `must be 1-${SESSION_NAME_MAX} characters, got ${name.length}`;
  if (name.startsWith('.')) return 'must not start with a dot';
  const bad = [...name].find((c) => !ALLOWED.test(c));
  if (bad !== undefined) return `may contain only letters, digits, '.', '_' and '-' (found ${JSON.stringify(bad)})`;
  // The name is followed by ".session" (or ".json"), so a trailing dot is no trailing dot of the file's name.
  return windowsNameProblem(`${name}.session`);
}

/** The same rule in a sentence for an input box or a chat reply; null when the name is fine. */
export function sessionNameAdvice(name: string): string | null {
  if (!name) return 'Give the conversation a name first.';
  return sessionNameProblem(name) === null ? null : `A session name is 1-${SESSION_NAME_MAX} letters, digits, dots, dashes or underscores (no spaces, not starting with a dot, not a device name such as con or nul).`;
}
