// `strata pull` against a stand-in of the Hub on 127.0.0.1 (test/helpers/fake-hub.ts): the file
// picked by quantisation, split parts, an ambiguous pick refused with its choices, a broken-off
// download resumed with a Range request, a wrong sha256 refused and nothing kept, HF_TOKEN sent
// to the Hub and not to the CDN, and a model already pulled served from disk with no request.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../backend/args/args.js';
import { commands } from '../../backend/cli/commands.js';
import { hubAccess, parseHubRef } from '../../common/hub/hub-ref.js';
import { pickByPath, pickByQuant } from '../../common/hub/pick.js';
import { pullProgress } from '../../common/hub/pull-progress.js';
import { pullModel, type PullEvent } from '../../common/hub/pull.js';
import { freePort } from '../../common/net/free-port.js';
import { FakeHub } from '../helpers/fake-hub.js';

/** Distinct bytes per file, so a mixed-up file cannot pass for another. */
const bytes = (n: number, seed: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed * 7) % 251));
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const Q4KM = bytes(120_000, 1);
const Q8 = bytes(200_000, 2);
const Q2 = bytes(60_000, 3);
const SPLIT1 = bytes(90_000, 4);
const SPLIT2 = bytes(70_000, 5);

let hub: FakeHub;
let dir = '';
let env: NodeJS.ProcessEnv = {};

beforeAll(async () => {
  hub = await FakeHub.start();
  hub.addRepo('org/coder-GGUF', [
    { path: 'README.md', body: Buffer.from('# model card'), lfs: false },
    { path: 'coder-Q4_K_M.gguf', body: Q4KM },
    { path: 'coder-Q8_0.gguf', body: Q8 },
    { path: 'coder-Q2_K.gguf', body: Q2 },
    { path: 'mmproj-coder-f16.gguf', body: bytes(1000, 9) },
    { path: 'coder-Q4_0.gguf', body: bytes(5000, 6) },
    { path: 'coder-Q4_0-imat.gguf', body: bytes(5000, 7) },
  ]);
  hub.addRepo('org/big-GGUF', [
    { path: 'F16/big-F16-00001-of-00002.gguf', body: SPLIT1 },
    { path: 'F16/big-F16-00002-of-00002.gguf', body: SPLIT2 },
    { path: 'big-Q3_K_S.gguf', body: bytes(80_000, 8) },
    { path: 'big-Q5_K_M.gguf', body: bytes(100_000, 10) },
  ]);
});
afterAll(async () => { await hub.close(); });
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-pull-'));
  env = { HF_ENDPOINT: hub.endpoint };
  hub.requests.length = 0;
});
afterEach(() => {
  hub.cut = null;
  hub.ignoreRecursive = false;
  hub.wrongSha.clear();
  hub.statusOf.clear();
  rmSync(dir, { recursive: true, force: true });
});

const pull = (ref: string, events: PullEvent[] = [], signal = new AbortController().signal) =>
  pullModel({ ref: parseHubRef(ref), dir, env, signal, onEvent: (e) => events.push(e) });

describe('strata pull: the pick', () => {
  it('picks the quantisation asked for, whatever its case, and downloads it verified', async () => {
    const events: PullEvent[] = [];
    const r = await pull('org/coder-GGUF:q8_0', events);
    expect(r.path).toBe(join(dir, 'org', 'coder-GGUF', 'coder-Q8_0.gguf'));
    expect(readFileSync(r.path).equals(Q8)).toBe(true);
    expect(events.find((e) => e.kind === 'verified')).toEqual({ kind: 'verified', file: 'coder-Q8_0.gguf', sha256: sha(Q8) });
    expect(events.filter((e) => e.kind === 'progress').at(-1)).toMatchObject({ received: Q8.length, total: Q8.length });
    // Only that file came down: one listing, one resolve, one CDN transfer.
    expect(hub.requests.map((q) => `${q.server} ${q.url}`)).toEqual([
      'hub /api/models/org/coder-GGUF/tree/main?recursive=true',
      'hub /org/coder-GGUF/resolve/main/coder-Q8_0.gguf',
      'cdn /cdn/org/coder-GGUF/coder-Q8_0.gguf',
    ]);
  });

  it('without a quantisation takes Q4_K_M and says so; with no Q4_K_M, the smallest', async () => {
    const events: PullEvent[] = [];
    expect((await pull('org/coder-GGUF', events)).path).toMatch(/coder-Q4_K_M\.gguf$/);
    expect(events[0]).toMatchObject({ kind: 'picked', file: 'coder-Q4_K_M.gguf', reason: 'Q4_K_M, the default (no quantisation given)' });
    const big: PullEvent[] = [];
    expect((await pull('org/big-GGUF', big)).path).toMatch(/big-Q3_K_S\.gguf$/);
    expect(big[0]).toMatchObject({ kind: 'picked', reason: expect.stringMatching(/^the smallest model/) });
  });

  it('brings a split model\'s parts together, from a folder a non-recursive Hub lists on request', async () => {
    hub.ignoreRecursive = true;
    const events: PullEvent[] = [];
    const r = await pull('org/big-GGUF:f16', events);
    expect(r.files).toEqual([1, 2].map((i) => join(dir, 'org', 'big-GGUF', 'F16', `big-F16-0000${i}-of-00002.gguf`)));
    expect(r.path).toBe(r.files[0]);
    expect(readFileSync(r.files[0]!).equals(SPLIT1) && readFileSync(r.files[1]!).equals(SPLIT2)).toBe(true);
    expect(events[0]).toMatchObject({ kind: 'picked', parts: 2, bytes: SPLIT1.length + SPLIT2.length });
    expect(hub.requests.filter((q) => q.url.includes('/tree/')).map((q) => q.url)).toEqual([
      '/api/models/org/big-GGUF/tree/main?recursive=true', '/api/models/org/big-GGUF/tree/main/F16?recursive=true',
    ]);
    // Naming the second part by path brings the whole set too.
    rmSync(join(dir, 'org'), { recursive: true });
    expect((await pull('org/big-GGUF/F16/big-F16-00002-of-00002.gguf')).files).toHaveLength(2);
  });

  it('refuses an ambiguous pick, listing the choices, and downloads nothing', async () => {
    await expect(pull('org/coder-GGUF:Q4_0')).rejects.toThrow(
      /org\/coder-GGUF: Q4_0 matches 2 models; name the file \(org\/coder-GGUF\/FILE\.gguf\):\n {2}coder-Q4_0-imat\.gguf .*\n {2}coder-Q4_0\.gguf /,
    );
    expect(hub.requests.filter((q) => q.url.includes('/resolve/'))).toEqual([]);
    // The file named by path settles it.
    expect((await pull('org/coder-GGUF/coder-Q4_0.gguf')).path).toMatch(/coder-Q4_0\.gguf$/);
  });

  it('takes no listed path that would climb out of the models folder', async () => {
    hub.addRepo('org/evil', [{ path: 'a/../../../../evil-Q4_K_M.gguf', body: Q2 }]);
    await expect(pull('org/evil:Q4_K_M')).rejects.toThrow('org/evil has no GGUF model file');
    expect(existsSync(join(dir, '..', 'evil-Q4_K_M.gguf'))).toBe(false);
    expect(hub.requests.filter((q) => q.url.includes('/resolve/'))).toEqual([]);
  });

  it('names what there is when the quantisation is not there', async () => {
    await expect(pull('org/coder-GGUF:IQ2_XS')).rejects.toThrow(/org\/coder-GGUF has no IQ2_XS GGUF; it has:\n {2}coder-Q2_K\.gguf/);
  });

  it('matches a quantisation as a whole word only (Q4_K is not Q4_K_M; a folder counts)', () => {
    const files = ['m-Q4_K_M.gguf', 'm.Q4_K.gguf', 'Q6_K/m-00001-of-00001.gguf'].map((path) => ({ path, size: 1, sha256: null }));
    expect(pickByQuant('o/r', files, 'q4_k').model.path).toBe('m.Q4_K.gguf');
    expect(pickByQuant('o/r', files, 'Q4_K_M').model.path).toBe('m-Q4_K_M.gguf');
    expect(pickByQuant('o/r', files, 'q6_k').model.path).toBe('Q6_K/m-00001-of-00001.gguf');
    expect(() => pickByPath('o/r', [...files, { path: 'mmproj-m.gguf', size: 1, sha256: null }], 'mmproj-m.gguf')).toThrow(/multimodal projector, not a model/);
  });
});

describe('strata pull: the download', () => {
  it('resumes a transfer cut part-way with a Range request and ends with the same bytes', async () => {
    hub.cut = { after: 50_000, times: 1 };
    const events: PullEvent[] = [];
    const r = await pull('org/coder-GGUF:Q8_0', events);
    expect(hub.rangesAsked()).toEqual(['bytes=50000-']);
    expect(events.find((e) => e.kind === 'retry')).toMatchObject({ file: 'coder-Q8_0.gguf', attempt: 2 });
    expect(sha(readFileSync(r.path))).toBe(sha(Q8));
  });

  it('a transfer that keeps breaking fails with what it kept, and the next pull resumes it', async () => {
    hub.cut = { after: 30_000, times: 3 };
    await expect(pull('org/coder-GGUF:Q8_0')).rejects.toThrow(/coder-Q8_0\.gguf: download failed: .*90000 bytes kept in .*coder-Q8_0\.gguf\.part, run it again to resume/);
    const part = join(dir, 'org', 'coder-GGUF', 'coder-Q8_0.gguf.part');
    expect(statSync(part).size).toBe(90_000);
    expect(existsSync(join(dir, 'org', 'coder-GGUF', 'coder-Q8_0.gguf'))).toBe(false);
    hub.requests.length = 0;
    const r = await pull('org/coder-GGUF:Q8_0');
    expect(hub.rangesAsked()).toEqual(['bytes=90000-']);
    expect(readFileSync(r.path).equals(Q8)).toBe(true);
    expect(existsSync(part)).toBe(false);
  });

  it('refuses a file whose sha256 is not the Hub\'s, keeping neither it nor its .part', async () => {
    hub.wrongSha.add('coder-Q2_K.gguf');
    await expect(pull('org/coder-GGUF:Q2_K')).rejects.toThrow(`checksum mismatch: expected sha256 ${'f'.repeat(64)}, got ${sha(Q2)}; the file was removed`);
    expect(readdirSync(join(dir, 'org', 'coder-GGUF')).filter((f) => f.includes('Q2_K'))).toEqual([]);
    // Not remembered as pulled either: the next try asks the Hub again.
    hub.requests.length = 0;
    await expect(pull('org/coder-GGUF:Q2_K')).rejects.toThrow(/checksum mismatch/);
    expect(hub.requests.length).toBeGreaterThan(0);
  });

  it('sends HF_TOKEN to the Hub as a Bearer token, and not to the CDN it redirects to', async () => {
    env = { ...env, HF_TOKEN: 'hf_secret123' };
    await pull('org/coder-GGUF:Q2_K');
    const hubAuth = hub.requests.filter((q) => q.server === 'hub').map((q) => q.headers.authorization);
    expect(hubAuth).toEqual(['Bearer hf_secret123', 'Bearer hf_secret123']);
    expect(hub.requests.filter((q) => q.server === 'cdn').map((q) => q.headers.authorization)).toEqual([undefined]);
  });

  it('says what a 401 and a 404 mean', async () => {
    hub.statusOf.set('org/coder-GGUF', 401);
    await expect(pull('org/coder-GGUF:Q8_0')).rejects.toThrow('org/coder-GGUF: the Hub answered 401: the repository is gated or private; set HF_TOKEN to a token with access');
    await expect(pull('org/nothing-here:Q8_0')).rejects.toThrow(`org/nothing-here: no such repository on ${hub.endpoint} (the Hub answered 404)`);
  });

  it('a model already pulled is answered from disk: no request, even with the Hub down', async () => {
    const first = await pull('org/coder-GGUF:Q4_K_M');
    const parts = await pull('org/big-GGUF:F16');
    hub.requests.length = 0;
    const again = await pull('org/coder-GGUF:q4_k_m');
    expect(again).toEqual({ path: first.path, files: [first.path], alreadyPresent: true, reason: null });
    expect((await pull('org/big-GGUF:F16')).files).toEqual(parts.files);
    expect(hub.requests).toEqual([]);
    const down = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    env = { HF_ENDPOINT: down };
    expect((await pull('org/coder-GGUF:Q4_K_M')).alreadyPresent).toBe(true);
    // A file put there by hand and named by path needs no Hub either.
    mkdirSync(join(dir, 'org', 'other'), { recursive: true });
    writeFileSync(join(dir, 'org', 'other', 'hand.gguf'), 'x');
    expect((await pull('org/other/hand.gguf')).alreadyPresent).toBe(true);
    // Whereas one that is not there says the Hub cannot be reached.
    await expect(pull('org/coder-GGUF:Q8_0')).rejects.toThrow(`cannot reach ${down} to list org/coder-GGUF: ECONNREFUSED`);
  });

  it('a file pulled under another reference is not downloaded again', async () => {
    await pull('org/coder-GGUF');
    hub.requests.length = 0;
    const r = await pull('org/coder-GGUF:Q4_K_M');
    expect(r).toMatchObject({ alreadyPresent: true, reason: 'Q4_K_M' });
    expect(hub.requests.map((q) => q.url)).toEqual(['/api/models/org/coder-GGUF/tree/main?recursive=true']);
    // Now remembered under this reference too: no request at all.
    hub.requests.length = 0;
    await pull('org/coder-GGUF:Q4_K_M');
    expect(hub.requests).toEqual([]);
  });

  it('a pulled file gone from disk is pulled again', async () => {
    const first = await pull('org/coder-GGUF:Q2_K');
    rmSync(first.path);
    hub.requests.length = 0;
    const again = await pull('org/coder-GGUF:Q2_K');
    expect(again.alreadyPresent).toBe(false);
    expect(readFileSync(again.path).equals(Q2)).toBe(true);
  });
});

describe('references and the Hub\'s address', () => {
  it('reads ORG/REPO[:QUANT], ORG/REPO/FILE.gguf and hf:, and refuses what could leave the models folder', () => {
    expect(parseHubRef('hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF:Q4_K_M')).toEqual({ repo: 'Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF', quant: 'Q4_K_M', file: null });
    expect(parseHubRef('o/r/sub/m.gguf')).toEqual({ repo: 'o/r', quant: null, file: 'sub/m.gguf' });
    for (const bad of ['o', 'o/..', '../r', 'o/r/../../x.gguf', 'o/r/README.md', 'o/r:', 'o/r:a/b', 'o/r/.gguf/..']) {
      expect(() => parseHubRef(bad), bad).toThrow(/is not ORG\/REPO\[:QUANT\] or ORG\/REPO\/FILE\.gguf/);
    }
  });

  it('asks MODEL_ENDPOINT, else HF_ENDPOINT, else huggingface.co; plain http only on this machine', () => {
    expect(hubAccess({})).toEqual({ endpoint: 'https://huggingface.co', token: null });
    expect(hubAccess({ HF_ENDPOINT: 'https://mirror.example/', HF_TOKEN: ' t ' })).toEqual({ endpoint: 'https://mirror.example', token: 't' });
    expect(hubAccess({ HF_ENDPOINT: 'https://a.example', MODEL_ENDPOINT: 'https://b.example' }).endpoint).toBe('https://b.example');
    expect(() => hubAccess({ HF_ENDPOINT: 'http://mirror.example' })).toThrow("HF_ENDPOINT 'http://mirror.example' must be https:// (http:// only for 127.0.0.1 or localhost)");
  });
});

describe('progress text', () => {
  it('rewrites one line on a terminal, and writes a line per tenth elsewhere', () => {
    const lines: string[] = [];
    const overwrites: string[] = [];
    const progress = (received: number): PullEvent => ({ kind: 'progress', file: 'm.gguf', part: 1, parts: 1, received, total: 1000 });
    const piped = pullProgress({ line: (t) => lines.push(t) }, () => 0);
    for (let n = 0; n <= 1000; n += 50) piped(progress(n));
    expect(lines.map((l) => l.trim().split('%')[0])).toEqual(['0', '10', '20', '30', '40', '50', '60', '70', '80', '90', '100']);
    // Redrawn at most every 100 ms: 21 events 40 ms apart draw at 0, 120, 240, … 720 ms and at 100% (800 ms).
    let clock = 0;
    const tty = pullProgress({ line: (t) => lines.push(t), overwrite: (t) => overwrites.push(t) }, () => clock);
    for (let n = 0; n <= 1000; n += 50, clock += 40) tty(progress(n));
    expect(overwrites).toHaveLength(8);
    expect(overwrites.at(-1)).toMatch(/^100% {2}1000\.0 KiB|^100% {2}1\.0 KiB/);
  });
});

describe('strata pull (the command)', () => {
  it('prints the local path on stdout, and a usage error for a bad reference', async () => {
    let out = '';
    let err = '';
    const saved = { endpoint: process.env.HF_ENDPOINT, write: process.stdout.write, ewrite: process.stderr.write };
    process.env.HF_ENDPOINT = hub.endpoint;
    process.stdout.write = ((s: string) => { out += s; return true; }) as typeof process.stdout.write;
    process.stderr.write = ((s: string) => { err += s; return true; }) as typeof process.stderr.write;
    try {
      const cmd = await commands.pull!();
      expect(await cmd.run(parseArgs(['org/coder-GGUF:Q2_K', '--dir', dir]))).toBe(0);
      expect(out).toBe(`${join(dir, 'org', 'coder-GGUF', 'coder-Q2_K.gguf')}\n`);
      expect(err).toMatch(/^picked coder-Q2_K\.gguf \(58\.6 KiB\): Q2_K\n/);
      expect(err).toContain(`coder-Q2_K.gguf: sha256 ${sha(Q2)} verified`);
      out = ''; err = '';
      expect(await cmd.run(parseArgs(['org/../x', '--dir', dir]))).toBe(2);
      expect(err).toMatch(/^strata pull: 'org\/\.\.\/x' is not ORG\/REPO/);
      expect(out).toBe('');
    } finally {
      process.stdout.write = saved.write;
      process.stderr.write = saved.ewrite;
      if (saved.endpoint === undefined) delete process.env.HF_ENDPOINT; else process.env.HF_ENDPOINT = saved.endpoint;
    }
  });
});
