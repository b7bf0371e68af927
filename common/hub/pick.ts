// Which GGUF of a repository a reference means. A model is one file, or the parts of a split
// model (NAME-00001-of-00003.gguf …) taken together. A quantisation matches a model whose path
// holds it as a whole word (case-insensitive: "q4_k_m" finds model-Q4_K_M.gguf and the folder
// Q4_K_M/, not model-Q4_K_M_L.gguf); more than one match is refused with the choices listed.
// No quantisation: Q4_K_M when there is one, else the smallest model, and the answer says which.
import type { HubFile } from './repo-files.js';

export interface ModelChoice {
  /** The first part's path (the file a loader opens). */
  path: string;
  /** Every file, in part order. */
  parts: HubFile[];
  size: number;
}

export interface Picked {
  model: ModelChoice;
  /** Why this one, for the user ("Q4_K_M, the default", …). */
  reason: string;
}

export class PickError extends Error {}

export const DEFAULT_QUANT = 'Q4_K_M';

const SPLIT = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;

/** The repository's models: single GGUFs and complete split sets; projector files (mmproj) are not models. */
export function modelChoices(files: readonly HubFile[]): ModelChoice[] {
  const singles: ModelChoice[] = [];
  const splits = new Map<string, { count: number; parts: Map<number, HubFile> }>();
  for (const f of files) {
    if (!/\.gguf$/i.test(f.path) || /(^|\/)[^/]*mmproj[^/]*$/i.test(f.path)) continue;
    const m = SPLIT.exec(f.path);
    if (!m) { singles.push({ path: f.path, parts: [f], size: f.size }); continue; }
    const key = `${m[1]}\0${m[3]}`;
    const set = splits.get(key) ?? { count: Number(m[3]), parts: new Map<number, HubFile>() };
    set.parts.set(Number(m[2]), f);
    splits.set(key, set);
  }
  const sets: ModelChoice[] = [];
  for (const { count, parts } of splits.values()) {
    const ordered = Array.from({ length: count }, (_, i) => parts.get(i + 1));
    if (ordered.some((p) => p === undefined)) continue; // an incomplete set cannot be loaded
    const all = ordered as HubFile[];
    sets.push({ path: all[0]!.path, parts: all, size: all.reduce((n, p) => n + p.size, 0) });
  }
  return [...singles, ...sets].sort((a, b) => a.path.localeCompare(b.path));
}

function holdsQuant(path: string, quant: string): boolean {
  const escaped = quant.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[-./])${escaped}([-./]|$)`, 'i').test(path);
}

function listChoices(choices: readonly ModelChoice[]): string {
  return choices.map((c) => `  ${c.path}${c.parts.length > 1 ? ` (+${c.parts.length - 1} parts)` : ''}  ${formatSize(c.size)}`).join('\n');
}

export function formatSize(bytes: number): string {
  if (bytes >= 1 << 30) return `${(bytes / (1 << 30)).toFixed(2)} GiB`;
  if (bytes >= 1 << 20) return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

export function pickByQuant(repo: string, files: readonly HubFile[], quant: string | null): Picked {
  const choices = modelChoices(files);
  if (choices.length === 0) throw new PickError(`${repo} has no GGUF model file`);
  if (quant !== null) {
    const hits = choices.filter((c) => holdsQuant(c.path, quant));
    if (hits.length === 1) return { model: hits[0]!, reason: quant };
    if (hits.length === 0) throw new PickError(`${repo} has no ${quant} GGUF; it has:\n${listChoices(choices)}`);
    throw new PickError(`${repo}: ${quant} matches ${hits.length} models; name the file (${repo}/FILE.gguf):\n${listChoices(hits)}`);
  }
  if (choices.length === 1) return { model: choices[0]!, reason: 'the only GGUF model in the repository' };
  const preferred = choices.filter((c) => holdsQuant(c.path, DEFAULT_QUANT));
  if (preferred.length === 1) return { model: preferred[0]!, reason: `${DEFAULT_QUANT}, the default (no quantisation given)` };
  const smallest = [...choices].sort((a, b) => a.size - b.size)[0]!;
  return { model: smallest, reason: `the smallest model (no quantisation given and no single ${DEFAULT_QUANT}); name one with ${repo}:QUANT` };
}

/** ORG/REPO/FILE.gguf: that file, with its sibling parts when it is one part of a split model. */
export function pickByPath(repo: string, files: readonly HubFile[], path: string): Picked {
  const choices = modelChoices(files);
  const hit = choices.find((c) => c.parts.some((p) => p.path === path));
  if (hit) return { model: hit, reason: hit.parts.length > 1 ? `${path} and its ${hit.parts.length - 1} other parts` : path };
  if (files.some((f) => f.path === path)) {
    throw new PickError(/mmproj/i.test(path) ? `${repo}/${path} is a multimodal projector, not a model` : `${repo}/${path} is part of an incomplete split model (some parts are missing from the repository)`);
  }
  throw new PickError(`${repo} has no file ${path}; its GGUF models:\n${listChoices(choices) || '  (none)'}`);
}
