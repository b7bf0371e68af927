// The GGUF models in a folder (its subfolders too, as `strata pull` lays them out) and what each
// can serve, read from its header alone: the file type, architecture, training context, and the
// roles the server would give it. FIM tokens -> completion (infill); a declared pooling or an
// encoder architecture -> embedding (pooling "rank": rerank); a chat template -> chat, with the
// tool-call format the template teaches. A split model is listed once, by its first part.
import { statSync } from 'node:fs';
import { relative } from 'node:path';
import type { ModelRole } from '../../contract/models.js';
import type { ToolCallFormat } from '../chat/chat-types.js';
import { detectToolFormat } from '../chat/template.js';
import { readGgufHeader, type GgufValue } from './gguf.js';
import { ggufFilesUnder } from '../../common/hub/gguf-files.js';

export interface LocalModel {
  /** Relative to the folder listed, with / separators. */
  file: string;
  path: string;
  /** All parts together. */
  bytes: number;
  parts: number;
  /** llama.cpp's file type name (Q4_K_M, Q8_0, F16, …), or null when the header has none. */
  fileType: string | null;
  architecture: string | null;
  contextLength: number | null;
  roles: ModelRole[];
  /** The tool-call format of its chat template ('none' when it has a template that teaches none; null: no template). */
  toolFormat: ToolCallFormat | null;
  /** Why the header could not be read; the other fields are then null or empty. */
  error: string | null;
}

/** llama.cpp's llama_ftype (include/llama.h), by value. */
const FILE_TYPES: Record<number, string> = {
  0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 7: 'Q8_0', 8: 'Q5_0', 9: 'Q5_1', 10: 'Q2_K', 11: 'Q3_K_S', 12: 'Q3_K_M',
  13: 'Q3_K_L', 14: 'Q4_K_S', 15: 'Q4_K_M', 16: 'Q5_K_S', 17: 'Q5_K_M', 18: 'Q6_K', 19: 'IQ2_XXS', 20: 'IQ2_XS',
  21: 'Q2_K_S', 22: 'IQ3_XS', 23: 'IQ3_XXS', 24: 'IQ1_S', 25: 'IQ4_NL', 26: 'IQ3_S', 27: 'IQ3_M', 28: 'IQ2_S',
  29: 'IQ2_M', 30: 'IQ4_XS', 31: 'IQ1_M', 32: 'BF16', 36: 'TQ1_0', 37: 'TQ2_0', 38: 'MXFP4_MOE',
};

/** The architectures llama.cpp runs as encoders: they only make embeddings (native/src/model_loader.cpp). */
const ENCODERS = new Set(['bert', 'nomic-bert', 'nomic-bert-moe', 'jina-bert-v2', 'jina-bert-v3', 'neo-bert', 'eurobert', 'modern-bert']);
/** llama_pooling_type: 1 mean, 2 cls, 3 last, 4 rank (0 none). */
const POOLING_RANK = 4;

/** The token texts llama.cpp recognises as FIM prefix / suffix / middle when the header names no ids (src/llama-vocab.cpp). */
const FIM_TEXTS = {
  pre: ['<|fim_prefix|>', '<fim-prefix>', '<fim_prefix>', '<｜fim▁begin｜>', '<PRE>', '▁<PRE>', '<|code_prefix|>', '<|prefix|>'],
  suf: ['<|fim_suffix|>', '<fim-suffix>', '<fim_suffix>', '<｜fim▁hole｜>', '<SUF>', '▁<SUF>', '<|code_suffix|>', '<|suffix|>'],
  mid: ['<|fim_middle|>', '<fim-middle>', '<fim_middle>', '<｜fim▁end｜>', '<MID>', '▁<MID>', '<|code_middle|>', '<|middle|>'],
};
const FIM_ID_KEYS = {
  pre: ['tokenizer.ggml.fim_pre_token_id', 'tokenizer.ggml.prefix_token_id'],
  suf: ['tokenizer.ggml.fim_suf_token_id', 'tokenizer.ggml.suffix_token_id'],
  mid: ['tokenizer.ggml.fim_mid_token_id', 'tokenizer.ggml.middle_token_id'],
};
const TOKENS = 'tokenizer.ggml.tokens';

const SPLIT = /-(\d{5})-of-(\d{5})\.gguf$/i;

const num = (v: GgufValue | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export async function listLocalModels(dir: string): Promise<LocalModel[]> {
  const files = ggufFilesUnder(dir);
  const models: LocalModel[] = [];
  for (const path of files) {
    const split = SPLIT.exec(path);
    if (split && split[1] !== '00001') continue; // listed with its first part
    const partPaths = split ? files.filter((f) => f.replace(SPLIT, '') === path.replace(SPLIT, '') && SPLIT.exec(f)?.[2] === split[2]) : [path];
    const bytes = partPaths.reduce((n, p) => n + statSync(p).size, 0);
    models.push({ file: relative(dir, path).split('\\').join('/'), path, bytes, parts: partPaths.length, ...await describeModel(path) });
  }
  return models;
}

type Description = Pick<LocalModel, 'fileType' | 'architecture' | 'contextLength' | 'roles' | 'toolFormat' | 'error'>;

export async function describeModel(path: string): Promise<Description> {
  let meta: Map<string, GgufValue>;
  try {
    meta = (await readGgufHeader(path, { keepArrays: [TOKENS] })).metadata;
  } catch (e) {
    return { fileType: null, architecture: null, contextLength: null, roles: [], toolFormat: null, error: (e as Error).message };
  }
  const arch = typeof meta.get('general.architecture') === 'string' ? meta.get('general.architecture') as string : null;
  const ftype = num(meta.get('general.file_type'));
  const pooling = arch ? num(meta.get(`${arch}.pooling_type`)) : null;
  const template = meta.get('tokenizer.chat_template');
  const roles: ModelRole[] = [];
  if (hasFim(meta)) roles.push('completion');
  if (typeof template === 'string' && template.trim() !== '') roles.push('chat');
  if (pooling === POOLING_RANK) roles.push('rerank');
  else if ((pooling !== null && pooling > 0) || (arch !== null && ENCODERS.has(arch))) roles.push('embedding');
  return {
    fileType: ftype === null ? null : FILE_TYPES[ftype] ?? `type ${ftype}`,
    architecture: arch,
    contextLength: arch ? num(meta.get(`${arch}.context_length`)) : null,
    // An encoder makes embeddings only, whatever its tokenizer carries.
    roles: arch !== null && ENCODERS.has(arch) ? roles.filter((r) => r === 'embedding' || r === 'rerank') : roles,
    toolFormat: typeof template === 'string' && template.trim() !== '' ? detectToolFormat(template) : null,
    error: null,
  };
}

/** FIM prefix, suffix and middle tokens, named by id in the header or found by their text as llama.cpp finds them. */
function hasFim(meta: Map<string, GgufValue>): boolean {
  const tokens = meta.get(TOKENS);
  const texts = Array.isArray(tokens) ? new Set(tokens) : new Set<unknown>();
  const has = (k: keyof typeof FIM_TEXTS): boolean => FIM_ID_KEYS[k].some((key) => num(meta.get(key)) !== null) || FIM_TEXTS[k].some((t) => texts.has(t));
  return has('pre') && has('suf') && has('mid');
}
