// Brings a Hub model into the models folder: {dir}/ORG/REPO/<the repository's path>. What a
// reference resolved to is remembered in {dir}/ORG/REPO/.strata-pulls.json, so a reference whose
// files are all there is answered from disk without any request (offline works, and nothing is
// re-checked). Otherwise: list the repository, pick, and download each part (resumed, verified,
// retried from where a broken transfer stopped).
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DownloadError, downloadFile } from './download.js';
import { formatHubRef, hubAccess, type HubAccess, type HubRef } from './hub-ref.js';
import { pickByPath, pickByQuant, type ModelChoice } from './pick.js';
import { listRepoFiles } from './repo-files.js';

export const PULLS_FILE = '.strata-pulls.json';
/** Attempts per file when the transfer breaks off (each resumes where the last stopped). */
const ATTEMPTS = 3;

export type PullEvent =
  | { kind: 'picked'; file: string; parts: number; bytes: number; reason: string }
  | { kind: 'progress'; file: string; part: number; parts: number; received: number; total: number }
  | { kind: 'retry'; file: string; attempt: number; error: string }
  | { kind: 'verified'; file: string; sha256: string };

export interface PullOptions {
  ref: HubRef;
  /** The models folder. */
  dir: string;
  signal: AbortSignal;
  /** The Hub and token; read from the environment when a request is needed (default process.env). */
  env?: NodeJS.ProcessEnv;
  onEvent?: (e: PullEvent) => void;
}

export interface PullResult {
  /** The file to load (a split model's first part). */
  path: string;
  files: string[];
  /** Every file was there: nothing was downloaded (and, when the reference was pulled before, nothing asked). */
  alreadyPresent: boolean;
  /** Why this file (the pick's reason), or null when it was already there. */
  reason: string | null;
}

interface RecordedPart { path: string; size: number; sha256: string | null }
type PullsFile = Record<string, RecordedPart[]>;

/** The key of a reference in the pulls file: ":q4_k_m", ":" (the default pick) or "/path/FILE.gguf". */
const selectorOf = (ref: HubRef): string => (ref.file !== null ? `/${ref.file}` : `:${(ref.quant ?? '').toLowerCase()}`);
const repoDir = (dir: string, ref: HubRef): string => join(dir, ...ref.repo.split('/'));

function readPulls(dir: string, ref: HubRef): PullsFile {
  try {
    const v: unknown = JSON.parse(readFileSync(join(repoDir(dir, ref), PULLS_FILE), 'utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as PullsFile : {};
  } catch {
    return {};
  }
}

function recordPull(dir: string, ref: HubRef, parts: RecordedPart[]): void {
  const file = join(repoDir(dir, ref), PULLS_FILE);
  const pulls = { ...readPulls(dir, ref), [selectorOf(ref)]: parts };
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(pulls, null, 2)}\n`);
  renameSync(tmp, file);
}

const sizeOf = (path: string): number | null => { try { return statSync(path).size; } catch { return null; } };

/** The files a reference already resolved to, when every one is on disk with its size; else null. */
export function pulledFiles(dir: string, ref: HubRef): string[] | null {
  const recorded = readPulls(dir, ref)[selectorOf(ref)];
  const base = repoDir(dir, ref);
  if (Array.isArray(recorded) && recorded.length > 0) {
    const paths = recorded.map((p) => join(base, ...p.path.split('/')));
    return recorded.every((p, i) => sizeOf(paths[i]!) === p.size) ? paths : null;
  }
  // A file named by path that is there (put by hand, or pulled before), with its parts when split.
  if (ref.file !== null) {
    const m = /^(.*)-\d{5}-of-(\d{5})\.gguf$/i.exec(ref.file);
    const names = m ? Array.from({ length: Number(m[2]) }, (_, i) => `${m[1]}-${String(i + 1).padStart(5, '0')}-of-${m[2]}.gguf`) : [ref.file];
    const paths = names.map((n) => join(base, ...n.split('/')));
    return paths.every((p) => existsSync(p)) ? paths : null;
  }
  return null;
}

export async function pullModel(opts: PullOptions): Promise<PullResult> {
  const { ref, dir, signal } = opts;
  const present = pulledFiles(dir, ref);
  if (present) return { path: present[0]!, files: present, alreadyPresent: true, reason: null };

  const access = hubAccess(opts.env ?? process.env);
  const files = await listRepoFiles(access, ref.repo, signal);
  const picked = ref.file !== null ? pickByPath(ref.repo, files, ref.file) : pickByQuant(ref.repo, files, ref.quant);
  const model = picked.model;
  opts.onEvent?.({ kind: 'picked', file: model.path, parts: model.parts.length, bytes: model.size, reason: picked.reason });
  const base = repoDir(dir, ref);
  mkdirSync(base, { recursive: true });
  // Pulled before under another reference (ORG/REPO, then ORG/REPO:Q4_K_M): the files are there.
  const local = model.parts.map((p) => join(base, ...p.path.split('/')));
  const there = model.parts.every((p, i) => sizeOf(local[i]!) === p.size);
  const paths = there ? local : await downloadParts(access, ref, model, base, opts);
  recordPull(dir, ref, model.parts.map((p, i) => ({ path: p.path, size: statSync(paths[i]!).size, sha256: p.sha256 })));
  return { path: paths[0]!, files: paths, alreadyPresent: there, reason: picked.reason };
}

async function downloadParts(access: HubAccess, ref: HubRef, model: ModelChoice, base: string, opts: PullOptions): Promise<string[]> {
  const paths: string[] = [];
  let before = 0;
  for (const [i, part] of model.parts.entries()) {
    const dest = join(base, ...part.path.split('/'));
    const url = `${access.endpoint}/${ref.repo}/resolve/main/${part.path.split('/').map(encodeURIComponent).join('/')}`;
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await downloadFile({
          url, dest, signal: opts.signal,
          headers: access.token ? { authorization: `Bearer ${access.token}` } : {},
          expectedSha256: part.sha256, expectedSize: part.size || null,
          onProgress: (received) => opts.onEvent?.({ kind: 'progress', file: part.path, part: i + 1, parts: model.parts.length, received: before + received, total: model.size }),
        });
        if (r.verified && r.sha256) opts.onEvent?.({ kind: 'verified', file: part.path, sha256: r.sha256 });
        break;
      } catch (e) {
        if (!(e instanceof DownloadError) || !e.resumable || attempt >= ATTEMPTS || opts.signal.aborted) {
          throw new DownloadError(`${formatHubRef(ref)}: ${part.path}: ${(e as Error).message}`);
        }
        opts.onEvent?.({ kind: 'retry', file: part.path, attempt: attempt + 1, error: (e as Error).message });
      }
    }
    before += part.size;
    paths.push(dest);
  }
  return paths;
}
