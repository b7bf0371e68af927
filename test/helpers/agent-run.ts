// A real coding agent against a real Strata server, through `strata launch`: the server on the agent
// test model with --first-tool-call required, a recorder between the two that keeps every request
// and answer, and a trap for traffic meant to leave the machine (HTTP(S)_PROXY point at it; only
// 127.0.0.1 bypasses it). What the recorder kept says, per dialect, which calls the model made,
// which results the client sent back and what the last answer said.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { packageRoot } from '../../backend/addon/loader.js';
import { findClient } from '../../backend/cli/launch.js';
import { AGENT_CLIENTS, type AgentName } from '../../backend/cli/launch-clients.js';
import { SseDecoder } from '../../common/net/sse-decoder.js';
import { cliPath } from './serve-process.js';

export interface Exchange {
  method: string;
  path: string;
  status: number;
  body: any;
  /** The answer as sent (SSE text for a stream). */
  response: string;
}

export interface Recorder { url: string; exchanges: Exchange[]; close(): Promise<void> }

const listen = (srv: Server): Promise<number> => new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve((srv.address() as AddressInfo).port)));
const closeServer = (srv: Server): Promise<void> => new Promise((resolve) => { srv.closeAllConnections(); srv.close(() => resolve()); });

/** Forwards every request to the server at `port` as it is, keeping a copy of both sides. */
export async function startRecorder(port: number): Promise<Recorder> {
  const exchanges: Exchange[] = [];
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown = null;
      try { body = raw.length > 0 ? JSON.parse(raw.toString()) : null; } catch { body = raw.toString(); }
      const fwd = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (up: IncomingMessage) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        const out: Buffer[] = [];
        up.on('data', (c: Buffer) => { out.push(c); res.write(c); });
        up.on('end', () => {
          exchanges.push({ method: req.method ?? '', path: req.url ?? '', status: up.statusCode ?? 0, body, response: Buffer.concat(out).toString() });
          res.end();
        });
      });
      fwd.on('error', () => { res.writeHead(502); res.end(); });
      fwd.end(raw);
    });
  });
  return { url: `http://127.0.0.1:${await listen(srv)}`, exchanges, close: () => closeServer(srv) };
}

/** A proxy that lets nothing through and remembers every host something tried to reach. */
export async function startTrap(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const srv = createServer((req, res) => { seen.push(`${req.method} ${req.url}`); res.writeHead(403); res.end(); });
  srv.on('connect', (req, socket) => { seen.push(`CONNECT ${req.url}`); socket.end('HTTP/1.1 403 Forbidden\r\n\r\n'); });
  return { url: `http://127.0.0.1:${await listen(srv)}`, seen, close: () => closeServer(srv) };
}

/**
 * Why the client cannot run here, or null: its npm package is not installed, or its binary for this
 * platform is not (the native clients' packages hold a stub that says so until their postinstall
 * copies the platform's binary over it).
 */
export function clientMissing(name: AgentName): string | null {
  const c = AGENT_CLIENTS[name];
  const path = findClient(c.bin, { PATH: '' }, [packageRoot]);
  if (path === null) return `${c.npmPackage} is not installed`;
  const r = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, HOME: tmpdir() } });
  if (r.status === 0) return null;
  const said = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().split('\n')[0] ?? '';
  return `${c.bin} --version failed: ${said || r.error?.message || `exit ${r.status}`}`;
}

export interface AgentRun { code: number | null; stdout: string; stderr: string; ms: number }

/**
 * `strata launch NAME --url URL --api-key KEY -- ARGS` in `cwd`, with a fresh HOME, the project's
 * node_modules/.bin first on PATH and the trap as the proxy; killed after `timeoutMs`.
 */
export function runLaunch(name: AgentName, o: { url: string; apiKey: string; cwd: string; home: string; trap: string; args: string[]; env?: Record<string, string>; timeoutMs: number }): Promise<AgentRun> {
  const started = Date.now();
  const env: NodeJS.ProcessEnv = {
    PATH: [join(packageRoot, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
    HOME: o.home, TMPDIR: tmpdir(), LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', CI: 'true',
    HTTP_PROXY: o.trap, HTTPS_PROXY: o.trap, http_proxy: o.trap, https_proxy: o.trap, ALL_PROXY: o.trap,
    NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost',
    ...o.env,
  };
  const child = spawn(process.execPath, [cliPath, 'launch', name, '--url', o.url, '--api-key', o.apiKey, '--', ...o.args], {
    cwd: o.cwd, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => { stdout += b.toString(); });
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs);
  return new Promise((resolve) => child.once('exit', (code) => {
    clearTimeout(timer);
    resolve({ code, stdout, stderr, ms: Date.now() - started });
  }));
}

/** A scratch workspace with one file, and a HOME of its own. */
export function agentFolders(): { cwd: string; home: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'strata-agent-'));
  const cwd = join(root, 'project');
  const home = join(root, 'home');
  mkdirSync(cwd);
  mkdirSync(home);
  writeFileSync(join(cwd, 'notes.md'), '# Notes\nThe build uses make.\n');
  return { cwd, home, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** A stream's JSON events (a body that is no stream: itself). */
function parseSse(text: string): any[] {
  if (!text.startsWith('event:') && !text.startsWith('data:') && !text.startsWith(':')) {
    try { return [JSON.parse(text)]; } catch { return []; }
  }
  const d = new SseDecoder();
  return [...d.feed(text), ...d.end()].flatMap((e) => {
    try { return [JSON.parse(e.data)]; } catch { return []; }
  });
}

export type Dialect = 'messages' | 'responses' | 'chat';

const ROUTES: Record<Dialect, string> = { messages: '/v1/messages', responses: '/v1/responses', chat: '/v1/chat/completions' };

/** The agent's turns: the dialect's requests that offer tools, in the order they were answered. */
export function turns(exchanges: readonly Exchange[], dialect: Dialect): Exchange[] {
  return exchanges.filter((e) => e.method === 'POST' && e.path.split('?')[0] === ROUTES[dialect] && Array.isArray(e.body?.tools) && e.body.tools.length > 0);
}

export interface TurnReading { calls: string[]; results: string[]; text: string }

/** The call ids an answer made, the results its request sent back, and its text. */
export function readTurn(e: Exchange, dialect: Dialect): TurnReading {
  const events = parseSse(e.response);
  const calls: string[] = [];
  let text = '';
  const results: string[] = [];
  if (dialect === 'messages') {
    for (const ev of events) {
      if (ev.type === 'content_block_start' && ev.content_block?.type === 'tool_use') calls.push(ev.content_block.id);
      if (ev.type === 'content_block_delta' && ev.delta?.type === 'text_delta') text += ev.delta.text;
    }
    for (const m of e.body.messages ?? []) {
      for (const b of Array.isArray(m.content) ? m.content : []) if (b.type === 'tool_result') results.push(b.tool_use_id);
    }
  } else if (dialect === 'responses') {
    for (const ev of events) {
      if (ev.type === 'response.output_item.done' && ev.item?.type === 'function_call') calls.push(ev.item.call_id);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
    }
    for (const it of Array.isArray(e.body.input) ? e.body.input : []) if (it.type === 'function_call_output') results.push(it.call_id);
  } else {
    for (const ev of events) {
      for (const ch of ev.choices ?? []) {
        for (const tc of ch.delta?.tool_calls ?? []) if (tc.id) calls.push(tc.id);
        if (typeof ch.delta?.content === 'string') text += ch.delta.content;
      }
    }
    for (const m of e.body.messages ?? []) if (m.role === 'tool') results.push(m.tool_call_id);
  }
  return { calls, results, text };
}

/**
 * A request body as a fixture: what names this machine, this run or this moment replaced by fixed
 * stand-ins (the folders, ids, dates), everything else as the client sent it.
 */
export function scrubbed(body: unknown, folders: { cwd: string; home: string }): unknown {
  const root = basename(dirname(folders.cwd));
  const text = JSON.stringify(body, null, 1)
    .split(folders.cwd).join('/home/user/project')
    .split(folders.home).join('/home/user')
    .split(tmpdir()).join('/tmp')
    .split(root).join('user')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '00000000-0000-0000-0000-000000000000')
    .replace(/\b[0-9a-f]{32,}\b/gi, (m) => '0'.repeat(m.length))
    .replace(/\b20\d\d-\d\d-\d\d\b/g, '2026-01-01')
    .replace(/\bcall_[A-Za-z0-9]{16,}\b/g, 'call_0')
    .replace(/("(?:turn_started_at_unix_ms|created)\\?"\s*:\s*)\d+/g, '$10');
  return JSON.parse(text);
}

/** STRATA_WRITE_AGENT_FIXTURES=1: the agent tests record each agent's first request and a short session (with its default tools). */
export const recordingFixtures = (): boolean => process.env.STRATA_WRITE_AGENT_FIXTURES === '1';

/** Writes a client's first request as test/fixtures/agents/NAME-first-request.json. */
export function writeFixture(name: AgentName, body: unknown): void {
  const dir = join(packageRoot, 'test', 'fixtures', 'agents');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}-first-request.json`), `${JSON.stringify(body, null, 1)}\n`);
}

/** The model requests of a session, in the order they were answered (side requests without tools included). */
export function modelRequests(exchanges: readonly Exchange[], dialect: Dialect): Exchange[] {
  return exchanges.filter((e) => e.method === 'POST' && e.path.split('?')[0] === ROUTES[dialect]);
}

/** A request's system prompt as text: what tells the session's own turns from a sub-agent's. */
function systemOf(body: any): string {
  return JSON.stringify(body?.system ?? body?.instructions ?? null) + JSON.stringify((body?.messages ?? body?.input)?.[0] ?? null);
}

/**
 * The requests of the session itself: its turns (the first turn's system prompt, tools offered)
 * and the requests without tools beside them (a title); a sub-agent's own loop is left out.
 */
export function sessionRequests(exchanges: readonly Exchange[], dialect: Dialect): Exchange[] {
  const all = modelRequests(exchanges, dialect);
  const offers = (e: Exchange) => Array.isArray(e.body?.tools) && e.body.tools.length > 0;
  const first = all.find(offers);
  return all.filter((e) => !offers(e) || (first !== undefined && systemOf(e.body) === systemOf(first.body)));
}

/**
 * Writes test/fixtures/agents/NAME-session.json: every model request of one session (`path`, `body`,
 * whether it offered tools) and the first request of a second session of the same client.
 */
export function writeSessionFixture(name: AgentName, session: Array<{ path: string; body: unknown }>, second: { path: string; body: unknown }): void {
  const dir = join(packageRoot, 'test', 'fixtures', 'agents');
  mkdirSync(dir, { recursive: true });
  const requests = session.map((r) => ({ path: r.path, body: r.body }));
  writeFileSync(join(dir, `${name}-session.json`), `${JSON.stringify({ client: name, session: requests, secondSession: second }, null, 1)}\n`);
}
