// `strata launch` as a user runs it, with stand-in clients (small scripts named claude, codex and cn
// first on PATH) that report what they were given: with nothing on the port it starts a server
// (a fresh key, the serve options given), hands the client the URL, key, model and context, exits
// with the client's code and stops the server; a running server with another key is refused by
// name; a server with the same key is used as it is and left running.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../common/net/free-port.js';
import { ensureTestModel } from '../helpers/models.js';
import { cliPath } from '../helpers/serve-process.js';
import { startServer, type Running } from './server-helpers.js';

vi.setConfig({ testTimeout: 120_000 });

/** A client that prints its arguments, environment and what GET /v1/models answers it, then exits 7. */
const STAND_IN = `#!${process.execPath}
const env = process.env;
const codexBase = process.argv.find((a) => a.startsWith('model_providers.strata.base_url='));
const base = env.ANTHROPIC_BASE_URL ?? (codexBase ? JSON.parse(codexBase.slice(codexBase.indexOf('=') + 1)).replace(/\\/v1$/, '') : null);
const key = env.ANTHROPIC_AUTH_TOKEN ?? env.STRATA_API_KEY;
const fs = require('node:fs');
const configAt = process.argv.indexOf('--config');
const config = configAt > 0 ? fs.readFileSync(process.argv[configAt + 1], 'utf8') : null;
(async () => {
  const status = base ? (await fetch(base + '/v1/models', { headers: { authorization: 'Bearer ' + key } })).status : null;
  console.log(JSON.stringify({ argv: process.argv.slice(2), env, status, config }));
  process.exit(7);
})();
`;

interface Ran { code: number | null; stdout: string; stderr: string }

function launch(args: string[], bin: string, env: Record<string, string> = {}): Promise<Ran> {
  const child = spawn(process.execPath, [cliPath, 'launch', ...args], {
    env: { PATH: [bin, process.env.PATH ?? ''].join(delimiter), HOME: tmpdir(), ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => { stdout += b.toString(); });
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const reported = (r: Ran): { argv: string[]; env: Record<string, string>; status: number | null; config: string | null } => JSON.parse(r.stdout.trim().split('\n').at(-1)!);

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

describe('strata launch in a terminal the editor opened', () => {
  it('keeps its failure on screen until Enter (STRATA_LAUNCH_HOLD=1), then exits with its code', async () => {
    // Something that is not Strata on the port: launch says so and fails.
    const other = createServer((_req, res) => { res.writeHead(404).end('no'); });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      const child = spawn(process.execPath, [cliPath, 'launch', 'codex', '--url', url], {
        env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), STRATA_LAUNCH_HOLD: '1' }, stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stderr = '';
      let exited = false;
      const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => { exited = true; resolve(code); }));
      await new Promise<void>((resolve) => child.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        if (stderr.includes('press Enter')) resolve();
      }));
      expect(stderr).toContain(`something else answers at ${url}`);
      expect(stderr).toContain('exited with code 1; press Enter to close this terminal');
      expect(exited).toBe(false);
      child.stdin.write('\n');
      expect(await exit).toBe(1);
    } finally {
      other.close();
    }
  });
});

describe('strata launch', () => {
  let bin: string;
  let model: string;
  beforeAll(async () => {
    bin = mkdtempSync(join(tmpdir(), 'strata-launch-bin-'));
    for (const name of ['claude', 'codex', 'cn', 'opencode']) {
      writeFileSync(join(bin, name), STAND_IN);
      chmodSync(join(bin, name), 0o755);
    }
    model = await ensureTestModel();
  });
  afterAll(() => { rmSync(bin, { recursive: true, force: true }); });

  it('starts a server when none answers, gives Claude Code its URL, key, model and context, exits with its code and stops the server', async () => {
    const port = await freePort();
    const r = await launch(['claude', '--port', String(port), '--model', model, '--ctx', '2048', '--slots', '1', '--prefix-cache-mib', '0', '--', '-p', 'hello'], bin, { ANTHROPIC_API_KEY: 'sk-ant-not-for-strata', ELECTRON_RUN_AS_NODE: '1' });
    expect(r.code, r.stderr).toBe(7);
    const got = reported(r);
    expect(got.argv).toEqual(['-p', 'hello']);
    expect(got.env.ANTHROPIC_BASE_URL).toBe(`http://127.0.0.1:${port}`);
    // A fresh key, and the server wants it.
    expect(got.env.ANTHROPIC_AUTH_TOKEN!.length).toBeGreaterThanOrEqual(32);
    expect(got.status).toBe(200);
    expect(got.env.ANTHROPIC_MODEL).toBe('strata-test-tiny-qwen2');
    expect(got.env.CLAUDE_CODE_AUTO_COMPACT_WINDOW).toBe('100000');
    expect(got.env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE).toBe(String(Math.floor((90 * 2048) / 100_000)));
    expect(got.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC).toBe('1');
    expect(got.env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(got.env.ELECTRON_RUN_AS_NODE).toBeUndefined();
    expect(r.stderr).toMatch(/starting strata serve on http:\/\/127\.0\.0\.1:\d+/);
    expect(await portOpen(port)).toBe(false);
  });

  describe('with a server running', () => {
    let srv: Running;
    beforeAll(async () => { srv = await startServer(model, { apiKey: 'sk-running', ctx: 1024 }); });
    afterAll(async () => { await srv?.close(); });

    it('uses it with the same key and leaves it running: Codex gets its provider by -c, the key by STRATA_API_KEY', async () => {
      const r = await launch(['codex', '--url', `${srv.url}/v1`, '--api-key', 'sk-running', '--', 'exec', 'hi'], bin);
      expect(r.code, r.stderr).toBe(7);
      const got = reported(r);
      expect(got.argv.slice(-2)).toEqual(['exec', 'hi']);
      expect(got.argv).toContain(`model_providers.strata.base_url="${srv.url}/v1"`);
      expect(got.argv).toContain('model_providers.strata.wire_api="responses"');
      expect(got.argv).toContain('model_context_window=1024');
      expect(got.env.STRATA_API_KEY).toBe('sk-running');
      expect(got.status).toBe(200);
      expect(r.stderr).toContain(`using the server at ${srv.url}`);
      expect(await portOpen(srv.port)).toBe(true);
    });

    it("writes Continue's config file for the run and removes it after", async () => {
      const r = await launch(['continue', '--url', srv.url], bin, { STRATA_API_KEY: 'sk-running' });
      expect(r.code, r.stderr).toBe(7);
      const got = reported(r);
      const at = got.argv.indexOf('--config');
      expect(got.config).toContain(`apiBase: "${srv.url}/v1"`);
      expect(got.config).toContain('apiKey: "sk-running"');
      expect(got.config).toContain('contextLength: 1024');
      expect(existsSync(got.argv[at + 1]!)).toBe(false);
    });

    it('refuses a server that wants another key, saying so, and starts nothing', async () => {
      const r = await launch(['opencode', '--url', srv.url, '--api-key', 'sk-wrong'], bin);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('refuses this key');
      expect(r.stdout).toBe('');
    });
  });
});
