// `strata serve` as a user runs it: the bundled CLI in its own process. It prints where it
// listens (--port 0 picks a free port), serves, and stops cleanly on SIGTERM and SIGINT
// (exit 0, its engine processes gone). Without --model it serves the demo model and says so.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { cliPath as cli, spawnServe, type ServeProcess } from '../helpers/serve-process.js';
import { json, stream, tempDir, until } from './server-helpers.js';
import { spawnNodeScript } from '../../extension/server/node-process.js';
import { processAlive } from '../../common/os/process.js';

const children: ChildProcess[] = [];
const tmp = tempDir('strata-cli-it-');
let model = '';

beforeAll(async () => { model = await ensureTestModel({}); });
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  tmp.remove();
});

function serve(args: string[], env: Record<string, string> = {}, detached = false): ServeProcess {
  const p = spawnServe(args, { ...process.env, STRATA_SESSIONS_DIR: join(tmp.dir, 'sessions'), ...env }, detached);
  children.push(p.child);
  return p;
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

describe('strata serve (bundled CLI)', () => {
  it('is built', () => { expect(existsSync(cli)).toBe(true); });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`serves on --port 0 and exits 0 on ${signal} with nothing left running`, async () => {
      const p = serve(['--model', model, '--port', '0', '--slots', '1', '--threads', '2', '--ctx', '512']);
      const port = await p.port;
      await until('health 200', () => json(port, 'GET', '/health'), (h) => h.status === 200, 60_000);
      const res = await json(port, 'POST', '/v1/completions', { prompt: 'Hi', max_tokens: 2, temperature: 0 });
      expect(res.status).toBe(200);
      const m = await json(port, 'GET', '/metrics');
      const enginePid = m.body.engines[0].pid as number;
      expect(alive(enginePid)).toBe(true);
      p.child.kill(signal);
      expect(await p.exit).toBe(0);
      expect(alive(enginePid)).toBe(false);
      expect(p.out.join('\n')).toMatch(/stopped/);
    });
  }

  // How the extension stops its server on Windows (node-process.ts), run here: 'SIGTERM' closes the
  // IPC channel and the server stops as on SIGTERM; 'SIGKILL' ends it (taskkill, or the process
  // alone where there is none, as here) and its engine host leaves when its parent is gone.
  for (const how of ['SIGTERM', 'SIGKILL'] as const) {
    it(`the Windows way, ${how}: ${how === 'SIGTERM' ? 'the control channel\'s close stops it cleanly (exit 0)' : 'ended at once, its engine host gone after it'}`, async () => {
      const env = { STRATA_SESSIONS_DIR: join(tmp.dir, 'sessions'), SystemRoot: join(tmp.dir, 'no-windows') };
      const h = spawnNodeScript(cli, ['serve', '--model', model, '--port', '0', '--slots', '1', '--threads', '2', '--ctx', '512'], env, 'win32');
      const lines: string[] = [];
      const exit = new Promise<[number | null, string | null]>((resolve) => h.onExit((code, signal) => resolve([code, signal])));
      const port = await new Promise<number>((resolve) => h.onOutput((l) => {
        lines.push(l);
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(l);
        if (m) resolve(Number(m[1]));
      }));
      const enginePid = (await json(port, 'GET', '/metrics')).body.engines[0].pid as number;
      expect(alive(enginePid)).toBe(true);
      h.kill(how);
      expect(await exit).toEqual(how === 'SIGTERM' ? [0, null] : [null, 'SIGKILL']);
      if (how === 'SIGTERM') {
        expect(lines.join('\n')).toMatch(/SIGTERM: shutting down/);
        expect(lines.join('\n')).toMatch(/stopped/);
        expect(alive(enginePid)).toBe(false);
      } else {
        await until('the engine host gone', () => processAlive(enginePid), (a) => !a, 10_000); // a zombie nothing reaps counts as gone
      }
    });
  }

  it('Ctrl+C (SIGINT to the whole process group) ends a stream in flight with a shutdown error, no engine crash, no restart', async () => {
    const p = serve(['--model', model, '--port', '0', '--slots', '1', '--threads', '2', '--ctx', '2048'], {}, true);
    const port = await p.port;
    const enginePid = (await json(port, 'GET', '/metrics')).body.engines[0].pid as number;
    const run = stream(port, '/v1/completions', { prompt: 'Count:', max_tokens: 2000, ignore_eos: true, temperature: 0 });
    await run.pieces(1);
    process.kill(-p.child.pid!, 'SIGINT'); // the terminal signals the foreground group: server and engine host
    const end = await run.end;
    expect(end.text.length).toBeGreaterThan(0);
    expect(end.how).toBe('error');
    expect(end.error).toMatchObject({ code: 'shutting_down', message: expect.stringMatching(/shutting down/) });
    expect(await p.exit).toBe(0);
    expect(alive(enginePid)).toBe(false);
    const out = p.out.join('\n');
    expect(out).not.toMatch(/engine process exited|requests failed|restarting in|bookkeeping/);
    expect(out).toMatch(/SIGINT: shutting down/);
    expect(out).toMatch(/stopped/);
  });

  it('a file that is not a model: the load error once, exit 1, never "listening"', async () => {
    const bad = join(tmp.dir, 'not-a-model.gguf');
    writeFileSync(bad, 'these bytes are not a GGUF file');
    const p = serve(['--model', bad, '--port', '0']);
    expect(await p.exit).toBe(1);
    const out = p.out.join('\n');
    expect(out).not.toMatch(/listening on/);
    expect(out).toMatch(/loading .*not-a-model\.gguf on http:\/\/127\.0\.0\.1:\d+/);
    expect(out.match(/is not a GGUF file/g)).toHaveLength(1);
  });

  it('says "listening" only once the model is loaded, and the engine line names the parameter count', async () => {
    const p = serve(['--model', model, '--port', '0', '--slots', '1', '--ctx', '256']);
    const port = await p.port;
    // By the time it says "listening", it serves.
    expect((await json(port, 'GET', '/health')).status).toBe(200);
    const out = p.out.join('\n');
    expect(out.indexOf('model ready')).toBeLessThan(out.indexOf('listening on'));
    expect(out).toMatch(/engine ready \(replica 0, epoch 1\): llama \d+(\.\d)?M Q8_0/);
    expect(out).not.toMatch(/\?B/);
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
  });

  it('exits 0 with nothing left running when its --parent-pid process is killed', async () => {
    const parent = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    children.push(parent);
    const p = serve(['--model', model, '--port', '0', '--slots', '1', '--ctx', '256', '--parent-pid', String(parent.pid)]);
    const port = await p.port;
    await until('health 200', () => json(port, 'GET', '/health'), (h) => h.status === 200, 60_000);
    const enginePid = (await json(port, 'GET', '/metrics')).body.engines[0].pid as number;
    expect(p.child.exitCode).toBeNull();
    parent.kill('SIGKILL');
    expect(await p.exit).toBe(0);
    expect(alive(enginePid)).toBe(false);
    expect(p.out.join('\n')).toMatch(/parent process \d+ exited/);
  });

  it('serves a random-weight demo model without --model and says so', async () => {
    // The demo model is the generated tiny starcoder model (FIM tokens, so infill works too).
    const p = serve(['--port', '0', '--slots', '1', '--ctx', '256', '--log-format', 'json']);
    const port = await p.port;
    await until('health 200', () => json(port, 'GET', '/health'), (h) => h.status === 200, 120_000);
    const health = await json(port, 'GET', '/health');
    expect(health.body.demo).toBe(true);
    const models = await json(port, 'GET', '/v1/models');
    expect(models.body.data[0].meta.file).toBe(basename(await ensureTestModel({ vocab: 'starcoder' })));
    const infill = await json(port, 'POST', '/v1/infill', { input_prefix: 'def f(', input_suffix: ')\n', max_tokens: 4 });
    expect(infill.status).toBe(200);
    const warn = p.out.map((l) => { try { return JSON.parse(l); } catch { return null; } }).find((l) => l?.level === 'warn' && /DEMO/.test(l.msg));
    expect(warn).toBeTruthy();
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
  });

  it('serves several models given by repeated --model, each under its name; a missing one is refused before anything starts', async () => {
    const coder = await ensureTestModel({ vocab: 'starcoder' });
    const p = serve(['--model', model, '--model', `coder=${coder}`, '--port', '0', '--slots', '1', '--ctx', '256', '--models-max', '1']);
    const port = await p.port;
    const list = await json(port, 'GET', '/v1/models');
    expect(list.body.data.map((m: any) => [m.id, m.state])).toEqual([[basename(model).replace(/\.gguf$/, ''), 'loaded'], ['coder', 'unloaded']]);
    const infill = await json(port, 'POST', '/v1/infill', { model: 'coder', input_prefix: 'def f(', input_suffix: ')\n', max_tokens: 4 });
    expect(infill.status).toBe(200);
    expect(infill.body.model).toBe('coder');
    expect((await json(port, 'GET', '/v1/models')).body.data.map((m: any) => m.state)).toEqual(['unloaded', 'loaded']);
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
    const missing = serve(['--model', model, '--model', join(tmp.dir, 'nope.gguf'), '--port', '0']);
    expect(await missing.exit).toBe(1);
    expect(missing.out.join('\n')).toMatch(/model file not found: .*nope\.gguf \(model 'nope'\)/);
  });

  it('refuses to listen beyond loopback without an API key', async () => {
    const p = serve(['--model', model, '--host', '0.0.0.0', '--port', '0']);
    expect(await p.exit).toBe(2);
    expect(p.out.join('\n')).toMatch(/without an API key/);
  });
});
