// The test model the coding-agent tests serve: the hermes-style tiny model (Qwen2.5's tokenizer and
// chat template, random weights) with a training context of 32768 (the agents' prompts are 6K-19K
// tokens), given its own output matrix so that a random answer ends. The generated model's output
// is its input embedding; here it is a copy of it with the rows of the tokens that close a JSON
// string (`"`, `x"`, …) and of the end tokens (<|im_end|>, <|endoftext|>) doubled. A random model
// picks one of those 155 closing tokens about once in a thousand tokens, so a call's string
// argument would run to the output limit, and it never ends an answer; doubled, a string ends
// within a few tokens and an answer within about a hundred. The grammar still decides what is
// valid; the input embedding, which the tokens read back, is untouched (doubled there, they would
// drive the model into loops).
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { ensureTestModel } from './models.js';

const GGUF_ALIGNMENT = 32;
const Q8_0 = 8;
const Q8_0_BLOCK = 34; // an f16 scale and 32 int8 weights
export const AGENT_MODEL_CONTEXT = 32768;

/** The agent tests' model (generated once, beside the tiny model it is made from). */
export async function ensureAgentTestModel(): Promise<string> {
  const base = await ensureTestModel({ vocab: 'qwen2.5-coder', chatTemplate: 'Qwen-Qwen2.5-7B-Instruct', ctxTrain: AGENT_MODEL_CONTEXT });
  const out = base.replace(/\.gguf$/, '-agent-v1.gguf');
  if (existsSync(out)) return out;
  const tmp = `${out}.${process.pid}.tmp`;
  writeAgentModel(base, tmp);
  renameSync(tmp, out);
  return out;
}

interface Header {
  /** Byte offsets in the file as it is: where the key/value section starts, the tensor infos end, the data starts. */
  kvStart: number; infosEnd: number; dataStart: number;
  tensorCount: bigint; kvCount: bigint;
  tokens: string[];
  endTokens: number[];
  tensors: Map<string, { dims: number[]; type: number; offset: number }>;
}

function readHeader(buf: Buffer): Header {
  let at = 0;
  const u32 = (): number => { const v = buf.readUInt32LE(at); at += 4; return v; };
  const u64 = (): bigint => { const v = buf.readBigUInt64LE(at); at += 8; return v; };
  const str = (): string => { const n = Number(u64()); const s = buf.toString('utf8', at, at + n); at += n; return s; };
  if (buf.toString('latin1', 0, 4) !== 'GGUF') throw new Error('not a GGUF file');
  at = 8;
  const tensorCount = u64();
  const kvCount = u64();
  const kvStart = at;
  const scalar: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  let tokens: string[] = [];
  let alignment = GGUF_ALIGNMENT;
  const endTokens: number[] = [];
  for (let i = 0n; i < kvCount; i++) {
    const key = str();
    const type = u32();
    if (type === 8) { str(); continue; }
    if (type === 9) {
      const itemType = u32();
      const n = Number(u64());
      if (itemType === 8) {
        const items = Array.from({ length: n }, str);
        if (key === 'tokenizer.ggml.tokens') tokens = items;
      } else at += scalar[itemType]! * n;
      continue;
    }
    if (key === 'general.alignment') alignment = buf.readUInt32LE(at);
    if (key === 'tokenizer.ggml.eos_token_id' || key === 'tokenizer.ggml.eot_token_id') endTokens.push(buf.readUInt32LE(at));
    at += scalar[type]!;
  }
  if (alignment !== GGUF_ALIGNMENT) throw new Error(`alignment ${alignment} is not handled`);
  const tensors = new Map<string, { dims: number[]; type: number; offset: number }>();
  for (let i = 0n; i < tensorCount; i++) {
    const name = str();
    const dims = Array.from({ length: u32() }, () => Number(u64()));
    const type = u32();
    tensors.set(name, { dims, type, offset: Number(u64()) });
  }
  const infosEnd = at;
  return { kvStart, infosEnd, dataStart: align(infosEnd), tensorCount, kvCount, tokens, endTokens, tensors };
}

const align = (n: number): number => Math.ceil(n / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;

/**
 * A token whose text closes a JSON string: it ends with its only `"`, with no backslash or control
 * character (in byte-level BPE's spelling, bytes 0x00-0x1F are U+0100-U+011F and 0x7F is U+0121).
 */
function closesString(token: string): boolean {
  for (const ch of token) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0x100 && c <= 0x11f) || c === 0x121 || ch === '\\') return false;
  }
  return token.endsWith('"') && token.indexOf('"') === token.length - 1;
}

/** Doubles a q8_0 row: each block's f16 scale gets one more in its exponent. */
function doubleRow(out: Buffer, row: number, rowBytes: number): void {
  for (let b = row * rowBytes; b < (row + 1) * rowBytes; b += Q8_0_BLOCK) {
    const h = out.readUInt16LE(b);
    const exp = (h >> 10) & 0x1f;
    if (exp === 0 || exp >= 30) continue; // zero, subnormal or near the top: left as it is
    out.writeUInt16LE((h & ~(0x1f << 10)) | ((exp + 1) << 10), b);
  }
}

function writeAgentModel(src: string, dst: string): void {
  const buf = readFileSync(src);
  const h = readHeader(buf);
  const embd = h.tensors.get('token_embd.weight');
  if (!embd || embd.type !== Q8_0 || h.tensors.has('output.weight')) throw new Error(`${src}: not the tiny q8_0 model this expects`);
  const [nEmbd, nVocab] = embd.dims as [number, number];
  const rowBytes = (nEmbd / 32) * Q8_0_BLOCK;
  const start = h.dataStart + embd.offset;
  const output = Buffer.from(buf.subarray(start, start + rowBytes * nVocab));
  const boosted = [...h.tokens.keys()].filter((i) => closesString(h.tokens[i]!));
  const ends = new Set([...h.endTokens, h.tokens.indexOf('<|im_end|>'), h.tokens.indexOf('<|endoftext|>')].filter((i) => i >= 0));
  for (const i of [...boosted, ...ends]) doubleRow(output, i, rowBytes);

  const dataLength = buf.length - h.dataStart;
  const outputOffset = align(dataLength);
  const name = Buffer.from('output.weight');
  const info = Buffer.alloc(8 + name.length + 4 + 16 + 4 + 8);
  let at = info.writeBigUInt64LE(BigInt(name.length), 0);
  at += name.copy(info, at);
  at = info.writeUInt32LE(2, at);
  at = info.writeBigUInt64LE(BigInt(nEmbd), at);
  at = info.writeBigUInt64LE(BigInt(nVocab), at);
  at = info.writeUInt32LE(Q8_0, at);
  info.writeBigUInt64LE(BigInt(outputOffset), at);
  const counts = Buffer.alloc(16);
  counts.writeBigUInt64LE(h.tensorCount + 1n, 0);
  counts.writeBigUInt64LE(h.kvCount, 8);
  const head = Buffer.concat([buf.subarray(0, 8), counts, buf.subarray(h.kvStart, h.infosEnd), info]);

  const fd = openSync(dst, 'w');
  try {
    for (const part of [head, Buffer.alloc(align(head.length) - head.length), buf.subarray(h.dataStart), Buffer.alloc(outputOffset - dataLength), output]) {
      writeSync(fd, part);
    }
  } finally {
    closeSync(fd);
  }
}
