// The user cache that scripts/build-native.mjs fills (llama.cpp source, native builds) and that
// generated models live in: STRATA_CACHE_DIR, else $XDG_CACHE_HOME/strata, else ~/.cache/strata.
import { homedir } from 'node:os';
import { join } from 'node:path';

export function strataCacheDir(): string {
  return process.env.STRATA_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'strata');
}

/** Where `strata pull` and `strata serve --model hf:…` keep models: STRATA_PULL_DIR, else <cache>/models. */
export function defaultModelsDir(): string {
  return process.env.STRATA_PULL_DIR || join(strataCacheDir(), 'models');
}
