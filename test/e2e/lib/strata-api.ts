// The e2e runner talking to the Strata server the extension started (its URL read from the status
// bar's tooltip): sessions saved through the HTTP API, metrics, and the engine process to crash.
import { managedServerKey } from './server-key.js';
import { waitForValue, type Workbench } from './workbench.js';

/** The managed server's URL, from the status bar item's tooltip ("Strata server at http://…"). */
export async function strataUrl(wb: Workbench): Promise<string> {
  return waitForValue('the server URL in the Strata status bar tooltip', async () => {
    for (const t of await wb.statusBarTexts()) {
      const m = /Strata server at (http:\/\/127\.0\.0\.1:\d+)/.exec(t);
      if (m) return m[1];
    }
    return undefined;
  }, 30_000);
}

export async function api<T = unknown>(base: string, path: string, body?: unknown): Promise<T> {
  // The managed server wants this start's key (read from its environment, as any process of the user could).
  const key = managedServerKey(Number(new URL(base).port));
  const res = await fetch(base + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export interface Message { role: 'user' | 'assistant' | 'system'; content: string }

/**
 * Saves `messages` as a session through the HTTP API, the way another client would: the server
 * saves a conversation it holds, so it first reads these messages (plus one more question) once.
 */
export async function saveSessionOverHttp(base: string, name: string, messages: Message[]): Promise<void> {
  await api(base, '/v1/chat/completions', { messages: [...messages, { role: 'user', content: 'Thanks.' }], max_tokens: 1, temperature: 0 });
  await api(base, '/v1/sessions', { name, messages });
}

/** Resolves once the server has no request queued or running (the last keystroke's completion has come back). */
export async function serverIdle(base: string, timeoutMs: number): Promise<void> {
  await waitForValue('the server to have no request in flight', async () => {
    const m = await api<{ live: { requests: unknown[] } }>(base, '/metrics');
    return m.live.requests.length === 0 ? true : undefined;
  }, timeoutMs);
}

interface EngineView { replica: number; pid: number | null; alive: boolean; epoch: number }

export async function engines(base: string): Promise<EngineView[]> {
  return (await api<{ engines: EngineView[] }>(base, '/metrics')).engines;
}

/**
 * Crashes the engine process `times` times in a row (SIGSEGV, as a driver fault would), each time
 * once it is back up, so the server's crash-loop limit ends the restarts.
 */
export async function crashEngine(base: string, times: number, timeoutMs: number): Promise<void> {
  let lastPid: number | null = null;
  for (let i = 0; i < times; i++) {
    const pid = await waitForValue(`engine process ${i + 1} of ${times} to be up`, async () => {
      const e = (await engines(base))[0];
      return e?.alive && e.pid && e.pid !== lastPid ? e.pid : undefined;
    }, timeoutMs);
    process.kill(pid, 'SIGSEGV');
    lastPid = pid;
  }
}

/** The ids of the models the server serves (GET /v1/models). */
export async function strataModels(base: string): Promise<string[]> {
  return (await api<{ data: { id: string }[] }>(base, '/v1/models')).data.map((m) => m.id);
}
