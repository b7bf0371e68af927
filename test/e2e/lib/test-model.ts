// The GGUF the extension's server loads in the e2e runs: STRATA_E2E_MODEL when set, otherwise the
// generated tiny test model with the starcoder vocabulary (it has FIM tokens, so inline
// completions have something to work with). Made once into the shared model cache.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTestModel } from '../../helpers/models.js';
import { ensureProjector } from '../../../backend/models/stand-in.js';
import type { E2eEnv } from './env.js';

export async function resolveTestModel(env: E2eEnv): Promise<string> {
  const given = process.env.STRATA_E2E_MODEL;
  if (given) {
    if (!existsSync(given)) throw new Error(`STRATA_E2E_MODEL=${given} does not exist`);
    return given;
  }
  // This module runs bundled from test-output/, where the addon loader's package-root guess does
  // not hold: point it at the repository's build (STRATA_ADDON is the loader's own override).
  process.env.STRATA_ADDON ??= join(env.repoRoot, 'native', 'build', 'strata.node');
  return ensureTestModel({ vocab: 'starcoder', shape: 'tiny' });
}

/** The embedding model and the reranker the UI run also serves (the codebase index's vectors and rerank). */
export async function resolveIndexModels(env: E2eEnv): Promise<{ embeddingModel: string; rerankModel: string }> {
  process.env.STRATA_ADDON ??= join(env.repoRoot, 'native', 'build', 'strata.node');
  return {
    embeddingModel: await ensureTestModel({ vocab: 'bert-bge', shape: 'embed-bert' }),
    rerankModel: await ensureTestModel({ vocab: 'bert-bge', shape: 'rerank-bert' }),
  };
}

/** The chat model's projector for the image steps: STRATA_E2E_MMPROJ, else one generated for the generated model (none for another STRATA_E2E_MODEL). */
export async function resolveTestProjector(env: E2eEnv, model: string): Promise<string | undefined> {
  if (process.env.STRATA_E2E_MMPROJ) return process.env.STRATA_E2E_MMPROJ;
  if (process.env.STRATA_E2E_MODEL) return undefined;
  process.env.STRATA_ADDON ??= join(env.repoRoot, 'native', 'build', 'strata.node');
  return ensureProjector(model);
}
