// The managed server's API key as the test runner finds it: the extension passes a new key per
// start in the server's environment, and a process of the same user may read that environment
// (/proc/<pid>/environ on Linux, where the e2e suite runs). The server is found by its port.
import { readdirSync, readFileSync } from 'node:fs';

export function managedServerKey(port: number): string | undefined {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let argv: string[];
    try { argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'); } catch { continue; }
    const at = argv.indexOf('--port');
    if (!argv.includes('serve') || at < 0 || argv[at + 1] !== String(port)) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const line = env.find((e) => e.startsWith('STRATA_API_KEY='));
      if (line) return line.slice('STRATA_API_KEY='.length);
    } catch { /* gone, or not ours */ }
  }
  return undefined;
}
