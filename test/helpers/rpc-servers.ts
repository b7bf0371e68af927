// Local `strata rpc-server` processes for multi-device tests: each in its own process group
// (killed as a group), on a free loopback port, ready once it accepts a TCP connection.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { packageRoot } from '../../backend/addon/loader.js';

export interface RpcServer {
  endpoint: string;
  port: number;
  pid: number;
  /** stdout + stderr so far (ggml's own lines arrive late: they are block-buffered). */
  output(): string;
  /** SIGTERM to the process group, SIGKILL after 5 s; resolves when it has exited. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;

import { freePort } from '../../common/net/free-port.js';

function tryConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => { s.destroy(); resolve(false); });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Resolves once the server listens; rejects with its output if it exits first. */
async function launch(port: number, threads: number): Promise<RpcServer> {
  const child = spawn(process.execPath, [join(packageRoot, 'dist', 'strata.mjs'), 'rpc-server', '--port', String(port), '--threads', String(threads)], {
    detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const pid = child.pid!;
  const server: RpcServer = {
    endpoint: `127.0.0.1:${port}`, port, pid, output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try { process.kill(-pid, 'SIGTERM'); } catch { /* already gone */ }
      const timer = setTimeout(() => { try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ } }, 5000);
      await exited(child);
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let gone = false;
  void exited(child).then(() => { gone = true; });
  // The server gives no readiness line we can read in time, so wait for its port to accept.
  while (!(await tryConnect(port))) {
    if (gone) throw new Error(`rpc-server on port ${port} exited (code ${child.exitCode}): ${out.trim()}`);
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`rpc-server on port ${port} did not listen within ${READY_TIMEOUT_MS} ms: ${out.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return server;
}

/** Starts one rpc-server on a free port (another port if that one was taken meanwhile). */
export async function startRpcServer({ threads = 1 }: { threads?: number } = {}): Promise<RpcServer> {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await launch(await freePort(), threads);
    } catch (e) {
      last = e;
    }
  }
  throw last;
}
