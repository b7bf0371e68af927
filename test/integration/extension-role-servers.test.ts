// A server per role, as the extension wires it (RoleServers over the managed server's connection):
// inline completions stay on the managed Strata server (started the way the extension starts it)
// while chat goes to a llama-server built from the pinned llama.cpp source, with its own key; the
// capabilities each role's server reports are read from it (/v1/models, /props, the routes that
// answer), and a role whose route that server lacks (next edit, embeddings without --embeddings)
// is turned off with one log line. Random-weight models: the tests check where requests went and
// what the servers report, not what the models say.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../backend/addon/loader.js';
import { ServerProcess } from '../../tools/bench-compare/launch.js';
import { freePort } from '../../common/net/free-port.js';
import { StrataClient } from '../../extension/client/client.js';
import { DEFAULT_SETTINGS, requestModels } from '../../extension/config/server-settings.js';
import type { ModelUse } from '../../extension/config/server-settings.js';
import type { ServerConnection, ServerStatus } from '../../extension/server/connection.js';
import { managedLaunch, newApiKey } from '../../extension/server/managed-launch.js';
import { spawnNodeScript } from '../../extension/server/node-process.js';
import { RoleServers } from '../../extension/server/role-servers.js';
import { Supervisor } from '../../extension/server/supervisor.js';
import { ensureTestModel } from '../helpers/models.js';
import { tempDir } from './server-helpers.js';

const cli = join(packageRoot, 'dist', 'strata.mjs');
const tmp = tempDir('strata-role-servers-');
const managedKey = newApiKey();
const llamaKey = 'team-key-for-llama';
const LLAMA_CTX = 2048;
let sup: Supervisor;
let llama: ServerProcess;
let llamaUrl = '';
let managedUrl = '';
const supLines: string[] = [];

/** The managed server's connection as the extension's ServerManager offers it. */
class MainConnection implements ServerConnection {
  status: ServerStatus = { state: 'stopped', busy: false, mode: 'managed', model: null, url: null, message: null };
  client: StrataClient | undefined;
  private readonly listeners = new Set<(s: ServerStatus) => void>();
  set(state: ServerStatus['state'], client?: StrataClient): void {
    this.client = client;
    this.status = { ...this.status, state, url: client?.baseUrl ?? null };
    for (const l of this.listeners) l(this.status);
  }
  async ensureReady(): Promise<StrataClient> {
    if (!this.client) throw new Error('not running');
    return this.client;
  }
  onDidChange(l: (s: ServerStatus) => void): { dispose(): void } {
    this.listeners.add(l);
    return { dispose: () => this.listeners.delete(l) };
  }
}

beforeAll(async () => {
  const built = await promisify(execFile)(process.execPath, [join(packageRoot, 'scripts', 'build-native.mjs'), '--target', 'llama-server'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const bin = built.stdout.trim().split('\n').pop()!;
  const chatModel = await ensureTestModel({ vocab: 'qwen2.5-coder', chatTemplate: 'Qwen-Qwen2.5-7B-Instruct' });
  const port = await freePort();
  llamaUrl = `http://127.0.0.1:${port}`;
  llama = await ServerProcess.start({
    name: 'llama-server', command: bin, url: llamaUrl, logFile: join(tmp.dir, 'llama-server.log'),
    args: ['-m', chatModel, '--host', '127.0.0.1', '--port', String(port), '-t', '2', '-c', String(LLAMA_CTX), '-np', '1', '--no-webui', '--metrics', '--jinja', '--api-key', llamaKey],
  });

  const settings = { ...DEFAULT_SETTINGS, modelPath: await ensureTestModel({ vocab: 'starcoder' }), slots: 1, contextSize: 1024 };
  sup = new Supervisor({
    spawn: (p) => {
      const launch = managedLaunch(settings, p, { sessionsDir: join(tmp.dir, 'sessions'), responsesDir: join(tmp.dir, 'responses'), parentPid: process.pid, apiKey: managedKey });
      return spawnNodeScript(cli, launch.args, launch.env);
    },
    pickPort: freePort,
    probe: (p) => new StrataClient({ baseUrl: `http://127.0.0.1:${p}`, timeoutMs: 2000 }).health(),
    clock: { now: Date.now, setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) },
  });
  sup.onOutput((l) => supLines.push(l));
  sup.onState((s) => { if (s.kind === 'ready') managedUrl = `http://127.0.0.1:${s.port}`; });
  await sup.start().catch((err: Error) => { throw new Error(`${err.message}\n${supLines.slice(-30).join('\n')}`); });
}, 1_800_000); // a first run builds llama-server from the pinned source (minutes; cached after)

afterAll(async () => {
  await sup?.stop();
  await llama?.stop();
  tmp.remove();
});

/** llama-server's Prometheus counter (its --metrics). */
async function llamaCounter(name: string): Promise<number> {
  const text = await (await fetch(`${llamaUrl}/metrics`, { headers: { authorization: `Bearer ${llamaKey}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`llamacpp:${name} `));
  if (!line) throw new Error(`llama-server reports no ${name}:\n${text}`);
  return Number(line.split(' ')[1]);
}

function roles(urls: Partial<Record<ModelUse, string>>, keys: Partial<Record<ModelUse, string>>, main: MainConnection, log: string[]): RoleServers {
  return new RoleServers({
    main,
    settings: { url: (r) => urls[r] ?? '', apiKey: async (r) => keys[r], model: () => undefined },
    log: { info: (m) => log.push(`info ${m}`), warn: (m) => log.push(`warn ${m}`) },
  });
}

describe('roles on two servers', () => {
  it('completions on the managed Strata server, chat on llama-server with its own key', async () => {
    const main = new MainConnection();
    const log: string[] = [];
    const r = roles({ chat: llamaUrl }, { chat: llamaKey }, main, log);
    const readyStates: string[] = [];
    r.connection('chat').onDidChange((s) => readyStates.push(s.state));
    main.set('ready', new StrataClient({ baseUrl: managedUrl, apiKey: managedKey, models: requestModels({ ...DEFAULT_SETTINGS }, 'managed') }));

    // The chat role connects when the main server is ready; its capabilities come from llama-server.
    const chat = await r.connection('chat').ensureReady();
    expect(chat.baseUrl).toBe(llamaUrl);
    expect(chat.apiKey).toBe(llamaKey);
    expect(readyStates).toContain('ready');
    const caps = r.serverOf('chat')!.capabilities!;
    expect(caps.route).toBe('/v1/chat/completions');
    expect(caps.contextPerSlot).toBe(LLAMA_CTX); // /props default_generation_settings.n_ctx, one slot
    expect(caps.toolCalls).toBe(true); // /props chat_template_caps of the Qwen2.5 template
    expect(r.agentBlocked()).toBeNull();
    expect(caps.models).toHaveLength(1);
    expect(log.filter((l) => l.includes('chat, the agent and inline edits on'))).toEqual([
      `info chat, the agent and inline edits on ${llamaUrl} (/v1/chat/completions): models ${caps.models[0]}; ${LLAMA_CTX} tokens of context per slot; tool calls`,
    ]);

    // Completions have no server of their own: the managed one.
    const completion = r.connection('completion').client!;
    expect(completion.baseUrl).toBe(managedUrl);
    expect(r.connection('completion').status.mode).toBe('managed');

    const chatBefore = await llamaCounter('prompt_tokens_total');
    const events = [];
    for await (const e of chat.chatStream({ messages: [{ role: 'user', content: 'Say hello.' }], maxTokens: 4, temperature: 0 }, new AbortController().signal)) events.push(e);
    expect(events.at(-1)).toMatchObject({ type: 'done' });
    expect(await llamaCounter('prompt_tokens_total')).toBeGreaterThan(chatBefore);

    const infillBefore = await llamaCounter('prompt_tokens_total');
    const filled = await completion.infill({ prefix: 'def add(a, b):\n    return ', suffix: '\n', extra: [], maxTokens: 4, maxPredictMs: 10_000 }, new AbortController().signal);
    expect(filled.tokensPredicted).toBeGreaterThan(0);
    // The infill went to the managed server: llama-server read no prompt meanwhile.
    expect(await llamaCounter('prompt_tokens_total')).toBe(infillBefore);
    r.dispose();
  });

  it('a role whose route the server lacks is off, with one log line, and stays off without asking again', async () => {
    const main = new MainConnection();
    const log: string[] = [];
    const r = roles({ nextEdit: llamaUrl, embedding: llamaUrl }, { nextEdit: llamaKey, embedding: llamaKey }, main, log);
    main.set('ready', new StrataClient({ baseUrl: managedUrl, apiKey: managedKey }));
    const nextEdit = r.connection('nextEdit');
    await expect(nextEdit.ensureReady()).rejects.toThrow(`next-edit suggestions off: ${llamaUrl} has no /v1/edits/next (/v1/edits/next 404)`);
    // llama-server started without --embeddings answers 501.
    await expect(r.connection('embedding').ensureReady()).rejects.toThrow(`codebase embeddings off: ${llamaUrl} has no /v1/embeddings (/v1/embeddings 501)`);
    expect(nextEdit.status).toMatchObject({ state: 'failed', message: 'off: no /v1/edits/next (/v1/edits/next 404)' });
    expect(r.lines()).toEqual([
      `next-edit suggestions: ${llamaUrl} (off: no /v1/edits/next (/v1/edits/next 404))`,
      `codebase embeddings: ${llamaUrl} (off: no /v1/embeddings (/v1/embeddings 501))`,
    ]);
    expect(nextEdit.client).toBeUndefined();
    await expect(nextEdit.ensureReady()).rejects.toThrow('next-edit suggestions off');
    // One line each (the two roles connect side by side: in either order).
    expect(log.filter((l) => l.startsWith('warn')).sort()).toEqual([
      `warn codebase embeddings off: ${llamaUrl} has no /v1/embeddings (/v1/embeddings 501)`,
      `warn next-edit suggestions off: ${llamaUrl} has no /v1/edits/next (/v1/edits/next 404)`,
    ]);
    r.dispose();
  });

  it('completions on llama-server use its /infill; a wrong key is refused with the command that sets it', async () => {
    const main = new MainConnection();
    const log: string[] = [];
    const r = roles({ completion: llamaUrl, chat: llamaUrl }, { completion: llamaKey, chat: 'wrong' }, main, log);
    main.set('ready', new StrataClient({ baseUrl: managedUrl, apiKey: managedKey }));
    const completion = await r.connection('completion').ensureReady();
    expect(r.serverOf('completion')!.capabilities!.route).toBe('/infill');
    expect(r.serverOf('completion')!.capabilities!.refused).toEqual(['/v1/infill 404']);
    const before = await llamaCounter('tokens_predicted_total');
    const filled = await completion.infill({ prefix: 'def add(a, b):\n    return ', suffix: '\n', extra: [], maxTokens: 3, maxPredictMs: 10_000 }, new AbortController().signal);
    expect(filled.tokensPredicted).toBeGreaterThan(0);
    expect(await llamaCounter('tokens_predicted_total')).toBeGreaterThan(before);
    await expect(r.connection('chat').ensureReady()).rejects.toThrow(`${llamaUrl} refused the key (401): set it with "Strata: Set Role Server API Key"`);
    r.dispose();
  });

  it('the main server stopping drops the role connections; its next start connects them again', async () => {
    const main = new MainConnection();
    const r = roles({ chat: llamaUrl }, { chat: llamaKey }, main, []);
    const states: string[] = [];
    r.connection('chat').onDidChange((s) => states.push(s.state));
    main.set('ready', new StrataClient({ baseUrl: managedUrl, apiKey: managedKey }));
    await r.connection('chat').ensureReady();
    main.set('stopped');
    expect(r.connection('chat').client).toBeUndefined();
    expect(r.connection('chat').status.state).toBe('stopped');
    main.set('ready', new StrataClient({ baseUrl: managedUrl, apiKey: managedKey }));
    expect((await r.connection('chat').ensureReady()).baseUrl).toBe(llamaUrl);
    expect(states).toEqual(['starting', 'ready', 'stopped', 'starting', 'ready']);
    r.dispose();
  });
});
