// What names a model on the Hugging Face Hub, as llama.cpp's `-hf` reads it: ORG/REPO[:QUANT]
// (a quantisation picked among the repository's GGUF files) or ORG/REPO/path/FILE.gguf (that
// file), optionally written hf:… (how `strata serve --model` tells it from a path). Also which
// Hub to ask (MODEL_ENDPOINT, else HF_ENDPOINT, else huggingface.co) and the token to send.
import { isLoopbackHost } from '../net/loopback.js';

export interface HubRef {
  /** "ORG/REPO". */
  repo: string;
  /** The quantisation asked for (as written), or null: a default is picked. */
  quant: string | null;
  /** A file path inside the repository, or null: picked by quant. */
  file: string | null;
}

export class HubRefError extends Error {}

const HF_PREFIX = 'hf:';
/** The Hub's repository name rule (letters, digits, - _ .), never "." or "..". */
const NAME = /^(?!\.\.?$)[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/;
const QUANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;
/** A segment of a file path in a repository (file names run longer than repository names, and may hold +). */
const SEGMENT = /^(?!\.\.?$)[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$/;

/** `strata serve --model hf:ORG/REPO:QUANT` is a Hub reference, anything else a file. */
export function isHubModel(value: string): boolean {
  return value.startsWith(HF_PREFIX);
}

export function parseHubRef(input: string): HubRef {
  const text = input.startsWith(HF_PREFIX) ? input.slice(HF_PREFIX.length) : input;
  const usage = `'${input}' is not ORG/REPO[:QUANT] or ORG/REPO/FILE.gguf`;
  const parts = text.split('/');
  if (parts.length < 2) throw new HubRefError(usage);
  const org = parts[0]!;
  if (parts.length === 2) {
    const colon = parts[1]!.indexOf(':');
    const name = colon < 0 ? parts[1]! : parts[1]!.slice(0, colon);
    const quant = colon < 0 ? null : parts[1]!.slice(colon + 1);
    if (!NAME.test(org) || !NAME.test(name)) throw new HubRefError(`${usage}: bad repository name '${org}/${name}'`);
    if (quant !== null && !QUANT.test(quant)) throw new HubRefError(`${usage}: bad quantisation '${quant}'`);
    return { repo: `${org}/${name}`, quant, file: null };
  }
  const name = parts[1]!;
  if (!NAME.test(org) || !NAME.test(name)) throw new HubRefError(`${usage}: bad repository name '${org}/${name}'`);
  const path = parts.slice(2);
  // Each segment is a plain name: the path becomes a local path under the models folder.
  if (path.some((s) => !SEGMENT.test(s))) throw new HubRefError(`${usage}: bad file path '${path.join('/')}'`);
  if (!/\.gguf$/i.test(path.at(-1)!)) throw new HubRefError(`${usage}: '${path.join('/')}' is not a .gguf file`);
  return { repo: `${org}/${name}`, quant: null, file: path.join('/') };
}

export function formatHubRef(ref: HubRef): string {
  return ref.file !== null ? `${ref.repo}/${ref.file}` : `${ref.repo}${ref.quant !== null ? `:${ref.quant}` : ''}`;
}

export interface HubAccess {
  /** Without a trailing slash. */
  endpoint: string;
  token: string | null;
}

/** The Hub to ask and the token to send, from the environment as llama.cpp and huggingface_hub read it. */
export function hubAccess(env: NodeJS.ProcessEnv = process.env): HubAccess {
  const given = env.MODEL_ENDPOINT || env.HF_ENDPOINT || 'https://huggingface.co';
  const where = env.MODEL_ENDPOINT ? 'MODEL_ENDPOINT' : 'HF_ENDPOINT';
  let url: URL;
  try { url = new URL(given); } catch { throw new HubRefError(`${where} '${given}' is not a URL`); }
  // The token and the model bytes travel in the clear over http: only to this machine.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new HubRefError(`${where} '${given}' must be https:// (http:// only for 127.0.0.1 or localhost)`);
  }
  const token = env.HF_TOKEN?.trim() || null;
  return { endpoint: url.toString().replace(/\/+$/, ''), token };
}
