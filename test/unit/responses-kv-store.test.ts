// A stored response's KV file in the response store: its own byte bound (the least recently used
// response's file goes first, its response stays), it goes with its response (delete, eviction,
// expiry), a chain keeps one file (a follow-up's replaces the one it continued, which then serves
// the earlier response too), a file whose response is gone or that alone would not fit is dropped,
// files are found again after a restart, and at start a file whose response is gone and a dead
// writer's temp file are removed.
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResponseObject } from '../../contract/responses.js';
import { ResponseStore, type ResponseStoreLimits, type StoredResponse } from '../../backend/responses/response-store.js';

const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'strata-rkv-')); dirs.push(d); return d; };
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const LIMITS: ResponseStoreLimits = { maxCount: 10, maxBytes: 1 << 20, ttlMs: 60_000, maxKvBytes: 1 << 20 };

function record(id: string): StoredResponse {
  const response = { id, object: 'response', status: 'completed', output: [], usage: null } as unknown as ResponseObject;
  return { response, items: [{ type: 'message', role: 'user', content: 'x' }], tokens: { ids: [1, 2, 3], model: 'm', rendering: '{}' } };
}
/** What the engine does: writes the file, then the store is told its size. */
async function writeKv(s: ResponseStore, id: string, bytes: number, previous: string | null = null): Promise<boolean> {
  writeFileSync(s.kvPath(id), Buffer.alloc(bytes));
  return s.attachKv(id, bytes, previous);
}
const files = (dir: string) => readdirSync(dir).sort();

describe('a response\'s KV file in the store', () => {
  it('has its own bytes, goes with its response, and is found again after a restart', async () => {
    const dir = tempDir();
    const s = new ResponseStore(dir, LIMITS);
    await s.put(record('resp_a'));
    const json = s.size().bytes;
    expect(await writeKv(s, 'resp_a', 5000)).toBe(true);
    expect(s.size()).toEqual({ count: 1, bytes: json, kvBytes: 5000 });
    expect(await s.kvOf('resp_a')).toBe(join(dir, 'resp_a.session'));
    const b = new ResponseStore(dir, LIMITS);
    expect(await b.kvOf('resp_a')).toBe(join(dir, 'resp_a.session'));
    expect(b.size()).toEqual({ count: 1, bytes: json, kvBytes: 5000 });
    await b.delete('resp_a');
    expect(files(dir)).toEqual([]);
  });

  it('a chain keeps one file: the follow-up\'s replaces the one it continued and serves it too', async () => {
    const dir = tempDir();
    const s = new ResponseStore(dir, LIMITS);
    for (const id of ['resp_a', 'resp_b', 'resp_c']) await s.put(record(id));
    await writeKv(s, 'resp_a', 100);
    await writeKv(s, 'resp_b', 200, 'resp_a');
    await writeKv(s, 'resp_c', 300, 'resp_b');
    expect(files(dir)).toEqual(['resp_a.json', 'resp_a.session', 'resp_b.json', 'resp_b.session', 'resp_c.json', 'resp_c.session']);
    expect(s.size().kvBytes).toBe(300);
    for (const id of ['resp_a', 'resp_b', 'resp_c']) expect(await s.kvOf(id)).toBe(join(dir, 'resp_c.session'));
    // The earlier responses' files are links to it, so a restart knows; the bytes are counted once.
    expect(readlinkSync(join(dir, 'resp_a.session'))).toBe('resp_b.session');
    const again = new ResponseStore(dir, LIMITS);
    for (const id of ['resp_a', 'resp_b', 'resp_c']) expect(await again.kvOf(id)).toBe(join(dir, 'resp_c.session'));
    expect(again.size().kvBytes).toBe(300);
    // The newest response deleted: the earlier ones have no KV file left; a restart removes their links.
    await again.delete('resp_c');
    expect(await again.kvOf('resp_a')).toBeNull();
    expect(await new ResponseStore(dir, LIMITS).get('resp_a')).not.toBeNull();
    expect(files(dir)).toEqual(['resp_a.json', 'resp_b.json']);
  });

  it('over the KV bound the least recently used response\'s file goes (the response stays); one that alone does not fit, or whose response is gone, is dropped', async () => {
    const dir = tempDir();
    let t = 0;
    const s = new ResponseStore(dir, { ...LIMITS, maxKvBytes: 20_000 }, () => t);
    for (const id of ['resp_a', 'resp_b', 'resp_c']) { await s.put(record(id)); t += 1; }
    await writeKv(s, 'resp_a', 9000);
    await writeKv(s, 'resp_b', 9000);
    expect(await writeKv(s, 'resp_c', 9000)).toBe(true);
    expect(files(dir)).toEqual(['resp_a.json', 'resp_b.json', 'resp_b.session', 'resp_c.json', 'resp_c.session']);
    expect(await s.get('resp_a')).not.toBeNull();
    expect(await writeKv(s, 'resp_a', 30_000)).toBe(false);
    expect(existsSync(join(dir, 'resp_a.session'))).toBe(false);
    expect(await s.kvOf('resp_a')).toBeNull();
    await s.delete('resp_c');
    expect(await writeKv(s, 'resp_c', 10)).toBe(false);
    expect(files(dir)).toEqual(['resp_a.json', 'resp_b.json', 'resp_b.session']);
    // Expired: both files go.
    t += 60_001;
    expect(await s.get('resp_b')).toBeNull();
    expect(await s.get('resp_a')).toBeNull();
    expect(files(dir)).toEqual([]);
  });

  it('--responses-kv-mib 0 keeps none', async () => {
    const s = new ResponseStore(tempDir(), { ...LIMITS, maxKvBytes: 0 });
    expect(s.keepsKv).toBe(false);
    await s.put(record('resp_a'));
    expect(await writeKv(s, 'resp_a', 1)).toBe(false);
    expect(files(s.dir)).toEqual(['resp_a.json']);
  });

  it('at start: a KV file without its response and a dead writer\'s temp file are removed', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'resp_gone.session'), 'kv');
    writeFileSync(join(dir, 'resp_a.session.tmp-999999999-0'), 'half');
    const s = new ResponseStore(dir, LIMITS);
    expect(await s.get('resp_gone')).toBeNull();
    expect(files(dir)).toEqual([]);
  });
});
