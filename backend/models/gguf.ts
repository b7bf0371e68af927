// Reads a GGUF file's header (metadata and tensor descriptions) without loading weights or the
// native addon. Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (v2, v3).
import { open, type FileHandle } from 'node:fs/promises';

/** Arrays longer than this are summarised (token lists hold 150k strings). */
const MAX_ARRAY_KEPT = 64;
const CHUNK = 1 << 20;

export type GgufScalar = string | number | boolean;
export type GgufValue = GgufScalar | GgufScalar[] | { arrayOf: string; length: number };

export interface GgufTensorInfo { name: string; shape: number[]; type: number; offset: number }

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  /** Byte offset of the tensor data section (aligned). */
  dataOffset: number;
  fileSize: number;
}

export class GgufFormatError extends Error {}

const TYPE_NAMES = ['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'f32', 'bool', 'string', 'array', 'u64', 'i64', 'f64'];
const FIXED_SIZE: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

class Reader {
  private buf = Buffer.alloc(0);
  private bufStart = 0;
  pos = 0;
  constructor(private readonly fh: FileHandle, private readonly size: number, private readonly path: string) {}

  private async ensure(n: number): Promise<void> {
    const have = this.bufStart + this.buf.length - this.pos;
    if (have >= n) return;
    if (this.pos + n > this.size) throw new GgufFormatError(`${this.path}: truncated GGUF header (needs byte ${this.pos + n}, file has ${this.size})`);
    const want = Math.max(n, CHUNK);
    const next = Buffer.alloc(Math.min(want, this.size - this.pos));
    const { bytesRead } = await this.fh.read(next, 0, next.length, this.pos);
    if (bytesRead < n) throw new GgufFormatError(`${this.path}: short read at byte ${this.pos}`);
    this.buf = next.subarray(0, bytesRead);
    this.bufStart = this.pos;
  }

  private at(): number { return this.pos - this.bufStart; }

  async u32(): Promise<number> { await this.ensure(4); const v = this.buf.readUInt32LE(this.at()); this.pos += 4; return v; }

  async u64(): Promise<number> {
    await this.ensure(8);
    const v = this.buf.readBigUInt64LE(this.at());
    this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new GgufFormatError(`${this.path}: count too large at byte ${this.pos - 8}`);
    return Number(v);
  }

  async string(): Promise<string> {
    const len = await this.u64();
    if (len > this.size) throw new GgufFormatError(`${this.path}: string length ${len} beyond the file`);
    await this.ensure(len);
    const s = this.buf.toString('utf8', this.at(), this.at() + len);
    this.pos += len;
    return s;
  }

  /** Skips `n` strings, awaiting I/O only when the buffer runs out (token lists: 150k strings). */
  async skipStrings(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      if (this.bufStart + this.buf.length - this.pos < 8) await this.ensure(8);
      const len = Number(this.buf.readBigUInt64LE(this.at()));
      if (len > this.size) throw new GgufFormatError(`${this.path}: string length ${len} beyond the file`);
      this.pos += 8;
      if (this.bufStart + this.buf.length - this.pos < len) await this.ensure(len);
      this.pos += len;
    }
  }

  async scalar(type: number): Promise<GgufScalar> {
    if (type === 8) return this.string();
    const size = FIXED_SIZE[type];
    if (size === undefined) throw new GgufFormatError(`${this.path}: unknown value type ${type} at byte ${this.pos}`);
    await this.ensure(size);
    const b = this.buf, o = this.at();
    this.pos += size;
    switch (type) {
      case 0: return b.readUInt8(o);
      case 1: return b.readInt8(o);
      case 2: return b.readUInt16LE(o);
      case 3: return b.readInt16LE(o);
      case 4: return b.readUInt32LE(o);
      case 5: return b.readInt32LE(o);
      case 6: return b.readFloatLE(o);
      case 7: return b.readUInt8(o) !== 0;
      case 10: return Number(b.readBigUInt64LE(o));
      case 11: return Number(b.readBigInt64LE(o));
      default: return b.readDoubleLE(o);
    }
  }

  async value(type: number, keepLong = false): Promise<GgufValue> {
    if (type !== 9) return this.scalar(type);
    const itemType = await this.u32();
    const length = await this.u64();
    if (itemType === 9) throw new GgufFormatError(`${this.path}: nested arrays are not supported`);
    const keep = keepLong || length <= MAX_ARRAY_KEPT;
    const items: GgufScalar[] = [];
    const fixed = FIXED_SIZE[itemType];
    if (!keep && fixed !== undefined) {
      this.pos += fixed * length;  // skip without reading
      if (this.pos > this.size) throw new GgufFormatError(`${this.path}: array beyond the file`);
    } else if (!keep && itemType === 8) {
      await this.skipStrings(length);
    } else {
      for (let i = 0; i < length; i++) {
        const v = await this.scalar(itemType);
        if (keep) items.push(v);
      }
    }
    return keep ? items : { arrayOf: TYPE_NAMES[itemType] ?? String(itemType), length };
  }
}

/** `keepArrays`: metadata keys whose arrays are read whole however long (e.g. tokenizer.ggml.tokens). */
export async function readGgufHeader(path: string, opts: { keepArrays?: readonly string[] } = {}): Promise<GgufHeader> {
  const keepLong = new Set(opts.keepArrays ?? []);
  const fh = await open(path, 'r');
  try {
    const fileSize = (await fh.stat()).size;
    const r = new Reader(fh, fileSize, path);
    if (fileSize < 24 || (await r.u32()) !== 0x46554747) throw new GgufFormatError(`${path} is not a GGUF file`);
    const version = await r.u32();
    if (version < 2 || version > 3) throw new GgufFormatError(`${path}: unsupported GGUF version ${version}`);
    const nTensors = await r.u64();
    const nKv = await r.u64();
    const metadata = new Map<string, GgufValue>();
    for (let i = 0; i < nKv; i++) {
      const key = await r.string();
      metadata.set(key, await r.value(await r.u32(), keepLong.has(key)));
    }
    const tensors: GgufTensorInfo[] = [];
    for (let i = 0; i < nTensors; i++) {
      const name = await r.string();
      const nDims = await r.u32();
      if (nDims > 4) throw new GgufFormatError(`${path}: tensor ${name} has ${nDims} dimensions`);
      const shape: number[] = [];
      for (let d = 0; d < nDims; d++) shape.push(await r.u64());
      tensors.push({ name, shape, type: await r.u32(), offset: await r.u64() });
    }
    const alignment = Number(metadata.get('general.alignment') ?? 32) || 32;
    const dataOffset = Math.ceil(r.pos / alignment) * alignment;
    return { version, metadata, tensors, dataOffset, fileSize };
  } finally {
    await fh.close();
  }
}
