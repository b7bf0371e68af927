// A stored response's KV file in the response store: it counts toward the byte bound, goes with its
// response (delete, eviction, expiry), is dropped when its response is gone or it alone would not
// fit, is found again after a restart, and one whose response is gone is removed at start; the
// engine's leftovers of an interrupted write (a dead process's temp file) too.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResponseObject } from '../../contract/responses.js';
import { ResponseStore, type StoredResponse } from '../../backend/responses/response-store.js';

const dirs: string[] = [];
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'strata-rkv-')); dirs.push(d); return d; };
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

function record(id: string): StoredResponse {
  const response = { id, object: 'response', status: 'completed', output: [], usage: null } as unknown as ResponseObject;
  return { response, items: [{ type: 'message', role: 'user', content: 'x' }], tokens: { ids: [1, 2, 3], model: 'm', rendering: '{}' } };
}
/** What the engine does: writes the file, then the store is told its size. */
async function writeKv(s: ResponseStore, id: string, bytes: number): Promise<boolean> {
  writeFileSync(s.kvPath(id), Buffer.alloc(bytes));
  return s.attachKv(id, bytes);
}

describe('a response\'s KV file in the store', () => {
  it('counts toward the bytes, goes with its response, and is found again after a restart', async () => {
    const dir = tempDir();
    const s = new ResponseStore(dir, { maxCount: 10, maxBytes: 1 << 20, ttlMs: 60_000 });
    await s.put(record('resp_a'));
    const json = s.size().bytes;
    expect(await writeKv(s, 'resp_a', 5000)).toBe(true);
    expect(s.size().bytes).toBe(json + 5000);
    expect(await s.kvOf('resp_a')).toBe(join(dir, 'resp_a.session'));
    const b = new ResponseStore(dir, { maxCount: 10, maxBytes: 1 << 20, ttlMs: 60_000 });
    expect(await b.kvOf('resp_a')).toBe(join(dir, 'resp_a.session'));
    expect(b.size().bytes).toBe(json + 5000);
    await b.delete('resp_a');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('the least recently used response goes with its KV when the bytes are over; a KV that alone does not fit is dropped', async () => {
    const dir = tempDir();
    let t = 0;
    const s = new ResponseStore(dir, { maxCount: 10, maxBytes: 20_000, ttlMs: 60_000 }, () => t);
    await s.put(record('resp_a'));
    await writeKv(s, 'resp_a', 9000);
    t += 1;
    await s.put(record('resp_b'));
    await writeKv(s, 'resp_b', 9000);
    t += 1;
    await s.put(record('resp_c'));
    expect(await writeKv(s, 'resp_c', 9000)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['resp_b.json', 'resp_b.session', 'resp_c.json', 'resp_c.session']);
    expect(await writeKv(s, 'resp_b', 30_000)).toBe(false);
    expect(existsSync(join(dir, 'resp_b.session'))).toBe(false);
    expect(await s.kvOf('resp_b')).toBeNull();
    expect(await s.get('resp_b')).not.toBeNull();
    // Its response deleted while the engine wrote it: the file goes.
    await s.delete('resp_c');
    expect(await writeKv(s, 'resp_c', 10)).toBe(false);
    expect(readdirSync(dir)).toEqual(['resp_b.json']);
    // Expired: both files go.
    await writeKv(s, 'resp_b', 100);
    t += 60_001;
    expect(await s.get('resp_b')).toBeNull();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('at start: a KV file without its response and a dead writer\'s temp file are removed', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'resp_gone.session'), 'kv');
    writeFileSync(join(dir, 'resp_a.session.tmp-999999999-0'), 'half');
    const s = new ResponseStore(dir, { maxCount: 10, maxBytes: 1 << 20, ttlMs: 60_000 });
    expect(s.size().count).toBe(0);
    expect(await s.get('resp_gone')).toBeNull();
    expect(readdirSync(dir)).toEqual([]);
  });
});
