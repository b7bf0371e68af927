// Background engines (embedding and rerank models: the codebase index's work) run at a lower OS
// priority, so a chat or completion engine beside them on the same cores keeps its latency: the
// kernel gives their threads the CPU whenever both want it, and the embedding engine gets what
// is left. On Linux a nice value belongs to a thread, not a process (setpriority(PRIO_PROCESS,
// pid) changes only the thread whose id is pid), so every thread of the process is lowered,
// found in /proc/<pid>/task; elsewhere the process's priority is set. Never raises a priority.
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The nice value of background engines (0 = as the server; 19 = the lowest). */
export const BACKGROUND_NICE = 10;

/** Lowers every thread of `pid` to at least `nice`; returns how many threads it changed (errors ignored: the engine still runs). */
export function lowerPriority(pid: number, nice: number): number {
  let tids: number[] = [pid];
  if (process.platform === 'linux') {
    try {
      tids = readdirSync(`/proc/${pid}/task`).map(Number).filter((t) => Number.isInteger(t) && t > 0);
    } catch { /* gone, or no /proc: the main thread only */ }
  }
  let changed = 0;
  for (const tid of tids) {
    try {
      if (getPriority(tid) >= nice) continue;
      setPriority(tid, nice);
      changed++;
    } catch { /* the thread ended meanwhile, or not permitted */ }
  }
  return changed;
}
