// Who may call the server without a key: the Host header parsed as a host (RFC 9110), so text
// after a loopback address ("127.0.0.1:80@evil.com") cannot pass the DNS-rebinding check.
import { describe, expect, it } from 'vitest';
import { checkAccess, hostOf } from '../../backend/http/security.js';

describe('Host header', () => {
  it('parses host [":" port] and nothing else', () => {
    expect(hostOf('localhost')).toBe('localhost');
    expect(hostOf('LocalHost:8080')).toBe('localhost');
    expect(hostOf('127.0.0.1:80')).toBe('127.0.0.1');
    expect(hostOf('[::1]:8080')).toBe('[::1]');
    expect(hostOf('[::1]')).toBe('[::1]');
    expect(hostOf('127.0.0.1:')).toBe('127.0.0.1');
    for (const bad of ['127.0.0.1:80@evil.com', 'localhost@evil.com', '127.0.0.1/evil.com', 'localhost:80:81',
      'localhost:http', '[::1]evil', '[::1]:80@evil.com', '[evil.com]', '', 'local host', '127.0.0.1#x']) {
      expect(hostOf(bad), bad).toBeNull();
    }
  });

  it('refuses a Host that only starts with a loopback address when no key is set', () => {
    expect(checkAccess({ host: '127.0.0.1:80@evil.com' }, null, false)).toMatchObject({ ok: false, code: 'host_not_allowed' });
    expect(checkAccess({ host: 'localhost:8080' }, null, false)).toEqual({ ok: true });
    // With a key the key protects; the Host is not checked.
    expect(checkAccess({ host: '127.0.0.1:80@evil.com', authorization: 'Bearer k' }, 'k', false)).toEqual({ ok: true });
  });
});

describe('Origin without a key', () => {
  it('refuses a webview\'s origin: any extension\'s webview has that scheme, and no Strata webview calls the server', () => {
    for (const origin of ['vscode-webview://1abc2def', 'vscode-webview://anything/index.html']) {
      expect(checkAccess({ host: '127.0.0.1:8080', origin }, null, false)).toMatchObject({ ok: false, code: 'origin_not_allowed' });
    }
    expect(checkAccess({ host: '127.0.0.1:8080', origin: 'http://localhost:5173' }, null, false)).toEqual({ ok: true });
  });
});
