// The server `strata launch` points a client at: the one answering at the URL with the same key,
// else a `strata serve` it starts there (in its own process group, so the terminal's Ctrl+C goes
// to the client only; it exits with the launch, --parent-pid) and stops when the client exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { modelsBodySchema, type ModelEntryBody } from '../../contract/models.js';

export type Probe =
  | { kind: 'serving'; models: ModelEntryBody[] }
  /** Something answers there but refuses the key (a Strata server with another key). */
  | { kind: 'refused'; status: number }
  /** Something answers there that is not a Strata server (or not ready: its status). */
  | { kind: 'other'; detail: string }
  | { kind: 'nothing' };

/** GET /v1/models at `baseUrl` with the key. */
export async function probeServer(baseUrl: string, apiKey: string | null, timeoutMs = 5000): Promise<Probe> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/v1/models`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const code = (e as { cause?: { code?: string } }).cause?.code;
    if (code === 'ECONNREFUSED') return { kind: 'nothing' };
    return { kind: 'other', detail: code ?? (e as Error).message };
  }
  if (res.status === 401 || res.status === 403) return { kind: 'refused', status: res.status };
  if (res.status !== 200) return { kind: 'other', detail: `GET /v1/models answered ${res.status}` };
  const parsed = modelsBodySchema.safeParse(await res.json().catch(() => null));
  return parsed.success ? { kind: 'serving', models: parsed.data.data } : { kind: 'other', detail: 'GET /v1/models is not a Strata model list' };
}

/** The model a client uses: the one asked for (by name or file), else the server's default. */
export function pickModel(models: readonly ModelEntryBody[], asked: string | null): { name: string; contextTokens: number | null } | null {
  const entry = asked === null
    ? models.find((m) => m.default) ?? models[0]
    : models.find((m) => m.id === asked || m.file === asked || m.file === `${asked}.gguf`);
  if (!entry) return asked === null || models.length > 1 ? null : { name: asked, contextTokens: ctxOf(models[0]!) };
  return { name: asked ?? entry.id, contextTokens: ctxOf(entry) };
}

const ctxOf = (m: ModelEntryBody): number | null => ('n_ctx' in m.meta ? m.meta.n_ctx : null);

export interface StartedServer {
  child: ChildProcess;
  /** Stops it (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Runs `strata serve` (this CLI: `cli`, under this Node) with `serveArgs` and the key in its
 * environment (never on a command line others can read), and waits until `url`/health answers 200
 * (the model loaded). Its output is kept out of the client's terminal; its end comes with a failure.
 */
export async function startServer(cli: string, serveArgs: readonly string[], apiKey: string, url: string, env: NodeJS.ProcessEnv = process.env): Promise<StartedServer> {
  const child = spawn(process.execPath, [cli, 'serve', ...serveArgs, '--parent-pid', String(process.pid)], {
    env: { ...env, STRATA_API_KEY: apiKey }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  let output = '';
  const keep = (b: Buffer): void => { output = (output + b.toString()).slice(-4000); };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(String(signal ?? code)));
    child.once('error', (e) => resolve(e.message));
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  let ended: string | null = null;
  void exited.then((how) => { ended = how; });
  for (;;) {
    if (ended !== null) throw new Error(`strata serve exited (${ended}) before it was ready:\n${output.trim()}`);
    const status = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }).then((r) => r.status, () => 0);
    if (status === 200) return { child, stop };
    await Promise.race([new Promise((resolve) => setTimeout(resolve, 250)), exited]);
  }
}
