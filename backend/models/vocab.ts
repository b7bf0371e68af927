// Finds llama.cpp's tokenizer-only GGUFs (models/ggml-vocab-<name>.gguf in the llama.cpp source
// that scripts/build-native.mjs unpacks into the cache), by name or by path.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../native.js';
import { strataCacheDir } from './cache-dir.js';

/** Source folder name of the pinned llama.cpp (LLAMA_COMMIT in scripts/build-native.mjs). */
const PINNED_SOURCE = 'llama.cpp-80fb11ac73e6';

export class VocabNotFoundError extends Error {}

/** Folders holding ggml-vocab-*.gguf: those shipped beside the addon, then the pinned source's. */
export function vocabDirs(): string[] {
  const src = join(strataCacheDir(), 'src');
  let others: string[] = [];
  try {
    others = readdirSync(src).filter((d) => d.startsWith('llama.cpp-') && d !== PINNED_SOURCE).sort();
  } catch { /* no source yet */ }
  const sources = [PINNED_SOURCE, ...others].map((d) => join(src, d, 'models'));
  return [join(packageRoot, 'native', 'build', 'vocab'), ...sources].filter((d) => existsSync(d));
}

/** Names of the available vocabularies ("qwen2", "starcoder", …), sorted. */
export function listVocabs(): string[] {
  const names = new Set<string>();
  for (const dir of vocabDirs()) {
    for (const f of readdirSync(dir)) {
      const m = /^ggml-vocab-(.+)\.gguf$/.exec(f);
      if (m) names.add(m[1]!);
    }
  }
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
