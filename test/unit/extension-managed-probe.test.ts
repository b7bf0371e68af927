// The managed server proves it holds this start's key before the extension sends the key. A
// program already listening on the port answers /health "ok" before the real server gives up on
// it: it gets no key (the probe sends a challenge, never the key), the start fails naming the
// port, and a picked port moves on to another. The server's side: /health?challenge= answers
// key_proof under its key (backend/http/routes/info.ts). And what the managed server is told.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../common/net/free-port.js';
import { StrataApiError, StrataClient } from '../../extension/client/client.js';
import { DEFAULT_SETTINGS } from '../../extension/config/server-settings.js';
import { adviceFor } from '../../extension/server/failures.js';
import { managedLaunch, newApiKey, probeManaged } from '../../extension/server/managed-launch.js';
import { ForeignServer, Supervisor, type ProcessHandle, type SupervisorState } from '../../extension/server/supervisor.js';
import { serveScripted, type ScriptedServer } from '../helpers/scripted-server.js';

/** A started server process that never exits by itself (the worst case: slow to find its port taken). */
class Child implements ProcessHandle {
  readonly pid = 4242;
  readonly signals: string[] = [];
  private exits: Array<(c: number | null, s: string | null) => void> = [];
  kill(signal: 'SIGTERM' | 'SIGKILL'): void {
    this.signals.push(signal);
    for (const l of this.exits.splice(0)) l(null, signal);
  }
  onOutput(): void {}
  onExit(l: (c: number | null, s: string | null) => void): void { this.exits.push(l); }
}

interface Seen { url: string; headers: IncomingHttpHeaders }

/** Another program on a port: answers every request like a healthy server, and keeps what it got. */
async function squatter(): Promise<{ port: number; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const srv = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.url?.startsWith('/health') ? { status: 'ok', model: 'squatter' } : { object: 'list', data: [] }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const addr = srv.address();
  return { port: typeof addr === 'object' && addr ? addr.port : 0, seen, close: () => new Promise((r) => srv.close(() => r())) };
}

const keyHeaders = (s: Seen): unknown[] => [s.headers.authorization, s.headers['x-api-key']].filter((h) => h !== undefined);
const clock = { now: Date.now, setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>) };

/** The manager's wiring: the proving probe, and once ready a client that sends the key on every request. */
function supervise(apiKey: string, port: number, pickPort: () => Promise<number> = freePort) {
  const children: Child[] = [];
  const states: SupervisorState[] = [];
  const sent: Array<Promise<unknown>> = [];
  const sup = new Supervisor({
    spawn: () => { const c = new Child(); children.push(c); return c; },
    pickPort,
    probe: (p) => probeManaged(p, apiKey),
    clock,
  }, { port, healthIntervalMs: 20, startTimeoutMs: 10_000, backoffMs: [10], killGraceMs: 100 });
  sup.onState((s) => {
    states.push(s);
    if (s.kind === 'ready') sent.push(new StrataClient({ baseUrl: `http://127.0.0.1:${s.port}`, apiKey }).models().catch(() => null));
  });
  return { sup, children, states, sent };
}

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => { for (const c of cleanup.splice(0)) await c(); });

describe('a program already on the managed server\'s port', () => {
  it('gets no key, the start fails naming the port, and the user is told to change strata.port', async () => {
    const sq = await squatter();
    cleanup.push(sq.close);
    const apiKey = newApiKey();
    const w = supervise(apiKey, sq.port);
    const outcome = await w.sup.start().then(() => 'ready', (e: Error) => e.message);
    await Promise.all(w.sent);
    // What it got: a challenge, never the key.
    expect(sq.seen.flatMap(keyHeaders)).toEqual([]);
    expect(outcome).toBe(`port ${sq.port} is in use by another program: it answered, but not as the Strata server started here, so nothing was sent to it`);
    expect(w.states.map((s) => s.kind)).not.toContain('ready');
    expect(w.sup.current).toMatchObject({ kind: 'failed', failure: { kind: 'portInUse' } });
    expect(adviceFor('portInUse')).toContain('strata.port');
    // It was asked for a proof only: no request but /health.
    expect(sq.seen.length).toBeGreaterThan(0);
    expect(sq.seen.filter((s) => !/^\/health\?challenge=[\w-]+$/.test(s.url))).toEqual([]);
    expect(w.children[0]!.signals).toEqual(['SIGTERM']);
  });

  it('with a picked port, the next start moves to another port and is ready once that server proves the key', async () => {
    const sq = await squatter();
    cleanup.push(sq.close);
    const apiKey = newApiKey();
    const real = await serveScripted(() => ['x'], { config: { apiKey } });
    cleanup.push(real.close);
    const ports = [sq.port, portOf(real)];
    const w = supervise(apiKey, 0, async () => ports.shift()!);
    await w.sup.start();
    await Promise.all(w.sent);
    expect(w.sup.current).toMatchObject({ kind: 'ready', port: portOf(real) });
    expect(w.states.find((s) => s.kind === 'restarting')).toMatchObject({ last: { kind: 'portInUse' } });
    expect(sq.seen.flatMap(keyHeaders)).toEqual([]);
  });
});

describe('the managed server\'s proof of its key', () => {
  let real: ScriptedServer;
  afterEach(async () => { await real?.close(); });

  it('/health answers a challenge under the server\'s key: this start\'s key passes, another fails', async () => {
    const apiKey = newApiKey();
    real = await serveScripted(() => ['x'], { config: { apiKey } });
    const health = await probeManaged(portOf(real), apiKey);
    expect(health).toMatchObject({ status: 'ok' });
    expect(health.keyProof).toMatch(/^[\w-]{43}$/);
    await expect(probeManaged(portOf(real), newApiKey())).rejects.toBeInstanceOf(ForeignServer);
    // No challenge, or one not of the expected form: no proof (and the body as before).
    expect(await new StrataClient({ baseUrl: real.url }).health()).not.toHaveProperty('keyProof');
    expect(await new StrataClient({ baseUrl: real.url }).health(undefined, 'short')).not.toHaveProperty('keyProof');
  });

  it('a server without a key proves nothing; a port nobody listens on is "not yet", not another program', async () => {
    real = await serveScripted(() => ['x']);
    await expect(probeManaged(portOf(real), newApiKey())).rejects.toBeInstanceOf(ForeignServer);
    const err = await probeManaged(await freePort(), newApiKey()).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(StrataApiError);
    expect(err).not.toBeInstanceOf(ForeignServer);
  });
});

describe('what the managed server is told', () => {
  it('keeps its sessions, stored responses and prefix cache in the extension\'s storage; the key only in its environment', () => {
    const apiKey = newApiKey();
    const storage = join('/home/u/.config/Code/User/globalStorage/strata');
    const launch = managedLaunch({ ...DEFAULT_SETTINGS, modelPath: '/m/a.gguf' }, 41234, {
      sessionsDir: join(storage, 'sessions'), responsesDir: join(storage, 'responses'), prefixCacheDir: join(storage, 'prefix-cache'), parentPid: 7, apiKey,
    });
    const flag = (name: string): string | undefined => launch.args[launch.args.indexOf(name) + 1];
    expect(flag('--responses-dir')).toBe(join(storage, 'responses'));
    expect(flag('--sessions-dir')).toBe(join(storage, 'sessions'));
    expect(flag('--prefix-cache-dir')).toBe(join(storage, 'prefix-cache'));
    expect(flag('--port')).toBe('41234');
    expect(launch.args.join(' ')).not.toContain(apiKey);
    expect(launch.env).toEqual({ STRATA_API_KEY: apiKey });
  });
});

function portOf(s: ScriptedServer): number {
  return Number(new URL(s.url).port);
}
