// Tokens that are not valid UTF-8 on their own, read from the model's vocabulary: the bench bans
// them (logit_bias false) on every server it compares. llama-server 0.4.0 runs every answer,
// raw /completion and /infill included, through its PEG chat parser (server-queue.cpp ->
// update_chat_msg -> common_chat_peg_parse), which fails on malformed UTF-8 with HTTP 500 "The
// model produced output that does not match the expected ... format". Random-weight models emit
// such byte fragments often; no request field turns the parser off. Text made only of tokens
// that are valid UTF-8 alone is valid UTF-8, so with these banned both servers finish every
// request, and both pay the same (small) sampling cost.
import { readGgufHeader } from '../models/gguf.js';

// Token types (llama.cpp's llama_token_type): only normal and byte tokens carry text pieces.
const NORMAL = 1;
const BYTE = 6;

/** GPT-2's byte-level BPE alphabet: printable bytes stand for themselves, the rest are shifted past U+0100. */
function gpt2ByteDecoder(): Map<string, number> {
  const bytes: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bytes.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bytes.push(b);
  for (let b = 0xae; b <= 0xff; b++) bytes.push(b);
  const chars = [...bytes];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) { bytes.push(b); chars.push(256 + n); n++; }
  }
  return new Map(bytes.map((b, i) => [String.fromCodePoint(chars[i]!), b]));
}

const strict = new TextDecoder('utf-8', { fatal: true });

function validUtf8(bytes: Uint8Array): boolean {
  try { strict.decode(bytes); return true; } catch { return false; }
}

/**
 * Ids of the vocabulary's tokens whose bytes are not valid UTF-8 alone: byte-level BPE pieces
 * (tokenizer.ggml.model gpt2) and SentencePiece byte tokens <0xNN> of 0x80 and up (llama).
 * null for other tokenizers (nothing known to ban).
 */
export function invalidUtf8Tokens(model: string, tokens: readonly string[], types: readonly number[] | null): number[] | null {
  const out: number[] = [];
  if (model === 'gpt2') {
    const decode = gpt2ByteDecoder();
    tokens.forEach((t, id) => {
      if (types && types[id] !== NORMAL && types[id] !== BYTE) return;
      const bytes: number[] = [];
      for (const ch of t) {
        const b = decode.get(ch);
        if (b === undefined) return; // not a byte-level piece (an added token's literal text)
        bytes.push(b);
      }
      if (!validUtf8(Uint8Array.from(bytes))) out.push(id);
    });
    return out;
  }
  if (model === 'llama') {
    tokens.forEach((t, id) => {
      const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(t);
      if (m && (types === null || types[id] === BYTE) && Number.parseInt(m[1]!, 16) >= 0x80) out.push(id);
    });
    return out;
  }
  return null;
}

/** invalidUtf8Tokens of a GGUF file. */
export async function invalidUtf8TokensOf(path: string): Promise<number[] | null> {
  const h = await readGgufHeader(path, { keepArrays: ['tokenizer.ggml.tokens', 'tokenizer.ggml.token_type'] });
  const model = h.metadata.get('tokenizer.ggml.model');
  const tokens = h.metadata.get('tokenizer.ggml.tokens');
  const types = h.metadata.get('tokenizer.ggml.token_type');
  if (typeof model !== 'string' || !Array.isArray(tokens)) return null;
  return invalidUtf8Tokens(model, tokens.map(String), Array.isArray(types) ? types.map(Number) : null);
}
