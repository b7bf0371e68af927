// Hub models as a user meets them, on the project's generated models: `strata models` lists a
// folder's GGUFs with the roles their metadata gives them, and `strata serve --model
// hf:ORG/REPO:QUANT` pulls the model from a stand-in Hub (test/helpers/fake-hub.ts) before its
// engine loads, serves it, and on the next start serves the pulled file without a request.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalModel } from '../../backend/models/local-models.js';
import type { LoadedModelMeta, ModelsBody } from '../../contract/models.js';
import { FakeHub } from '../helpers/fake-hub.js';
import { ensureTestModel } from '../helpers/models.js';
import { cliPath as cli, spawnServe, type ServeProcess } from '../helpers/serve-process.js';
import { tempDir } from './server-helpers.js';

const tmp = tempDir('strata-hub-it-');
const children: ChildProcess[] = [];
let coder = '';
let starcoder = '';
let embed = '';
let rerank = '';
let llama3 = '';

beforeAll(async () => {
  coder = await ensureTestModel({ vocab: 'qwen2.5-coder', chatTemplate: 'Qwen-Qwen2.5-7B-Instruct' });
  starcoder = await ensureTestModel({ vocab: 'starcoder' });
  embed = await ensureTestModel({ vocab: 'bert-bge', shape: 'embed-bert' });
  rerank = await ensureTestModel({ vocab: 'bert-bge', shape: 'rerank-bert' });
  llama3 = await ensureTestModel({ vocab: 'llama-bpe', chatTemplate: 'meta-llama-Llama-3.2-3B-Instruct' });
});
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  tmp.remove();
});

function strata(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function strataAsync(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => { stdout += b.toString(); });
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('strata models', () => {
  it('lists each GGUF once with its type, architecture, context and roles', () => {
    const dir = join(tmp.dir, 'listed');
    mkdirSync(join(dir, 'org', 'coder'), { recursive: true });
    copyFileSync(coder, join(dir, 'org', 'coder', 'coder-Q8_0.gguf'));
    copyFileSync(starcoder, join(dir, 'starcoder.gguf'));
    copyFileSync(embed, join(dir, 'embed.gguf'));
    copyFileSync(rerank, join(dir, 'rerank.gguf'));
    copyFileSync(llama3, join(dir, 'llama3.gguf'));
    // A split model: its header is in the first part; the second is counted in its size.
    copyFileSync(coder, join(dir, 'split-00001-of-00002.gguf'));
    writeFileSync(join(dir, 'split-00002-of-00002.gguf'), Buffer.alloc(1000));
    writeFileSync(join(dir, 'broken.gguf'), 'not a model');

    const json = strata(['models', '--dir', dir, '--json']);
    expect(json.code).toBe(0);
    const { models } = JSON.parse(json.stdout) as { models: LocalModel[] };
    const by = Object.fromEntries(models.map((m) => [m.file, m]));
    expect(Object.keys(by).sort()).toEqual(['broken.gguf', 'embed.gguf', 'llama3.gguf', 'org/coder/coder-Q8_0.gguf', 'rerank.gguf', 'split-00001-of-00002.gguf', 'starcoder.gguf']);
    // The generator writes every text model as a llama with a 4096-token training context.
    expect(by['org/coder/coder-Q8_0.gguf']).toMatchObject({ fileType: 'Q8_0', architecture: 'llama', contextLength: 4096, roles: ['completion', 'chat'], toolFormat: 'hermes', parts: 1, error: null });
    expect(by['starcoder.gguf']).toMatchObject({ roles: ['completion'], toolFormat: null, error: null });
    expect(by['embed.gguf']).toMatchObject({ architecture: 'bert', contextLength: 512, roles: ['embedding'], toolFormat: null });
    expect(by['rerank.gguf']).toMatchObject({ architecture: 'bert', roles: ['rerank'] });
    expect(by['llama3.gguf']).toMatchObject({ roles: ['chat'], toolFormat: 'llama3' });
    expect(by['split-00001-of-00002.gguf']).toMatchObject({ parts: 2, bytes: readFileSync(coder).length + 1000, roles: ['completion', 'chat'] });
    expect(by['broken.gguf']!.error).toMatch(/is not a GGUF file/);

    const text = strata(['models', '--dir', dir]);
    expect(text.code).toBe(0);
    const row = text.stdout.split('\n').find((l) => l.startsWith('org/coder/coder-Q8_0.gguf'))!;
    expect(row).toMatch(/Q8_0\s+llama\s+4096\s+completion, chat \(tools: hermes\)$/);
    expect(text.stdout).toMatch(/split-00001-of-00002\.gguf \(2 parts\)/);
    expect(text.stdout).toMatch(/broken\.gguf .*unreadable: .*is not a GGUF file/);
  });

  it('says so when the folder holds no model', () => {
    const r = strata(['models', '--dir', join(tmp.dir, 'nothing')]);
    expect(r).toMatchObject({ code: 0, stdout: `no GGUF models in ${join(tmp.dir, 'nothing')}\n` });
  });
});

describe('strata serve --model hf:ORG/REPO:QUANT', () => {
  let hub: FakeHub;
  beforeAll(async () => {
    hub = await FakeHub.start();
    hub.addRepo('org/tiny-GGUF', [
      { path: 'tiny-Q8_0.gguf', body: readFileSync(coder) },
      { path: 'tiny-F16.gguf', body: Buffer.alloc(4096, 7) },
    ]);
  });
  afterAll(async () => { await hub.close(); });

  function serve(env: Record<string, string>): ServeProcess {
    const p = spawnServe(['--model', 'hf:org/tiny-GGUF:q8_0', '--port', '0', '--threads', '2'], {
      ...process.env, STRATA_SESSIONS_DIR: join(tmp.dir, 'sessions'), STRATA_PULL_DIR: join(tmp.dir, 'pulled'), ...env,
    });
    children.push(p.child);
    return p;
  }

  async function stop(child: ChildProcess): Promise<void> {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  it('pulls the model, serves it, and the next start asks the Hub nothing', async () => {
    const first = serve({ HF_ENDPOINT: hub.endpoint });
    const port = await first.port;
    const pulled = join(tmp.dir, 'pulled', 'org', 'tiny-GGUF', 'tiny-Q8_0.gguf');
    expect(readFileSync(pulled).equals(readFileSync(coder))).toBe(true);
    expect(first.out.join('\n')).toMatch(/model tiny-GGUF:q8_0: picked tiny-Q8_0\.gguf .*: q8_0/);
    const models = await (await fetch(`http://127.0.0.1:${port}/v1/models`)).json() as ModelsBody;
    expect(models.data.map((m) => [m.id, m.file, m.state])).toEqual([['tiny-GGUF:q8_0', 'tiny-Q8_0.gguf', 'loaded']]);
    // What `strata models` reads from the header is what the engine found loading it.
    const meta = models.data[0]!.meta as LoadedModelMeta;
    const listed = JSON.parse((await strataAsync(['models', '--dir', join(tmp.dir, 'pulled'), '--json'], {})).stdout) as { models: LocalModel[] };
    expect(listed.models.map((m) => [m.file, m.architecture, m.contextLength, m.roles.includes('completion'), m.toolFormat])).toEqual([
      ['org/tiny-GGUF/tiny-Q8_0.gguf', meta.architecture, meta.n_ctx_train, meta.fim, meta.tool_format],
    ]);
    const chat = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
    });
    expect(chat.status).toBe(200);
    expect(((await chat.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBeGreaterThan(0);
    await stop(first.child);

    hub.requests.length = 0;
    const second = serve({ HF_ENDPOINT: hub.endpoint });
    await second.port;
    expect(second.out.join('\n')).toContain(`model tiny-GGUF:q8_0: hf:org/tiny-GGUF:q8_0 is ${pulled} (already pulled)`);
    expect(hub.requests).toEqual([]);
    await stop(second.child);
  });

  it('refuses a malformed reference before starting, and says why a pull failed', async () => {
    const bad = strata(['serve', '--model', 'hf:org/../x'], { STRATA_PULL_DIR: join(tmp.dir, 'pulled') });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--model hf:org\/\.\.\/x: 'hf:org\/\.\.\/x' is not ORG\/REPO\[:QUANT\]/);
    // Not spawnSync: the stand-in Hub answers from this process's event loop.
    const missing = await strataAsync(['serve', '--model', 'hf:org/tiny-GGUF:Q2_K', '--port', '0'], { HF_ENDPOINT: hub.endpoint, STRATA_PULL_DIR: join(tmp.dir, 'pulled') });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/strata serve: org\/tiny-GGUF has no Q2_K GGUF; it has:\n {2}tiny-F16\.gguf/);
  });
});
