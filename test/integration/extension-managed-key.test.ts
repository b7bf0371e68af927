// The managed server started the way the extension starts it (managedLaunch's arguments and
// environment, spawned by spawnNodeScript under the Supervisor, ready once its /health proves the
// key): it refuses a request without this start's key (401), also for the saved sessions, and
// serves one that sends it; the key is in the server's environment, never on its command line;
// its stored responses go to the folder the extension gives it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../backend/addon/loader.js';
import { freePort } from '../../common/net/free-port.js';
import { StrataApiError, StrataClient } from '../../extension/client/client.js';
import { DEFAULT_SETTINGS } from '../../extension/config/server-settings.js';
import { managedLaunch, newApiKey, probeManaged } from '../../extension/server/managed-launch.js';
import { spawnNodeScript } from '../../extension/server/node-process.js';
import { Supervisor } from '../../extension/server/supervisor.js';
import { managedServerKey } from '../e2e/lib/server-key.js';
import { ensureTestModel } from '../helpers/models.js';
import { raw, tempDir } from './server-helpers.js';

const cli = join(packageRoot, 'dist', 'strata.mjs');
const tmp = tempDir('strata-managed-key-');
const apiKey = newApiKey();
let sup: Supervisor;
let port = 0;
let pid: number | undefined;
const lines: string[] = [];

beforeAll(async () => {
  const settings = { ...DEFAULT_SETTINGS, modelPath: await ensureTestModel({}), slots: 1, contextSize: 1024 };
  sup = new Supervisor({
    spawn: (p) => {
      const launch = managedLaunch(settings, p, { sessionsDir: join(tmp.dir, 'sessions'), responsesDir: join(tmp.dir, 'responses'), parentPid: process.pid, apiKey });
      expect(launch.args.join(' ')).not.toContain(apiKey);
      return spawnNodeScript(cli, launch.args, launch.env);
    },
    pickPort: freePort,
    probe: (p) => probeManaged(p, apiKey),
    clock: { now: Date.now, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) },
  });
  sup.onOutput((l) => lines.push(l));
  sup.onState((s) => { if (s.kind === 'starting' || s.kind === 'ready') { port = s.port; pid = s.pid; } });
  await sup.start().catch((err: Error) => { throw new Error(`${err.message}\n${lines.slice(-30).join('\n')}`); });
});
afterAll(async () => {
  await sup?.stop();
  tmp.remove();
});

describe('the managed server\'s key', () => {
  it('a request without the key is refused (401), sessions included; with it, served', async () => {
    const url = `http://127.0.0.1:${port}`;
    for (const path of ['/v1/models', '/v1/sessions', '/v1/sessions/notes']) {
      const r = await raw(port, 'GET', path);
      expect(r.status, path).toBe(401);
      expect(JSON.parse(r.body).error.code).toBe('invalid_api_key');
      expect((await raw(port, 'GET', path, undefined, { authorization: 'Bearer wrong' })).status, path).toBe(401);
    }
    const without = await new StrataClient({ baseUrl: url }).sessions().then(() => null, (e: unknown) => e);
    expect(without).toBeInstanceOf(StrataApiError);
    expect((without as StrataApiError).status).toBe(401);
    // The extension's client sends it on every request.
    const client = new StrataClient({ baseUrl: url, apiKey });
    const messages = [{ role: 'user' as const, content: 'private words' }, { role: 'assistant' as const, content: 'ok' }];
    // The server saves a conversation it holds: it reads these messages once first.
    const chat = await raw(port, 'POST', '/v1/chat/completions', { messages: [...messages, { role: 'user', content: 'Thanks.' }], max_tokens: 1, temperature: 0 }, { authorization: `Bearer ${apiKey}` });
    expect(chat.status).toBe(200);
    await client.saveSession('notes', messages);
    expect((await client.sessions()).map((s) => s.name)).toEqual(['notes']);
    const read = await raw(port, 'GET', '/v1/sessions/notes', undefined, { authorization: `Bearer ${apiKey}` });
    expect(read.status).toBe(200);
    expect(read.body).toContain('private words');
    // Health stays open: the supervisor's probe needs no key.
    expect((await raw(port, 'GET', '/health')).status).toBe(200);
  });

  it('a stored response lands in the folder the extension gave it', async () => {
    const r = await raw(port, 'POST', '/v1/responses', { input: 'Hello.', max_output_tokens: 1, temperature: 0 }, { authorization: `Bearer ${apiKey}` });
    expect(r.status, r.body).toBe(200);
    const id = (JSON.parse(r.body) as { id: string }).id;
    expect(readdirSync(join(tmp.dir, 'responses'))).toContain(`${id}.json`);
  });

  it('the key is in the server\'s environment, not on its command line', () => {
    if (process.platform !== 'linux' || !pid) return;
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(apiKey);
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain(`STRATA_API_KEY=${apiKey}`);
    // The e2e runner finds it there by the server's port.
    expect(managedServerKey(port)).toBe(apiKey);
  });
});
