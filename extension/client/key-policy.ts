// When an API key may leave the extension, and for which server. Over plain http a key goes only
// to this machine (loopback) unless the user allowed it (strata.allowInsecureRemote): on a network
// anyone on the way could read it. A stored key is bound to the server (origin) it was entered
// for, so a changed URL does not take the old key to a new host. Pure: no vscode.
import { isLoopbackHost } from '../../common/net/loopback.js';

export const ALLOW_INSECURE_SETTING = 'strata.allowInsecureRemote';

/** Why a key must not be sent to `baseUrl`, or null when it may. */
export function keyRefusal(baseUrl: string, allowInsecure: boolean): string | null {
  let u: URL;
  try { u = new URL(baseUrl); } catch { return `the API key is not sent to ${baseUrl}, which is not a URL`; }
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && (isLoopbackHost(u.hostname) || allowInsecure)) return null;
  return `the API key is not sent to ${u.protocol}//${u.host} in clear text: use an https:// address, or allow plain http with ${ALLOW_INSECURE_SETTING}`;
}

/** The server a key is for: the URL's origin ("https://host:8443"), or null when it names none. */
export function keyOrigin(url: string): string | null {
  try {
    const u = new URL(url.trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/** A key as secret storage holds it; `origin` null: kept before keys were bound to a server. */
export interface StoredKey { key: string; origin: string | null }

export function encodeStoredKey(key: string, origin: string): string {
  return JSON.stringify({ origin, key });
}

export function decodeStoredKey(raw: string): StoredKey {
  try {
    const v = JSON.parse(raw) as unknown;
    if (v && typeof v === 'object' && typeof (v as StoredKey).key === 'string' && typeof (v as StoredKey).origin === 'string') {
      return { key: (v as StoredKey).key, origin: (v as StoredKey).origin };
    }
  } catch { /* a plain key */ }
  return { key: raw, origin: null };
}

/** The stored key when it was entered for the server `url` names, else undefined. */
export function keyForServer(stored: StoredKey, url: string): string | undefined {
  const origin = keyOrigin(url);
  return origin !== null && stored.origin === origin && stored.key ? stored.key : undefined;
}
