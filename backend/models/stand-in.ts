// Generated models (random weights, real tokenizers): tiny ones for tests, the 0.5b shape as a
// performance stand-in. Cached by arguments + generator version under <cache>/test-models/.
import { createHash } from 'node:crypto';
import { mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestModelQuant, TestModelShape } from '../../native/lib/addon.js';
import { loadAddon } from '../addon/loader.js';
import { strataCacheDir } from '../../common/hub/cache-dir.js';
import { resolveChatTemplate } from './chat-templates.js';
import { resolveVocabSpec } from './vocab.js';

export const TEST_MODEL_SHAPES: readonly TestModelShape[] = ['tiny', '0.5b', '7b', 'embed-bert', 'embed-causal', 'rerank-bert', 'copy', 'copy-0.5b', 'mtp', 'copy-mtp', 'hybrid', 'eagle3', 'dflash', 'dspark'];
export const TEST_MODEL_QUANTS: readonly TestModelQuant[] = ['f32', 'f16', 'q8_0', 'q4_0'];

export interface StandInOptions {
  /** Vocabulary name (qwen2, qwen2.5-coder, starcoder, …) or a tokenizer GGUF path. */
  vocab: string;
  shape: TestModelShape;
  quant: TestModelQuant;
  seed: number;
  /** Peaked logits (makeTestModel's logitScale); default 1. */
  logitScale?: number;
  /** Embedding models: the pooling written to the GGUF (default: the shape's). */
  pooling?: 'mean' | 'cls' | 'last';
  /** A chat template (a name in llama.cpp's models/templates, or a .jinja path) written instead of the vocab's. */
  chatTemplate?: string;
  /** The training context written (`<arch>.context_length`) instead of the shape's. */
  ctxTrain?: number;
}

export interface GeneratedModel {
  path: string;
  bytes: number;
  params: number;
  vocabSize: number;
  fim: { prefix: number; suffix: number; middle: number } | null;
}

/** Writes a model to `out` (temp file + rename); bad arguments throw with the reason. */
export function generateModel(out: string, o: StandInOptions): GeneratedModel {
  const vocab = resolveVocabSpec(o.vocab);
  const r = loadAddon().makeTestModel({
    out, vocab: vocab.path, shape: o.shape, quant: o.quant, seed: o.seed,
    ...(o.logitScale !== undefined && o.logitScale !== 1 ? { logitScale: o.logitScale } : {}),
    ...(vocab.addedTokens.length > 0 ? { addedTokens: vocab.addedTokens } : {}),
    ...(o.pooling ? { pooling: o.pooling } : {}),
    ...(o.chatTemplate ? { chatTemplate: resolveChatTemplate(o.chatTemplate).text } : {}),
    ...(o.ctxTrain !== undefined ? { ctxTrain: o.ctxTrain } : {}),
  });
  return { path: out, ...r };
}

/** Writes a random-weight projector for the model at `model` (its embedding size) to `out`; see makeTestProjector. */
export function generateProjector(out: string, model: string, seed = 1): { path: string; bytes: number; imageSize: number; imageTokens: number } {
  return { path: out, ...loadAddon().makeTestProjector({ out, model, seed }) };
}

/** Cache path of a generated model; the generator version is part of the name. */
export function standInPath(o: StandInOptions): string {
  const vocabKey = o.vocab.replace(/^.*\//, '').replace(/\.gguf$/, '').replace(/[^A-Za-z0-9._-]/g, '_');
  const version = loadAddon().testModelVersion;
  const scale = o.logitScale !== undefined && o.logitScale !== 1 ? `-L${o.logitScale}` : '';
  const pooling = o.pooling ? `-${o.pooling}` : '';
  const template = o.chatTemplate ? `-T${templateKey(o.chatTemplate)}` : '';
  const ctxTrain = o.ctxTrain !== undefined ? `-C${o.ctxTrain}` : '';
  return join(strataCacheDir(), 'test-models', `${vocabKey}-${o.shape}-${o.quant}-${o.seed}${scale}${pooling}${template}${ctxTrain}-v${version}.gguf`);
}

/** A template's part of a cache name: its name and a hash of its text (a file edited in place gets a new model). */
function templateKey(nameOrPath: string): string {
  const t = resolveChatTemplate(nameOrPath);
  return `${t.name.replace(/[^A-Za-z0-9._-]/g, '_')}.${createHash('sha256').update(t.text).digest('hex').slice(0, 8)}`;
}

const pending = new Map<string, Promise<string>>();

/**
 * The cached model for these arguments, generated on first use. Safe when several processes
 * race: each writes its own temp file and renames it over the same, identical result.
 */
export function ensureModel(o: StandInOptions): Promise<string> {
  const path = standInPath(o);
  let p = pending.get(path);
  if (!p) {
    p = (async () => {
      if (!existsSync(path)) {
        mkdirSync(join(path, '..'), { recursive: true });
        generateModel(path, o);
      }
      return path;
    })();
    pending.set(path, p);
    p.catch(() => pending.delete(path));
  }
  return p;
}

/**
 * The cached projector for a generated model (beside it, <model>.mmproj.gguf), made on first use:
 * images then run through the real engine with that model (`mmproj`).
 */
export function ensureProjector(model: string): Promise<string> {
  const path = model.replace(/\.gguf$/i, '') + '.mmproj.gguf';
  let p = pending.get(path);
  if (!p) {
    p = (async () => {
      if (!existsSync(path)) generateProjector(path, model);
      return path;
    })();
    pending.set(path, p);
    p.catch(() => pending.delete(path));
  }
  return p;
}
