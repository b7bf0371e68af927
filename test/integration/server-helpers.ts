// Shared by the server integration tests: a real server in-process (its engines are real
// child processes on a real tiny model), raw HTTP and SSE helpers, and waiting on /metrics.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { createLogger, type Logger } from '../../backend/log/logger.js';
import { StrataServer } from '../../backend/app/app.js';
import { defaultConfig, type ServerConfig } from '../../backend/app/config.js';

export interface Running {
  server: StrataServer;
  url: string;
  port: number;
  openai: OpenAI;
  logs: string[];
  close(): Promise<void>;
}

/** Lines the server logged (kept for failure messages). */
function memoryLogger(lines: string[]): Logger {
  return createLogger({ format: 'text', level: 'debug', writer: { writeLine: (l) => { lines.push(l); if (lines.length > 5000) lines.shift(); }, flush: async () => {}, dropped: 0 } });
}

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startServer(
  modelPath: string, over: Partial<ServerConfig> = {}, restart = { minDelayMs: 100, maxDelayMs: 1000 },
  extra: { backendDirs?: string[]; now?: () => number } = {},
): Promise<Running> {
  const logs: string[] = [];
  // The prefix cache is off unless a test turns it on with its own folder (the default is the user's).
  const config: ServerConfig = {
    ...defaultConfig(), port: 0, slots: 2, threads: 2, ctx: 1024, batch: 64, keepAliveMs: 200, prefixCacheMib: 0, ...over,
  };
  const server = new StrataServer({ config, modelPath, log: memoryLogger(logs), restart, ...extra });
  const { url, port } = await server.listen();
  try {
    await server.startEngines();
  } catch (e) {
    await server.close();
    throw new Error(`${(e as Error).message}\n${logs.slice(-30).join('\n')}`);
  }
  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: over.apiKey ?? 'unused', maxRetries: 0, timeout: 120_000 });
  return { server, url, port, openai, logs, close: () => server.close() };
}

export interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: string }

export function raw(port: number, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(typeof body === 'string' ? body : JSON.stringify(body));
    req.end();
  });
}

export async function json<T = any>(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const r = await raw(port, method, path, body);
  return { status: r.status, body: JSON.parse(r.body) as T };
}

/** A streamed request read event by event: its server id (X-Request-Id), text, and how it ended. */
export interface StreamRun {
  id: Promise<number>;
  /** Resolves when the stream ends: 'done' ([DONE]), 'error' (an error event) or 'closed'. */
  end: Promise<{ how: 'done' | 'error' | 'closed'; text: string; error: any; events: any[] }>;
  abort(): void;
  /** Resolves when at least n text pieces arrived. */
  pieces(n: number): Promise<void>;
}

export function stream(port: number, path: string, body: Record<string, unknown>): StreamRun {
  let resolveId!: (n: number) => void;
  let rejectId!: (e: Error) => void;
  const id = new Promise<number>((res, rej) => { resolveId = res; rejectId = rej; });
  const events: any[] = [];
  let text = '';
  let count = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let req: ReturnType<typeof httpRequest>;
  const end = new Promise<{ how: 'done' | 'error' | 'closed'; text: string; error: any; events: any[] }>((resolve, reject) => {
    req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      resolveId(Number(res.headers['x-request-id']));
      if (res.statusCode !== 200) {
        let b = '';
        res.on('data', (c) => { b += c; });
        res.on('end', () => resolve({ how: 'error', text, error: { status: res.statusCode, ...JSON.parse(b || '{}') }, events }));
        return;
      }
      let buf = '';
      let finished: 'done' | 'error' | null = null;
      let error: any = null;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const ev = buf.slice(0, i);
          buf = buf.slice(i + 2);
          // An event's data lines (an error event also has `event: error`); comments have none.
          const dataLines = ev.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
          if (dataLines.length === 0) continue;
          const data = dataLines.join('\n');
          if (data === '[DONE]') { finished = 'done'; continue; }
          const obj = JSON.parse(data);
          events.push(obj);
          if (obj.error) { finished = 'error'; error = obj.error; continue; }
          const piece = obj.choices?.[0]?.delta?.content ?? obj.choices?.[0]?.text ?? '';
          if (piece) {
            text += piece;
            count++;
            for (const w of waiters.splice(0)) { if (count >= w.n) w.resolve(); else waiters.push(w); }
          }
        }
      });
      res.on('end', () => resolve({ how: finished ?? 'closed', text, error, events }));
      res.on('error', () => resolve({ how: finished ?? 'closed', text, error, events }));
    });
    req.on('error', (e) => { rejectId(e); reject(e); });
    req.write(JSON.stringify({ ...body, stream: true }));
    req.end();
  });
  end.catch(() => {});
  id.catch(() => {});
  return {
    id, end,
    abort: () => req.destroy(),
    pieces: (n) => new Promise<void>((resolve) => { if (count >= n) resolve(); else waiters.push({ n, resolve }); }),
  };
}

/** Polls until pred holds (a generous timeout; this waits for an event, it is not a fix). */
export async function until<T>(what: string, get: () => Promise<T> | T, pred: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (pred(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const metrics = async (port: number) => (await json(port, 'GET', '/metrics?requests=100')).body;

export function greedy(max: number) {
  return { temperature: 0, max_tokens: max };
}
