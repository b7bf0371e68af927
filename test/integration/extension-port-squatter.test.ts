// strata.port names a port another program already listens on: the real `strata serve`, started
// the way the extension starts it, cannot bind it, but the program answers /health "ok" first. The
// supervisor does not go ready and the key never reaches that program; the start fails naming the
// port. No engine runs: the server gives up on the port before it loads anything.
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../backend/addon/loader.js';
import { freePort } from '../../common/net/free-port.js';
import { StrataClient } from '../../extension/client/client.js';
import { DEFAULT_SETTINGS } from '../../extension/config/server-settings.js';
import { managedLaunch, newApiKey, probeManaged } from '../../extension/server/managed-launch.js';
import { spawnNodeScript } from '../../extension/server/node-process.js';
import { Supervisor, type SupervisorState } from '../../extension/server/supervisor.js';
import { tempDir } from './server-helpers.js';

const cli = join(packageRoot, 'dist', 'strata.mjs');
const tmp = tempDir('strata-port-squatter-');
const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
const squatter = createServer((req, res) => {
  seen.push({ url: req.url ?? '', headers: req.headers });
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ status: 'ok', model: 'squatter', object: 'list', data: [] }));
});
let port = 0;

beforeAll(async () => {
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
  const addr = squatter.address();
  port = typeof addr === 'object' && addr ? addr.port : 0;
});
afterAll(async () => {
  await new Promise((r) => squatter.close(r));
  tmp.remove();
});

describe('a program already on strata.port', () => {
  it('gets no key: the supervisor does not go ready, and the failure names the port', async () => {
    const model = join(tmp.dir, 'model.gguf');
    writeFileSync(model, 'never loaded: the server stops at the taken port');
    const settings = { ...DEFAULT_SETTINGS, modelPath: model, port };
    const apiKey = newApiKey();
    const states: SupervisorState[] = [];
    const sent: Array<Promise<unknown>> = [];
    const sup = new Supervisor({
      spawn: (p) => {
        const launch = managedLaunch(settings, p, { sessionsDir: join(tmp.dir, 'sessions'), responsesDir: join(tmp.dir, 'responses'), parentPid: process.pid, apiKey });
        return spawnNodeScript(cli, launch.args, launch.env);
      },
      pickPort: freePort,
      probe: (p) => probeManaged(p, apiKey),
      clock: { now: Date.now, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) },
    }, { port, healthIntervalMs: 50 });
    sup.onState((s) => {
      states.push(s);
      // What the manager does once ready: every request carries the key.
      if (s.kind === 'ready') sent.push(new StrataClient({ baseUrl: `http://127.0.0.1:${s.port}`, apiKey }).models().catch(() => null));
    });
    const outcome = await sup.start().then(() => 'ready', (e: Error) => e.message);
    await Promise.all(sent);
    await sup.stop();
    expect(seen.flatMap((s) => [s.headers.authorization, s.headers['x-api-key']].filter((h) => h !== undefined))).toEqual([]);
    expect(states.map((s) => s.kind)).not.toContain('ready');
    expect(outcome).toMatch(new RegExp(`^port ${port} is (in use by another program|already in use)`));
    expect(seen.filter((s) => !s.url.startsWith('/health?challenge='))).toEqual([]);
  });
});
