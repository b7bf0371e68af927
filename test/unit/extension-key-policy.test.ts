// Where an API key may go: over plain http only to this machine unless strata.allowInsecureRemote
// allows it, and only to the server it was entered for. The decision, the client's headers (a fake
// fetch: no request leaves the machine), and a role's own servers: a key entered for one server is
// not sent to another (two scripted servers on loopback).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeStoredKey, encodeStoredKey, keyForServer, keyOrigin, keyRefusal } from '../../extension/client/key-policy.js';
import { StrataClient } from '../../extension/client/client.js';
import type { ModelUse } from '../../extension/config/server-settings.js';
import type { ServerConnection, ServerStatus } from '../../extension/server/connection.js';
import { RoleServers } from '../../extension/server/role-servers.js';
import { ScriptedModelServer } from '../helpers/scripted-model-server.js';

interface Sent { url: string; authorization: string | null }

/** A fetch that answers /health "ok" itself and records what would have gone out. */
function recordingFetch(sent: Sent[], pass?: typeof fetch): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    sent.push({ url: String(input), authorization: headers.get('authorization') });
    if (pass) return pass(input, init);
    return new Response(JSON.stringify({ status: 'ok', model: 'm' }), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
}

describe('whether a key may be sent', () => {
  it('https anywhere, plain http only to this machine unless allowed', () => {
    for (const url of ['https://gpu-box:8443', 'https://10.0.0.5', 'http://127.0.0.1:8080', 'http://localhost:8080', 'http://127.1.2.3', 'http://[::1]:8080']) {
      expect(keyRefusal(url, false), url).toBeNull();
    }
    for (const url of ['http://gpu-box:8080', 'http://10.0.0.5:8080', 'http://127.0.0.1.example.com', 'http://[::ffff:10.0.0.1]', 'ftp://gpu-box', 'gpu-box:8080']) {
      expect(keyRefusal(url, false), url).toMatch(/the API key is not sent to .* (in clear text|which is not a URL)/);
    }
    expect(keyRefusal('http://gpu-box:8080', false)).toBe('the API key is not sent to http://gpu-box:8080 in clear text: use an https:// address, or allow plain http with strata.allowInsecureRemote');
    expect(keyRefusal('http://gpu-box:8080', true)).toBeNull();
    expect(keyRefusal('ftp://gpu-box', true)).not.toBeNull();
  });

  it('the client sends no request that would carry the key to http off this machine; with the opt-in, https or loopback it sends it', async () => {
    const sent: Sent[] = [];
    const refused = new StrataClient({ baseUrl: 'http://gpu-box:8080/v1', apiKey: 'k', fetch: recordingFetch(sent) });
    await expect(refused.health()).rejects.toThrow('the API key is not sent to http://gpu-box:8080 in clear text');
    await expect(refused.chatStream({ messages: [{ role: 'user', content: 'code' }] }, new AbortController().signal).next()).rejects.toThrow(/in clear text/);
    expect(refused.apiKey).toBeUndefined();
    expect(sent).toEqual([]);
    for (const [baseUrl, allow] of [['http://gpu-box:8080', true], ['https://gpu-box:8443', false], ['http://127.0.0.1:9', false]] as const) {
      await new StrataClient({ baseUrl, apiKey: 'k', allowInsecureKey: allow, fetch: recordingFetch(sent) }).health();
    }
    expect(sent).toEqual([
      { url: 'http://gpu-box:8080/health', authorization: 'Bearer k' },
      { url: 'https://gpu-box:8443/health', authorization: 'Bearer k' },
      { url: 'http://127.0.0.1:9/health', authorization: 'Bearer k' },
    ]);
    // No key: nothing to protect, the request goes.
    await new StrataClient({ baseUrl: 'http://gpu-box:8080', fetch: recordingFetch(sent) }).health();
    expect(sent.at(-1)).toEqual({ url: 'http://gpu-box:8080/health', authorization: null });
  });
});

describe('a key is bound to the server it was entered for', () => {
  it('same origin: the key; another host, port or scheme: none; a key kept before binding has no server', () => {
    const stored = decodeStoredKey(encodeStoredKey('k', keyOrigin('https://team.example:8443/v1')!));
    expect(stored).toEqual({ key: 'k', origin: 'https://team.example:8443' });
    expect(keyForServer(stored, 'https://team.example:8443')).toBe('k');
    expect(keyForServer(stored, ' https://TEAM.example:8443/v1/ ')).toBe('k');
    for (const url of ['https://evil.example:8443', 'https://team.example:9443', 'http://team.example:8443', 'https://team.example:8443@evil.example', '']) {
      expect(keyForServer(stored, url), url).toBeUndefined();
    }
    expect(decodeStoredKey('plain-old-key')).toEqual({ key: 'plain-old-key', origin: null });
    expect(keyForServer(decodeStoredKey('plain-old-key'), 'https://team.example:8443')).toBeUndefined();
  });
});

class Main implements ServerConnection {
  status: ServerStatus = { state: 'ready', busy: false, mode: 'managed', model: null, url: null, message: null };
  client = new StrataClient({ baseUrl: 'http://127.0.0.1:1' });
  ensureReady(): Promise<StrataClient> { return Promise.resolve(this.client); }
  onDidChange(): { dispose(): void } { return { dispose: () => undefined }; }
}

describe('a role\'s own server and its key', () => {
  const a = new ScriptedModelServer({ chat: () => ({ text: 'a' }) });
  const b = new ScriptedModelServer({ chat: () => ({ text: 'b' }) });
  beforeAll(async () => { await a.start(); await b.start(); });
  afterAll(async () => { await a.close(); await b.close(); });

  /** Role settings as the extension's: the stored key (entered for `keyFor`) only for its own server. */
  function roles(urls: Partial<Record<ModelUse, string>>, keyFor: string, sent: Sent[], fetchImpl?: typeof fetch): RoleServers {
    const stored = decodeStoredKey(encodeStoredKey('team-key', keyOrigin(keyFor)!));
    return new RoleServers({
      main: new Main(), fetch: recordingFetch(sent, fetchImpl),
      settings: { url: (r) => urls[r] ?? '', apiKey: async (_r, url) => keyForServer(stored, url), model: () => undefined, allowInsecureKey: () => false },
      log: { info: () => undefined, warn: () => undefined },
    });
  }

  it('a key entered for server A is not sent when the role\'s URL names server B; back on A it is', async () => {
    const urls: Partial<Record<ModelUse, string>> = { chat: b.url };
    const sent: Sent[] = [];
    const r = roles(urls, a.url, sent, globalThis.fetch);
    expect((await r.connection('chat').ensureReady()).apiKey).toBeUndefined();
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((s) => s.url.startsWith(b.url) && s.authorization === null)).toBe(true);
    urls.chat = a.url;
    r.reload(['chat']);
    sent.length = 0;
    expect((await r.connection('chat').ensureReady()).apiKey).toBe('team-key');
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((s) => s.url.startsWith(a.url) && s.authorization === 'Bearer team-key')).toBe(true);
    r.dispose();
  });

  it('a role server on plain http off this machine is not asked at all while it would get the key', async () => {
    const sent: Sent[] = [];
    const r = roles({ chat: 'http://gpu-box.example:8080' }, 'http://gpu-box.example:8080', sent);
    await expect(r.connection('chat').ensureReady()).rejects.toThrow(/not sent to http:\/\/gpu-box\.example:8080 in clear text/);
    expect(sent).toEqual([]);
    r.dispose();
  });
});
