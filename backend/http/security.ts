// Who may call the server. With an API key: every route but /health needs it (Bearer or
// x-api-key, compared in constant time). Without a key the server is loopback-only, and a
// web page must not reach it through the user's browser: the Host header must name
// loopback (DNS rebinding) and a cross-site Origin is refused.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isLoopbackHost } from '../../common/net/loopback.js';

export type AccessVerdict =
  | { ok: true }
  | { ok: false; code: 'invalid_api_key' | 'host_not_allowed' | 'origin_not_allowed'; message: string };


/**
 * The host of a Host header ("[::1]:8080" -> "[::1]", "localhost:80" -> "localhost"), parsed as
 * RFC 9110 defines it (uri-host [":" port]), or null when the header is not one. Strict on
 * purpose: "127.0.0.1:80@evil.com" is not a loopback host with odd trailing bytes, it is no host.
 */
export function hostOf(header: string): string | null {
  const h = header.trim().toLowerCase();
  let host: string;
  let port: string;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    if (end < 0) return null;
    host = h.slice(0, end + 1);
    port = h.slice(end + 1);
    if (!/^\[[0-9a-f:.]+\]$/.test(host)) return null;   // an IPv6 literal
  } else {
    const colon = h.indexOf(':');
    host = colon < 0 ? h : h.slice(0, colon);
    port = colon < 0 ? '' : h.slice(colon);
    // reg-name or IPv4: unreserved, pct-encoded and sub-delims; never '@', '/', '?', '#' or a second ':'.
    if (!/^[a-z0-9\-._~!$&'()*+,;=%]+$/.test(host)) return null;
  }
  if (port !== '' && !/^:\d{0,5}$/.test(port)) return null;
  return host;
}

/**
 * An Origin a local page of ours may have: loopback http(s), or VS Code's own window. Not a
 * webview's: any extension's webview has that scheme, and no Strata webview calls the server.
 */
export function isAllowedOrigin(origin: string): boolean {
  let url: URL;
  try { url = new URL(origin); } catch { return false; }
  if (url.protocol === 'vscode-file:') return true;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return isLoopbackHost(url.hostname);
}

export function keyMatches(given: string, expected: string): boolean {
  // Hash both so the comparison is constant-time whatever the lengths.
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function presentedKey(headers: IncomingHttpHeaders): string | null {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1]!.trim();
  }
  const x = headers['x-api-key'];
  if (typeof x === 'string' && x.length > 0) return x.trim();
  return null;
}

export function checkAccess(headers: IncomingHttpHeaders, apiKey: string | null, isPublic: boolean): AccessVerdict {
  if (apiKey) {
    if (isPublic) return { ok: true };
    const given = presentedKey(headers);
    if (given === null) return { ok: false, code: 'invalid_api_key', message: 'an API key is required (Authorization: Bearer KEY or x-api-key: KEY)' };
    if (!keyMatches(given, apiKey)) return { ok: false, code: 'invalid_api_key', message: 'the API key is not valid' };
    return { ok: true };
  }
  const host = headers.host;
  const hostName = typeof host === 'string' ? hostOf(host) : null;
  if (hostName === null || !isLoopbackHost(hostName)) {
    return { ok: false, code: 'host_not_allowed', message: `Host '${host ?? ''}' is not allowed: without an API key the server only answers requests addressed to localhost, 127.0.0.1 or [::1]` };
  }
  const origin = headers.origin;
  if (typeof origin === 'string' && !isAllowedOrigin(origin)) {
    return { ok: false, code: 'origin_not_allowed', message: `Origin '${origin}' is not allowed: cross-site requests need the server to run with an API key` };
  }
  return { ok: true };
}
