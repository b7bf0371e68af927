// Finds llama.cpp's tokenizer-only GGUFs (models/ggml-vocab-<name>.gguf in the llama.cpp source
// that scripts/build-native.mjs unpacks into the cache), by name or by path.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../addon/loader.js';
import { strataCacheDir } from '../../common/hub/cache-dir.js';

/** Source folders of the pinned llama.cpp start with this (LLAMA_COMMIT in native/pin.json; a patch-set suffix follows). */
const PINNED_SOURCE = 'llama.cpp-80fb11ac73e6';

export class VocabNotFoundError extends Error {}

export interface AddedToken { id: number; text: string; type: 'control' | 'user' }

/**
 * Tokenizers that extend a base vocabulary with a model family's added tokens, so a stand-in model
 * gets the special tokens (FIM, tool calls) of the family it stands in for.
 * qwen2.5-coder: llama.cpp's qwen2 vocab (151,936 entries, [PAD] placeholders from 151646) with
 * Qwen2.5's added tokens at their real ids 151646-151664 (FIM prefix/middle/suffix =
 * 151659/151660/151661), typed as in the published GGUFs (FIM and tool-call tokens not special).
 */
const QWEN25_ADDED: Array<[string, AddedToken['type']]> = [
  ...['object_ref_start', 'object_ref_end', 'box_start', 'box_end', 'quad_start', 'quad_end',
    'vision_start', 'vision_end', 'vision_pad', 'image_pad', 'video_pad'].map((n): [string, 'control'] => [`<|${n}|>`, 'control']),
  ...['<tool_call>', '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|fim_pad|>',
    '<|repo_name|>', '<|file_sep|>'].map((t): [string, 'user'] => [t, 'user']),
];
/**
 * llama3.1: llama.cpp's llama-bpe (Llama 3.0) with Llama 3.1's tool-call control tokens appended
 * (3.1 has them at reserved ids 128008/128010, which a generated vocab cannot rename).
 * mistral: llama-spm (SentencePiece, 32,000) with Mistral's instruction and tool-call control tokens
 * appended, as Mistral's v3 tokenizer has them (at low ids there).
 */
const MISTRAL_CONTROL = ['[INST]', '[/INST]', '[TOOL_CALLS]', '[AVAILABLE_TOOLS]', '[/AVAILABLE_TOOLS]', '[TOOL_RESULTS]',
  '[/TOOL_RESULTS]', '[ARGS]', '[CALL_ID]', '[SYSTEM_PROMPT]', '[/SYSTEM_PROMPT]'];
const VARIANTS: Record<string, { base: string; addedTokens: AddedToken[] }> = {
  'qwen2.5-coder': { base: 'qwen2', addedTokens: QWEN25_ADDED.map(([text, type], i) => ({ id: 151646 + i, text, type })) },
  'llama3.1': { base: 'llama-bpe', addedTokens: ['<|eom_id|>', '<|python_tag|>'].map((text, i) => ({ id: 128256 + i, text, type: 'control' })) },
  mistral: { base: 'llama-spm', addedTokens: MISTRAL_CONTROL.map((text, i) => ({ id: 32000 + i, text, type: 'control' })) },
};

export interface VocabSpec {
  /** The tokenizer GGUF to copy. */
  path: string;
  /** Tokens written at their ids over the vocab's placeholders (empty for a plain vocab). */
  addedTokens: AddedToken[];
}

/** A vocabulary name (a file's, or a variant such as qwen2.5-coder) or a GGUF path -> what to build it from. */
export function resolveVocabSpec(nameOrPath: string): VocabSpec {
  const variant = Object.hasOwn(VARIANTS, nameOrPath) ? VARIANTS[nameOrPath] : undefined;
  if (variant) return { path: resolveVocab(variant.base), addedTokens: variant.addedTokens };
  return { path: resolveVocab(nameOrPath), addedTokens: [] };
}

/** `sub` (e.g. 'models') of each llama.cpp source tree under the cache: the pinned one first, then any other. */
export function llamaSourceDirs(sub: string): string[] {
  const src = join(strataCacheDir(), 'src');
  let dirs: string[] = [];
  try {
    dirs = readdirSync(src).filter((d) => d.startsWith('llama.cpp-')).sort();
  } catch { /* no source yet */ }
  return [...dirs.filter((d) => d.startsWith(PINNED_SOURCE)), ...dirs.filter((d) => !d.startsWith(PINNED_SOURCE))]
    .map((d) => join(src, d, sub)).filter((d) => existsSync(d));
}

/** Folders holding ggml-vocab-*.gguf: those shipped beside the addon, then the pinned source's. */
export function vocabDirs(): string[] {
  return [join(packageRoot, 'native', 'build', 'vocab'), ...llamaSourceDirs('models')].filter((d) => existsSync(d));
}

/** Names of the available vocabularies ("qwen2", "qwen2.5-coder", "starcoder", …), sorted. */
export function listVocabs(): string[] {
  const names = new Set<string>();
  for (const dir of vocabDirs()) {
    for (const f of readdirSync(dir)) {
      const m = /^ggml-vocab-(.+)\.gguf$/.exec(f);
      if (m) names.add(m[1]!);
    }
  }
  for (const [name, v] of Object.entries(VARIANTS)) if (names.has(v.base)) names.add(name);
  return [...names].sort();
}

/**
 * A vocabulary name ("qwen2") or a path to a tokenizer GGUF -> an absolute path that exists.
 * Throws VocabNotFoundError naming what was looked for and what is available.
 */
export function resolveVocab(nameOrPath: string): string {
  if (nameOrPath.includes('/') || nameOrPath.endsWith('.gguf')) {
    const path = resolve(nameOrPath);
    if (!existsSync(path) || !statSync(path).isFile()) throw new VocabNotFoundError(`vocab file not found: ${path}`);
    return path;
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(nameOrPath)) {
    throw new VocabNotFoundError(`invalid vocab name '${nameOrPath}' (use a name such as qwen2, or a path to a .gguf)`);
  }
  for (const dir of vocabDirs()) {
    const path = join(dir, `ggml-vocab-${nameOrPath}.gguf`);
    if (existsSync(path)) return path;
  }
  const dirs = vocabDirs();
  if (dirs.length === 0) {
    throw new VocabNotFoundError(`unknown vocab '${nameOrPath}': no llama.cpp source under ${join(strataCacheDir(), 'src')} ` +
      '(run `node scripts/build-native.mjs` first, or pass a path to a tokenizer GGUF)');
  }
  throw new VocabNotFoundError(`unknown vocab '${nameOrPath}': no ggml-vocab-${nameOrPath}.gguf in ${dirs[0]} ` +
    `(available: ${listVocabs().join(', ')})`);
}
