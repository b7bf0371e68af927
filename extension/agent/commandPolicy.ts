// strata.agent.allowedCommands: commands run_command may run without asking. A pattern is an
// exact command line, or a prefix ending in "*" ("npm test*", "git status*"). A prefix never
// matches a command that chains or redirects (; & | ` $( > < newline): "npm test; rm -rf ~"
// must not pass as "npm test*".

const CHAINING = /[;&|`<>\n\r]|\$\(/;

export function isAllowListed(command: string, patterns: readonly string[]): boolean {
  const c = command.trim();
  for (const raw of patterns) {
    const p = raw.trim();
    if (!p) continue;
    if (p.endsWith('*')) {
      const prefix = p.slice(0, -1);
      // A lone "*" would allow everything: not a pattern.
      if (prefix.trim() && !CHAINING.test(c) && c.startsWith(prefix)) return true;
    } else if (c === p) {
      return true;
    }
  }
  return false;
}
