// `strata launch claude|codex|opencode|continue [options] [-- CLIENT ARGS]`: runs a coding agent
// against a Strata server, in this terminal. It uses the server answering at the URL with the same
// key, or starts one there (stopped when the client exits); the client gets the server's URL, key,
// model and context its own way (launch-clients.ts) and exits with its own exit code.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../addon/loader.js';
import { optInt, optString, UsageError, type ParsedArgs } from '../args/args.js';
import { runCommand } from '../args/command-usage.js';
import { isLoopbackHost } from '../../common/net/loopback.js';
import { AGENT_CLIENTS, AGENT_NAMES, isAgentName, type AgentClient, type AgentLaunch, type AgentName } from './launch-clients.js';
import { pickModel, probeServer, startServer, type StartedServer } from './launch-server.js';

const USAGE = `usage: strata launch ${AGENT_NAMES.join('|')} [options] [-- CLIENT ARGS]
  Runs a coding agent against a Strata server: the one answering at --url with the same key, else
  one it starts there with the other options (stopped when the agent exits). The agent gets the
  server's URL, key, model and context, with its telemetry and update checks off.
  claude: Claude Code (npm @anthropic-ai/claude-code)   codex: Codex CLI (npm @openai/codex)
  opencode: opencode (npm opencode-ai)                  continue: Continue CLI, cn (npm @continuedev/cli)
options:
  --url URL        the server (default http://127.0.0.1:PORT)
  --port N         its port (default 8080)
  --api-key KEY    its key (default $STRATA_API_KEY; a server started without one gets a new random key)
  --model NAME     the served model the agent uses (default: the server's default model); a server it
                   starts serves this (a GGUF file, NAME=FILE, hf:ORG/REPO:QUANT)
  --OPTION VALUE   any other option goes to the strata serve it starts (--ctx 32768, --slots 2, ...)
  -- ARGS          the agent's own arguments (claude -p "…", codex exec "…", opencode run "…", cn -p "…")
The agent is found on PATH, else in node_modules/.bin (here or in Strata's folder).`;

const OWN_OPTIONS = ['url', 'port', 'api-key', 'help'];

export interface LaunchArgs {
  client: AgentName;
  /** The server's origin (http://127.0.0.1:8080). */
  url: string;
  apiKey: string | null;
  model: string | null;
  /** Options for a server it starts (--model and --port included). */
  serveArgs: string[];
  clientArgs: string[];
}

export function parseLaunchArgs(args: ParsedArgs, env: NodeJS.ProcessEnv = process.env): LaunchArgs {
  const [name, ...extra] = args.positional;
  if (name === undefined) throw new UsageError(`name a client: ${AGENT_NAMES.join(', ')}`);
  if (!isAgentName(name)) throw new UsageError(`unknown client '${name}' (one of ${AGENT_NAMES.join(', ')})`);
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}' (the client's own arguments go after --)`);
  const given = optString(args, 'url');
  if (given === 'true' || given === '') throw new UsageError('--url needs an address');
  let url: URL;
  try { url = new URL(given ?? 'http://127.0.0.1'); } catch { throw new UsageError(`--url '${given}' is not a URL`); }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--url '${given}' is not an http(s) address`);
  const port = optInt(args, 'port', 1, 65535) ?? (given !== undefined && url.port !== '' ? Number(url.port) : given !== undefined ? (url.protocol === 'https:' ? 443 : 80) : 8080);
  if (given === undefined || args.options.has('port')) url.port = String(port);
  const key = optString(args, 'api-key') ?? env.STRATA_API_KEY ?? null;
  if (key === 'true') throw new UsageError('--api-key needs a value');
  const model = optString(args, 'model') ?? null;
  if (model === 'true' || model === '') throw new UsageError('--model needs a name or a file');
  // Everything else is the server's, as given (a repeated --model stays repeated).
  const serveArgs: string[] = [];
  for (const [k, values] of args.repeated ?? new Map<string, string[]>()) {
    if (OWN_OPTIONS.includes(k)) continue;
    for (const v of values) serveArgs.push(`--${k}=${v}`);
  }
  serveArgs.push(`--port=${port}`);
  return { client: name, url: url.origin, apiKey: key === '' ? null : key, model, serveArgs, clientArgs: args.rest ?? [] };
}

/** Where the client's command is: PATH first, then node_modules/.bin of `roots` (the folder here, Strata's). */
export function findClient(bin: string, env: NodeJS.ProcessEnv, roots: readonly string[], platform = process.platform): string | null {
  const exts = platform === 'win32' ? (env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean) : [''];
  const dirs = [...(env.PATH ?? env.Path ?? '').split(delimiter).filter(Boolean), ...roots.map((r) => join(r, 'node_modules', '.bin'))];
  for (const dir of dirs) {
    for (const ext of exts) {
      const p = join(dir, bin + ext);
      try {
        if (!statSync(p).isFile()) continue;
        if (platform !== 'win32') accessSync(p, constants.X_OK);
        return p;
      } catch { /* not here */ }
    }
  }
  return null;
}

/**
 * The client's environment: the inherited one, less what the client must not get, plus its own.
 * ELECTRON_RUN_AS_NODE goes too: in VS Code's terminal it runs strata under the editor's Electron,
 * and a client that starts the editor's own CLI (`code`) would start Node instead.
 */
export function clientEnv(base: NodeJS.ProcessEnv, plan: AgentLaunch): NodeJS.ProcessEnv {
  const env = { ...base };
  for (const k of ['ELECTRON_RUN_AS_NODE', ...plan.unset]) delete env[k];
  return { ...env, ...plan.env };
}

function note(line: string): void { process.stderr.write(`strata launch: ${line}\n`); }

/** Runs the client with the terminal; its exit code (128 + n for a signal n). */
function runClient(path: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    // A .cmd shim on Windows runs through the shell.
    const child = spawn(path, args, { stdio: 'inherit', env, shell: process.platform === 'win32' && /\.(cmd|bat)$/i.test(path) });
    // Ctrl+C is the client's to handle (it interrupts a turn); the launch waits for it to exit.
    const ignore = (): void => {};
    process.on('SIGINT', ignore);
    child.once('error', (e) => { process.off('SIGINT', ignore); reject(e); });
    child.once('exit', (code, signal) => {
      process.off('SIGINT', ignore);
      resolve(code ?? (signal ? 128 + signalNumber(signal) : 1));
    });
  });
}

const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
const signalNumber = (s: NodeJS.Signals): number => SIGNALS[s] ?? 1;

async function launch(a: LaunchArgs): Promise<number> {
  const client: AgentClient = AGENT_CLIENTS[a.client];
  const cli = process.argv[1] ?? fileURLToPath(import.meta.url);
  const path = findClient(client.bin, process.env, [process.cwd(), packageRoot]);
  if (path === null) {
    note(`${client.title} (${client.bin}) is not on PATH or in node_modules/.bin; install it: npm install -g ${client.npmPackage}`);
    return 127;
  }
  let key = a.apiKey;
  let probe = await probeServer(a.url, key);
  let started: StartedServer | null = null;
  if (probe.kind === 'refused') {
    note(`the server at ${a.url} refuses ${key ? 'this key' : 'requests without a key'}: give its key with --api-key (or STRATA_API_KEY)`);
    return 1;
  }
  if (probe.kind === 'other') {
    note(`something else answers at ${a.url} (${probe.detail}); pick another --port`);
    return 1;
  }
  let url = a.url;
  try {
    if (probe.kind === 'nothing') {
      // A server is started on this machine only, over plain http on 127.0.0.1.
      const where = new URL(a.url);
      if (!isLoopbackHost(where.hostname) || where.protocol !== 'http:') {
        note(`nothing answers at ${a.url}`);
        return 1;
      }
      url = `http://127.0.0.1:${where.port || '80'}`;
      key ??= randomBytes(24).toString('base64url');
      note(`starting strata serve on ${url} (its log is kept out of this terminal)…`);
      started = await startServer(cli, a.serveArgs, key, url);
      probe = await probeServer(url, key);
      if (probe.kind !== 'serving') throw new Error(`the server started at ${url} does not answer GET /v1/models (${probe.kind})`);
    } else note(`using the server at ${url}`);
    // A server it started serves --model as its default; a running one is asked for it by name.
    const model = pickModel(probe.models, started ? null : a.model);
    if (model === null) {
      note(`the server does not serve '${a.model}'; it serves ${probe.models.map((m) => m.id).join(', ')}`);
      return 1;
    }
    const dir = mkdtempSync(join(tmpdir(), 'strata-launch-'));
    try {
      const plan = client.launch({ baseUrl: url, apiKey: key ?? '', model: model.name, contextTokens: model.contextTokens }, dir);
      for (const f of plan.files) writeFileSync(join(dir, f.name), f.text, { mode: 0o600 });
      note(`${client.title} on ${url}, model ${model.name}${model.contextTokens !== null ? ` (${model.contextTokens} tokens of context)` : ''}`);
      return await runClient(path, [...plan.args, ...a.clientArgs], clientEnv(process.env, plan));
    } finally {
      // It held the key.
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await started?.stop();
  }
}

/**
 * In a terminal the editor opened (STRATA_LAUNCH_HOLD=1), a failure stays on screen until Enter:
 * the editor would otherwise close the terminal with its message at once.
 */
async function holdOnFailure(code: number): Promise<number> {
  if (code === 0 || process.env.STRATA_LAUNCH_HOLD !== '1') return code;
  note(`exited with code ${code}; press Enter to close this terminal`);
  await new Promise<void>((resolve) => {
    // Destroyed, not paused: a paused pipe would keep the process alive.
    const done = (): void => { process.stdin.off('data', done); process.stdin.off('end', done); process.stdin.destroy(); resolve(); };
    process.stdin.on('data', done);
    process.stdin.on('end', done);
    process.stdin.resume();
  });
  return code;
}

export const command = {
  summary: 'run a coding agent (Claude Code, Codex, opencode, Continue) against a Strata server',
  async run(args: ParsedArgs): Promise<number> {
    return holdOnFailure(await runCommand('launch', USAGE, args, () => launch(parseLaunchArgs(args))));
  },
};
