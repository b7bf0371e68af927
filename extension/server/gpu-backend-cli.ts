// The extension's side of `strata gpu list|install --json` (no vscode here): runs the bundled
// CLI with the editor's own Node (Electron as Node), reads its JSON lines, and cancels an install
// by stopping the process (the CLI removes what it had fetched). The extension host never loads
// the native addon; the CLI does.
import type { GpuBackendKind } from '../../contract/devices.js';
import { spawnNodeScript } from './node-process.js';
import type { ProcessHandle } from './supervisor.js';

/** Starts the CLI script with arguments (default: the editor's Node, see node-process.ts). */
export type SpawnScript = (script: string, args: string[]) => ProcessHandle;

export type { GpuBackendKind };

export interface BackendListReport {
  installed: Array<{ kind: GpuBackendKind; package: string; version: string; bytes: number }>;
  readiness: Array<{ kind: GpuBackendKind; loads: boolean; missing: Array<{ library: string; hint: string }>; note: string | null }>;
  devices: Array<{ name: string; type: string; backend: string; description: string }>;
  failed: Array<{ path: string; error: string }>;
  suggestion: { kind: GpuBackendKind; reason: string } | null;
}

export interface InstallProgressEvent { phase: string; message: string; received?: number; total?: number | null }

export type InstallOutcome =
  | { kind: 'done'; loads: boolean; devices: Array<{ name: string; description: string }>; failed: Array<{ path: string; error: string }>; missing: Array<{ library: string; hint: string }> }
  | { kind: 'error'; message: string; cancelled: boolean };

/** One `--json` line of the CLI, or null for anything else it prints (ggml's own log lines). */
export function parseCliLine(line: string): { type: string; [k: string]: unknown } | null {
  if (!line.startsWith('{')) return null;
  try {
    const v = JSON.parse(line) as unknown;
    return v !== null && typeof v === 'object' && typeof (v as { type?: unknown }).type === 'string' ? v as { type: string } : null;
  } catch {
    return null;
  }
}

/** Runs `strata gpu list --json` and resolves with its report. */
export function listGpuBackends(cli: string, spawn: SpawnScript = spawnNodeScript): Promise<BackendListReport> {
  return new Promise((resolve, reject) => {
    const p = spawn(cli, ['gpu', 'list', '--json']);
    let report: BackendListReport | null = null;
    const tail: string[] = [];
    p.onOutput((line) => {
      const msg = parseCliLine(line);
      if (msg?.type === 'list') report = msg as unknown as BackendListReport;
      else if (line.trim()) tail.push(line);
    });
    p.onExit((code) => {
      if (code === 0 && report) resolve(report);
      else reject(new Error(`strata gpu list failed (exit ${code ?? 'signal'}): ${tail.slice(-3).join(' ') || 'no output'}`));
    });
  });
}

export interface InstallRun {
  readonly done: Promise<InstallOutcome>;
  /** Stops the install (SIGTERM): `done` resolves with a cancelled error. */
  cancel(): void;
}

/** Runs `strata gpu install KIND --json`, reporting progress events. */
export function installGpuBackend(cli: string, kind: GpuBackendKind, onProgress: (e: InstallProgressEvent) => void, opts: {
  extraArgs?: string[]; spawn?: SpawnScript;
} = {}): InstallRun {
  const p = (opts.spawn ?? spawnNodeScript)(cli, ['gpu', 'install', kind, '--json', ...(opts.extraArgs ?? [])]);
  let cancelled = false;
  const done = new Promise<InstallOutcome>((resolve) => {
    let outcome: InstallOutcome | null = null;
    const tail: string[] = [];
    p.onOutput((line) => {
      const msg = parseCliLine(line);
      if (!msg) { if (line.trim()) tail.push(line); return; }
      if (msg.type === 'progress') onProgress(msg as unknown as InstallProgressEvent);
      else if (msg.type === 'done') {
        const readiness = msg.readiness as BackendListReport['readiness'][number] | undefined;
        outcome = {
          kind: 'done', loads: msg.loads === true, devices: (msg.devices ?? []) as Array<{ name: string; description: string }>,
          failed: (msg.failed ?? []) as Array<{ path: string; error: string }>, missing: readiness?.missing ?? [],
        };
      } else if (msg.type === 'error') {
        outcome = { kind: 'error', message: String(msg.message), cancelled: msg.cancelled === true || cancelled };
      }
    });
    p.onExit((code) => {
      resolve(outcome ?? { kind: 'error', cancelled, message: cancelled ? 'cancelled' : `strata gpu install ended (exit ${code ?? 'signal'}): ${tail.slice(-3).join(' ') || 'no output'}` });
    });
  });
  return {
    done,
    cancel: () => { cancelled = true; p.kill('SIGTERM'); },
  };
}
