// Session files taken apart and put together again in tests (layout: native/src/session_file.h):
// another model's identity, a damaged description, or the format-1 layout of older versions.
// Format 2's XXH3 checksum is not recomputed here (a rebuilt format-2 file fails the engine's
// check; the server refuses such files before any engine sees them); format 1's FNV-1a is.

export interface SessionFileParts {
  version: 1 | 2;
  /** Format 2 only. */
  meta: string;
  identity: string;
  description: string;
  /** n_params (u64) and n_vocab (u32), kept as bytes. */
  sizes: Buffer;
  tokens: Buffer;
  state: Buffer;
}

export function parseSessionFile(buf: Buffer): SessionFileParts {
  let at = 8;
  const u32 = () => { const v = buf.readUInt32LE(at); at += 4; return v; };
  const bytes = (n: number) => { const b = buf.subarray(at, at + n); at += n; return b; };
  const version = u32() as 1 | 2;
  const meta = version === 2 ? bytes(u32()).toString('utf8') : '';
  const identity = bytes(u32()).toString('utf8');
  const description = bytes(u32()).toString('utf8');
  const sizes = bytes(12);
  const tokens = bytes(u32() * 4);
  const n = Number(buf.readBigUInt64LE(at)); at += 8;
  return { version, meta, identity, description, sizes, tokens, state: bytes(n) };
}

function fnv1a64(b: Buffer): bigint {
  let h = 0xcbf29ce484222325n;
  for (const x of b) h = BigInt.asUintN(64, (h ^ BigInt(x)) * 0x100000001b3n);
  return h;
}

export function buildSessionFile(p: SessionFileParts): Buffer {
  const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
  const str = (s: string) => Buffer.concat([u32(Buffer.byteLength(s)), Buffer.from(s)]);
  const n = Buffer.alloc(8);
  n.writeBigUInt64LE(BigInt(p.state.length));
  const body = Buffer.concat([
    Buffer.from('STRATASN', 'latin1'), u32(p.version), ...(p.version === 2 ? [str(p.meta)] : []),
    str(p.identity), str(p.description), p.sizes, u32(p.tokens.length / 4), p.tokens, n, p.state,
  ]);
  const sum = Buffer.alloc(8);
  if (p.version === 1) sum.writeBigUInt64LE(fnv1a64(body));
  return Buffer.concat([body, sum]);
}
