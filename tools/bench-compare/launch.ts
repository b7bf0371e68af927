// Starts and stops the servers a comparison measures: each in its own process group (our
// server spawns engine processes), ready when /health answers 2xx, stopped with SIGTERM then
// SIGKILL, and always stopped when this process ends (Ctrl+C, an error, a normal exit).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { getJson, type Target } from '../../backend/bench/client.js';

export interface LaunchSpec {
  name: string;
  command: string;
  args: string[];
  /** Base URL the server will answer on. */
  url: string;
  /** stdout and stderr go here. */
  logFile: string;
  startTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

const live = new Set<ServerProcess>();
let hooksInstalled = false;

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  // Last resort: whatever is still running when node exits is killed (synchronously).
  process.on('exit', () => { for (const s of live) s.killNow(); });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      process.stderr.write(`\n[bench] ${sig}: stopping servers\n`);
      void Promise.allSettled([...live].map((s) => s.stop(3000))).then(() => process.exit(130));
    });
  }
}

function tail(file: string, lines = 20): string {
  try { return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n'); } catch { return ''; }
}

export class ServerProcess {
  private exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly exitPromise: Promise<void>;

  private constructor(readonly spec: LaunchSpec, private readonly child: ChildProcess) {
    this.exitPromise = new Promise((resolve) => {
      child.once('exit', (code, signal) => { this.exited = { code, signal }; live.delete(this); resolve(); });
    });
  }

  get pid(): number { return this.child.pid ?? -1; }
  get running(): boolean { return this.exited === null; }

  /** Spawns the server and resolves once it answers; rejects with its log tail if it exits or times out. */
  static async start(spec: LaunchSpec): Promise<ServerProcess> {
    installExitHooks();
    mkdirSync(dirname(spec.logFile), { recursive: true });
    const fd = openSync(spec.logFile, 'w');
    let child: ChildProcess;
    try {
      child = spawn(spec.command, spec.args, { stdio: ['ignore', fd, fd], detached: true, env: spec.env ?? process.env });
    } finally {
      closeSync(fd);
    }
    const server = new ServerProcess(spec, child);
    live.add(server);
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', resolve);
    }).catch((err: Error) => { live.delete(server); throw new Error(`${spec.name}: cannot start ${spec.command}: ${err.message}`); });
    const deadline = performance.now() + (spec.startTimeoutMs ?? 300_000);
    const target: Target = { url: spec.url, model: '' };
    for (;;) {
      if (!server.running) {
        throw new Error(`${spec.name} exited during start (code ${server.exited!.code}, signal ${server.exited!.signal}); log ${spec.logFile}:\n${tail(spec.logFile)}`);
      }
      if ((await getJson(target, '/health', 2000)) !== null || (await getJson(target, '/v1/models', 2000)) !== null) return server;
      if (performance.now() > deadline) {
        await server.stop();
        throw new Error(`${spec.name} did not answer ${spec.url}/health within ${(spec.startTimeoutMs ?? 300_000) / 1000} s; log ${spec.logFile}:\n${tail(spec.logFile)}`);
      }
      // Poll: the server gives no other signal of readiness that every server shares.
      await Promise.race([new Promise((r) => setTimeout(r, 250)), server.exitPromise]);
    }
  }

  /** CPU seconds used so far by the live processes of the server's process group (Linux; NaN elsewhere). */
  cpuSeconds(): number {
    return groupCpuSeconds(this.pid);
  }

  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves when the server has exited. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    await this.exitPromise;
    clearTimeout(timer);
    this.signal('SIGKILL'); // children left in the group (e.g. engine hosts) go too
  }

  /** Synchronous kill for process exit. */
  killNow(): void {
    this.signal('SIGKILL');
  }

  private signal(sig: NodeJS.Signals): void {
    try { process.kill(-this.pid, sig); } catch { /* group already gone */ }
  }
}

/** Sum of utime + stime of the live processes whose process group is `pgid`, in seconds. */
export function groupCpuSeconds(pgid: number): number {
  if (process.platform !== 'linux') return Number.NaN;
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try { stat = readFileSync(`/proc/${entry}/stat`, 'utf8'); } catch { continue; }
    const fields = parseStat(stat);
    if (fields && fields.pgrp === pgid) ticks += fields.utime + fields.stime;
  }
  return ticks / 100; // USER_HZ is 100 on Linux
}

/** pgrp, utime, stime from a /proc/PID/stat line (the command name may hold spaces and parentheses). */
export function parseStat(line: string): { pgrp: number; utime: number; stime: number } | null {
  const close = line.lastIndexOf(')');
  if (close < 0) return null;
  const f = line.slice(close + 2).split(' ');
  // After "pid (comm) ": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
  const pgrp = Number(f[2]); const utime = Number(f[11]); const stime = Number(f[12]);
  return Number.isFinite(pgrp) && Number.isFinite(utime) && Number.isFinite(stime) ? { pgrp, utime, stime } : null;
}

/**
 * Waits until /health says the model is loaded (`"status": "ok"` on Strata and llama-server):
 * start() returns once the server answers, and Strata answers /v1/models while its model loads.
 */
export async function modelLoaded(t: Target, timeoutMs = 300_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while ((await getJson(t, '/health', 2000) as { status?: unknown } | null)?.status !== 'ok') {
    if (performance.now() > deadline) throw new Error(`${t.url} did not load its model within ${timeoutMs / 1000} s`);
    // Poll: loading ends with no event both servers share.
    await new Promise((r) => setTimeout(r, 250));
  }
}
