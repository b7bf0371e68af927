// GGUF header reading and model identity on hand-built files (no addon, no model).
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GgufFormatError, readGgufHeader } from '../../backend/models/gguf.js';
import { modelIdentity } from '../../backend/models/identity.js';

let dir = '';
beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'strata-gguf-')); });
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

const u32 = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
const u64 = (n: number): Buffer => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
const str = (s: string): Buffer => Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);

/** GGUF v3: a string, a u32, a 100-string array, a small i32 array, one f32 tensor [4, 2]. */
function buildGguf(tail = 0): Buffer {
  const kv = [
    Buffer.concat([str('general.architecture'), u32(8), str('llama')]),
    Buffer.concat([str('llama.block_count'), u32(4), u32(4)]),
    Buffer.concat([str('tokenizer.ggml.tokens'), u32(9), u32(8), u64(100), ...Array.from({ length: 100 }, (_, i) => str(`t${i}`))]),
    Buffer.concat([str('small'), u32(9), u32(5), u64(3), u32(1), u32(0xffffffff), u32(7)]),
  ];
  const tensor = Buffer.concat([str('w'), u32(2), u64(4), u64(2), u32(0), u64(0)]);
  const head = Buffer.concat([Buffer.from('GGUF'), u32(3), u64(1), u64(kv.length), ...kv, tensor]);
  const pad = Buffer.alloc((32 - (head.length % 32)) % 32);
  const data = Buffer.alloc(32 + tail, 1);
  return Buffer.concat([head, pad, data]);
}

describe('readGgufHeader', () => {
  it('reads metadata, summarises long arrays, and finds the aligned data offset', async () => {
    const file = join(dir, 'm.gguf');
    const bytes = buildGguf();
    writeFileSync(file, bytes);
    const h = await readGgufHeader(file);
    expect(h.version).toBe(3);
    expect(h.metadata.get('general.architecture')).toBe('llama');
    expect(h.metadata.get('llama.block_count')).toBe(4);
    expect(h.metadata.get('tokenizer.ggml.tokens')).toEqual({ arrayOf: 'string', length: 100 });
    expect(h.metadata.get('small')).toEqual([1, -1, 7]);
    expect(h.tensors).toEqual([{ name: 'w', shape: [4, 2], type: 0, offset: 0 }]);
    expect(h.dataOffset % 32).toBe(0);
    expect(h.dataOffset).toBe(bytes.length - 32);
  });

  it('rejects files that are not GGUF or are cut short, naming the file', async () => {
    const notGguf = join(dir, 'not.gguf');
    writeFileSync(notGguf, Buffer.alloc(64, 0x41));
    await expect(readGgufHeader(notGguf)).rejects.toThrow(GgufFormatError);
    await expect(readGgufHeader(notGguf)).rejects.toThrow(`${notGguf} is not a GGUF file`);
    const cut = join(dir, 'cut.gguf');
    writeFileSync(cut, buildGguf().subarray(0, 200));
    await expect(readGgufHeader(cut)).rejects.toThrow(/truncated GGUF header/);
  });
});

describe('modelIdentity', () => {
  it('follows the content: same for a copy, different when a weight byte or the metadata changes', async () => {
    const a = join(dir, 'a.gguf');
    writeFileSync(a, buildGguf(3 << 20));
    const copy = join(dir, 'renamed-copy.gguf');
    copyFileSync(a, copy);
    const id = await modelIdentity(a);
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await modelIdentity(copy)).toBe(id);

    const bytes = readFileSync(a);
    const lastByte = Buffer.from(bytes);
    lastByte[lastByte.length - 1] = 2;
    writeFileSync(copy, lastByte);
    expect(await modelIdentity(copy)).not.toBe(id);

    const meta = Buffer.from(bytes);
    meta[meta.indexOf('llama', 40) + 1] = 'X'.charCodeAt(0);  // the architecture string's value
    writeFileSync(copy, meta);
    expect(await modelIdentity(copy)).not.toBe(id);
  });
});
