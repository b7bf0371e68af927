// A vitest pool whose test workers run on another Node binary: the linux-arm64 Node under
// qemu-user (the kernel starts it through a binfmt_misc entry, so the processes the tests spawn
// with process.execPath are emulated too). The main vitest process (vite, esbuild, the reporters)
// stays on the host; only the worker that imports the test file, and so the native addon and the
// engine processes, runs on the target. Same protocol as vitest's own 'forks' pool.
import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { PoolOptions, PoolRunnerInitializer, PoolWorker, WorkerRequest } from 'vitest/node';

const SIGKILL_AFTER_MS = 500;

class EmulatedForksWorker implements PoolWorker {
  readonly name = 'emulated-forks';
  readonly cacheFs = true;
  private child: ChildProcess | undefined;
  private readonly entrypoint: string;

  constructor(private readonly options: PoolOptions, private readonly nodePath: string) {
    this.entrypoint = resolve(options.distPath, 'workers/forks.js');
  }

  private get proc(): ChildProcess {
    if (!this.child) throw new Error(`the ${this.nodePath} worker was torn down or never started`);
    return this.child;
  }

  on(event: string, callback: (arg: any) => void): void { this.proc.on(event, callback); }
  off(event: string, callback: (arg: any) => void): void { this.proc.off(event, callback); }
  send(message: WorkerRequest): void { this.proc.send(message); }
  deserialize(data: unknown): unknown { return data; }

  async start(): Promise<void> {
    if (this.child) return;
    const logger = this.options.project.vitest.logger;
    this.child = fork(this.entrypoint, [], {
      execPath: this.nodePath, env: this.options.env, execArgv: this.options.execArgv,
      stdio: 'pipe', serialization: 'advanced',
    });
    this.child.stdout?.pipe(logger.outputStream, { end: false });
    this.child.stderr?.pipe(logger.errorStream, { end: false });
  }

  async stop(): Promise<void> {
    const child = this.proc;
    const exited = new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) done();
      else child.once('exit', () => done());
    });
    const kill = setTimeout(() => child.kill('SIGKILL'), SIGKILL_AFTER_MS);
    child.kill();
    await exited;
    clearTimeout(kill);
    this.child = undefined;
  }
}

/** The pool for vitest's `pool` option: every test file in a worker run by `nodePath`. */
export function emulatedForks(nodePath: string): PoolRunnerInitializer {
  return { name: 'emulated-forks', createPoolWorker: (options) => new EmulatedForksWorker(options, nodePath) };
}
