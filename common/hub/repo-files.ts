// A Hub repository's file list: GET {endpoint}/api/models/{repo}/tree/main?recursive=true, its
// pages followed (Link rel="next"), and any folder the answer lists without its contents asked for
// in turn (a Hub that does not recurse). Each file with its size and, for LFS files, its sha256.
import { HubRefError, type HubAccess } from './hub-ref.js';
import { windowsNameProblem } from '../../contract/file-names.js';

export interface HubFile {
  path: string;
  size: number;
  /** The LFS oid (the content's sha256); null for a file kept in git itself. */
  sha256: string | null;
}

interface TreeEntry { type?: unknown; path?: unknown; size?: unknown; lfs?: { oid?: unknown; size?: unknown } | null }

const MAX_PAGES = 100;

export async function listRepoFiles(access: HubAccess, repo: string, signal: AbortSignal): Promise<HubFile[]> {
  const files: HubFile[] = [];
  const folders: string[] = [];
  const base = `${access.endpoint}/api/models/${repo}/tree/main`;
  const pending = [`${base}?recursive=true`];
  for (let pages = 0; pending.length > 0; pages++) {
    if (pages >= MAX_PAGES) throw new HubRefError(`${repo}: the file list has more than ${MAX_PAGES} pages`);
    const url = pending.shift()!;
    const res = await fetchListing(access, repo, url, signal);
    const body: unknown = await res.json().catch(() => null);
    if (!Array.isArray(body)) throw new HubRefError(`${repo}: the Hub's file list is not a JSON array (${url})`);
    for (const e of body as TreeEntry[]) {
      // The path becomes a local path under the models folder: a name that could climb out is not a file we take.
      if (typeof e.path !== 'string' || !isSafeRepoPath(e.path)) continue;
      if (e.type === 'directory') { folders.push(e.path); continue; }
      if (e.type !== 'file') continue;
      const lfsOid = typeof e.lfs?.oid === 'string' && /^[0-9a-f]{64}$/i.test(e.lfs.oid) ? e.lfs.oid.toLowerCase() : null;
      const size = typeof e.lfs?.size === 'number' ? e.lfs.size : typeof e.size === 'number' ? e.size : 0;
      files.push({ path: e.path, size, sha256: lfsOid });
    }
    const next = nextLink(res.headers.get('link'));
    if (next) pending.push(new URL(next, url).toString());
    // A folder whose contents did not come with it: this Hub did not recurse, so ask for it.
    while (pending.length === 0 && folders.length > 0) {
      const folder = folders.shift()!;
      if (!files.some((f) => f.path.startsWith(`${folder}/`))) pending.push(`${base}/${folder.split('/').map(encodeURIComponent).join('/')}?recursive=true`);
    }
  }
  return files;
}

async function fetchListing(access: HubAccess, repo: string, url: string, signal: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    // The token goes to the Hub only (a next page on another origin does not get it).
    const toHub = new URL(url).origin === new URL(access.endpoint).origin;
    res = await fetch(url, { signal, headers: { 'user-agent': 'strata-vscode', ...(access.token && toHub ? { authorization: `Bearer ${access.token}` } : {}) } });
  } catch (e) {
    if (signal.aborted) throw new HubRefError(`cancelled while listing ${repo}`);
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new HubRefError(`cannot reach ${access.endpoint} to list ${repo}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  if (res.ok) return res;
  await res.body?.cancel();
  if (res.status === 401 || res.status === 403) {
    throw new HubRefError(`${repo}: the Hub answered ${res.status}: the repository is gated or private${access.token ? ' and HF_TOKEN has no access to it' : '; set HF_TOKEN to a token with access'}`);
  }
  if (res.status === 404) throw new HubRefError(`${repo}: no such repository on ${access.endpoint} (the Hub answered 404)`);
  throw new HubRefError(`${repo}: the Hub answered ${res.status} to ${url}`);
}

/**
 * Plain names joined by /: no empty, "." or ".." segment, no backslash or control character; on
 * Windows also none that Windows reads otherwise (a ':' names a stream of another file, a device
 * name opens the device: contract/file-names.ts).
 */
export function isSafeRepoPath(path: string, platform: NodeJS.Platform = process.platform): boolean {
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && !/[\\\x00-\x1f]/.test(s)
    && (platform !== 'win32' || windowsNameProblem(s) === null));
}

/** The rel="next" URL of a Link header. */
function nextLink(header: string | null): string | null {
  for (const part of (header ?? '').split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (m) return m[1]!;
  }
  return null;
}
