// The win32-x64 suite (npm run test:win): run by the Windows Node under Wine on the MinGW build
// of the engine (test/emulated/win/run.mjs bundles this file and starts it). Node's own test
// runner, not vitest: vitest's worker pool cannot reach a process inside Wine.
//   the addon loads (Node-API through node.exe's import library) with its CPU library;
//   the engine process starts (child_process.fork, IPC over a named pipe), answers, is killed,
//   restarts on a new epoch and answers the same;
//   a session saved to a path with a drive letter and backslashes loads in a fresh process and
//   continues identically.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { addonPath, loadAddon } from '../../../backend/addon/loader.js';
import type { EngineClient, EngineRequest, EngineStatus, RequestEvent } from '../../../backend/engine/client.js';
import { createProcessEngineClient } from '../../../backend/engine/process-client.js';
import { ensureTestModel } from '../../helpers/models.js';
import { SERVE_ENGINE_TIMEOUTS } from '../../helpers/engine-timeouts.js';

type Done = Extract<RequestEvent, { type: 'done' }>;
interface Run { text: string; ids: number[]; dones: Done[]; events: RequestEvent[] }

async function run(req: EngineRequest, onEvent?: (e: RequestEvent) => void): Promise<Run> {
  const out: Run = { text: '', ids: [], dones: [], events: [] };
  for await (const ev of req.events) {
    out.events.push(ev);
    onEvent?.(ev);
    if (ev.type === 'tokens') { out.text += ev.text; out.ids.push(...ev.ids); }
    if (ev.type === 'done') { out.dones.push(ev); out.text += ev.text; }
  }
  return out;
}

function nextStatus(c: EngineClient, pred: (s: EngineStatus) => boolean, what: string): Promise<EngineStatus> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`timed out waiting for ${what}: ${JSON.stringify(c.status())}`)); }, 120_000);
    const off = c.onStatus((s) => { if (pred(s)) { clearTimeout(timer); off(); resolve(s); } });
  });
}

const logs: string[] = [];
const clients: EngineClient[] = [];
let model = '';
let dir = '';

function client(): EngineClient {
  const c = createProcessEngineClient({
    replica: 0, config: { model, slots: 2, batch: 32, threads: 2 },
    restart: { minDelayMs: 50, maxDelayMs: 1000 }, ...SERVE_ENGINE_TIMEOUTS,
    log: (line) => logs.push(line),
  });
  clients.push(c);
  return c;
}

before(async () => {
  model = await ensureTestModel({});
  dir = mkdtempSync(join(tmpdir(), 'strata-win-'));
});
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  rmSync(dir, { recursive: true, force: true });
  if (process.exitCode) process.stderr.write(`engine log:\n${logs.slice(-40).join('\n')}\n`);
});

describe('win32-x64 under Wine', () => {
  it('runs on the Windows Node with the win32-x64 build of the engine', () => {
    assert.equal(process.platform, 'win32');
    assert.equal(process.arch, 'x64');
    const manifest = JSON.parse(readFileSync(join(dirname(addonPath()), 'build-manifest.json'), 'utf8')) as { platform: string };
    assert.equal(manifest.platform, 'win32-x64');
    // Only Windows libraries beside the addon: no .so slipped into the package.
    assert.deepEqual(readdirSync(dirname(addonPath())).filter((f) => f.endsWith('.so')), []);
  });

  it('loads the addon and the CPU library ggml scores best, from a path with a drive letter', () => {
    const addon = loadAddon();
    const variants = addon.cpuVariants();
    assert.ok(variants.length > 0, 'no CPU library listed');
    assert.ok(variants[0]!.score > 0, `best CPU library scores 0: ${JSON.stringify(variants)}`);
    const report = addon.loadBackends();
    assert.equal(report.cpuVariant, variants[0]!.name);
    const cpu = report.loaded.find((b) => b.name === 'CPU');
    assert.ok(cpu, `no CPU backend loaded: ${JSON.stringify(report)}`);
    assert.match(cpu.path, /^[A-Za-z]:\\/);
    assert.match(cpu.path, /ggml-cpu[^/\\]*\.dll$/);
  });

  describe('the engine process', () => {
    let c: EngineClient;
    let prompt: number[] = [];
    let baseline: Run;

    before(async () => {
      c = client();
      await c.start();
      prompt = await c.tokenize('The quick brown fox jumps over the lazy dog because', true);
    });

    it('starts and answers a greedy request, the same twice', async () => {
      baseline = await run(c.generate({ prompt, maxTokens: 12, ignoreEos: true }));
      assert.equal(baseline.dones.length, 1);
      assert.equal(baseline.dones[0]!.finish, 'length');
      assert.equal(baseline.ids.length, 12);
      assert.ok(baseline.text.length > 0);
      const again = await run(c.generate({ prompt, maxTokens: 12, ignoreEos: true }));
      assert.equal(again.text, baseline.text);
    });

    it('killed mid-request: the request ends once with engineDied, the restart answers the same on a new epoch', async () => {
      const before = c.status();
      let sawToken!: () => void;
      const tokenSeen = new Promise<void>((r) => { sawToken = r; });
      const inFlight = run(c.generate({ prompt, maxTokens: 100_000, ignoreEos: true }), (e) => { if (e.type === 'tokens') sawToken(); });
      await tokenSeen;
      const ready = nextStatus(c, (s) => s.state === 'ready' && s.epoch === before.epoch + 1, 'the restart');
      process.kill(before.pid!, 'SIGKILL');
      const ended = await inFlight;
      assert.equal(ended.dones.length, 1);
      assert.equal(ended.dones[0]!.finish, 'error');
      assert.equal(ended.dones[0]!.engineDied, true);
      const s = await ready;
      assert.notEqual(s.pid, before.pid);
      assert.equal(s.restarts, before.restarts + 1);
      const afterRestart = await run(c.generate({ prompt, maxTokens: 12, ignoreEos: true }));
      assert.equal(afterRestart.text, baseline.text);
    });

    it('saves a session to a Windows path and a fresh process continues it identically', async () => {
      const path = join(dir, 'sub folder', '..', 'conversation.session');
      assert.match(path, /^[A-Za-z]:\\.*\\conversation\.session$/);
      // A prompt of its own: no slot holds a longer run of it from the tests before.
      const opening = await c.tokenize('A session saved on Windows, under a folder with a drive letter', true);
      const first = await run(c.generate({ prompt: opening, maxTokens: 8, ignoreEos: true }));
      const conversation = [...opening, ...first.ids];
      const saved = await c.saveSession(path, conversation, 'win-test', '{"note":"kept"}');
      assert.ok(saved.tokens > 0);
      assert.ok(statSync(path).size > 0);
      assert.deepEqual(readdirSync(dir).filter((f) => f.includes('.tmp-')), [], 'temp file left behind');
      // Saved again over the existing file (a replace, which Windows' rename refuses).
      await c.saveSession(path, conversation, 'win-test', '{"note":"kept"}');
      const followUp = [...conversation, ...(await c.tokenize(' and then', false))];
      const here = await run(c.generate({ prompt: followUp, maxTokens: 10, ignoreEos: true }));

      const fresh = client();
      await fresh.start();
      assert.notEqual(fresh.status().pid, c.status().pid);
      const loaded = await fresh.loadSession(path, 'win-test');
      assert.deepEqual(loaded.tokenIds, conversation.slice(0, loaded.tokenIds.length));
      assert.equal(loaded.meta, '{"note":"kept"}');
      const there = await run(fresh.generate({ prompt: followUp, maxTokens: 10, ignoreEos: true }));
      assert.equal(there.text, here.text);
      await fresh.close();
    });
  });
});
