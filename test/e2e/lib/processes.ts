// Stopping what a test run started, reliably: its own process group first, then any process that
// escaped the group (a child that called setsid) but still carries the run's marker variable.
import { readdirSync, readFileSync } from 'node:fs';

/** Environment variable every process of one e2e run inherits; its value names the run. */
export const RUN_MARKER = 'STRATA_E2E_RUN_ID';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids (not ours) whose environment holds RUN_MARKER=runId. */
export function markedPids(runId: string): number[] {
  const needle = Buffer.from(`${RUN_MARKER}=${runId}\0`);
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`).includes(needle)) out.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

async function waitUntil(done: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (done()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return done();
}

/** SIGTERM the group (and marked strays), SIGKILL whatever is left after graceMs. */
export async function stopProcessTree(pgid: number | undefined, runId: string, graceMs = 5000): Promise<void> {
  const signalAll = (sig: NodeJS.Signals): void => {
    if (pgid && groupAlive(pgid)) {
      try { process.kill(-pgid, sig); } catch { /* already gone */ }
    }
    for (const pid of markedPids(runId)) {
      try { process.kill(pid, sig); } catch { /* already gone */ }
    }
  };
  signalAll('SIGTERM');
  const gone = await waitUntil(() => !(pgid && groupAlive(pgid)) && markedPids(runId).every((p) => !alive(p)), graceMs);
  if (!gone) {
    signalAll('SIGKILL');
    await waitUntil(() => !(pgid && groupAlive(pgid)) && markedPids(runId).length === 0, 3000);
  }
}
