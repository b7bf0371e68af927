// `strata models`' reading of a GGUF's roles, on llama.cpp's own tokenizer GGUFs (the vocab files
// of the pinned source, real headers of real models' tokenizers): FIM tokens found by their text
// as llama.cpp finds them (StarCoder's <fim_prefix>, DeepSeek's <｜fim▁begin｜>), encoders as
// embedding models, chat templates. Generated models are listed in test/integration/hub-models.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatModels } from '../../backend/cli/models.js';
import { listLocalModels, type LocalModel } from '../../backend/models/local-models.js';
import { resolveVocab } from '../../backend/models/vocab.js';

let dir = '';
let models: Record<string, LocalModel> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-models-'));
  mkdirSync(join(dir, 'tokenizers'));
  // Linked, as a user might link a model into the folder.
  for (const name of ['starcoder', 'deepseek-coder', 'bert-bge', 'nomic-bert-moe', 'phi-3', 'llama-spm']) {
    symlinkSync(resolveVocab(name), join(dir, 'tokenizers', `${name}.gguf`));
  }
  models = Object.fromEntries((await listLocalModels(dir)).map((m) => [m.file.replace(/^tokenizers\/|\.gguf$/g, ''), m]));
});
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

describe('listLocalModels', () => {
  it('finds FIM tokens by their text when the header names no ids: completion', () => {
    expect(models.starcoder).toMatchObject({ architecture: 'starcoder2', roles: ['completion'], toolFormat: null });
    expect(models['deepseek-coder']).toMatchObject({ roles: ['completion'] });
  });

  it('an encoder serves embeddings only', () => {
    expect(models['bert-bge']).toMatchObject({ architecture: 'bert', roles: ['embedding'] });
    expect(models['nomic-bert-moe']).toMatchObject({ architecture: 'nomic-bert-moe', roles: ['embedding'] });
  });

  it('a chat template makes a chat model; a bare tokenizer serves no role', () => {
    expect(models['phi-3']).toMatchObject({ roles: ['chat'], toolFormat: 'none' });
    expect(models['llama-spm']).toMatchObject({ roles: [], toolFormat: null });
  });

  it('reads the file type and training context from the header', () => {
    expect(models['bert-bge']).toMatchObject({ fileType: 'F16', contextLength: 512, parts: 1, error: null });
  });

  it('prints one row per model, "-" for what it lacks', () => {
    const text = formatModels(Object.values(models));
    expect(text.split('\n')[0]).toMatch(/^file\s+size\s+type\s+arch\s+context\s+roles$/);
    expect(text).toMatch(/tokenizers\/llama-spm\.gguf\s+\S+ \S+\s+F16\s+llama\s+4096\s+-$/m);
  });
});
