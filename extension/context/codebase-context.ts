// A context source: the codebase index's best chunks for a question, as ordinary context items
// (kind 'codebase', the file and lines, tokens counted later), so the panel chat and @strata fit
// them to the model like any attached file and say what they left out. `@codebase` in a question
// (`#codebase` for @strata) asks for them.
import { randomUUID } from 'node:crypto';
import type { ContextItem } from '../../contract/panel.js';
import type { SearchResult } from '../codebase/search.js';

/** Searches the index; the codebase service's search(). */
export type CodebaseSearch = (query: string, opts: { limit: number }) => Promise<SearchResult>;

/** Chunks a question gets by default (each at most a chunk's size: ~300 tokens). */
export const CODEBASE_CHUNKS = 8;

const MENTION = /(^|\s)[@#]codebase\b/i;

export function mentionsCodebase(text: string): boolean {
  return MENTION.test(text);
}

/** The question without the @codebase / #codebase mention (what the index is searched for). */
export function withoutMention(text: string): string {
  return text.replace(/(^|\s)[@#]codebase\b/gi, ' ').trim();
}

const fenceLanguage = (path: string): string | null => {
  const m = /\.([A-Za-z0-9]+)$/.exec(path);
  return m ? m[1]!.toLowerCase() : null;
};

export function hitsToContext(result: SearchResult): ContextItem[] {
  return result.hits.map((h) => ({
    id: randomUUID(), kind: 'codebase', path: h.chunk.path, range: { startLine: h.chunk.startLine, endLine: h.chunk.endLine },
    language: fenceLanguage(h.chunk.path), text: h.chunk.text, tokens: null,
  }));
}

/** Context items for a question, or a sentence saying why there are none. */
export async function codebaseContext(search: CodebaseSearch | undefined, question: string, limit = CODEBASE_CHUNKS): Promise<ContextItem[] | string> {
  if (!search) return 'The codebase index is off (strata.codebase.enabled) or has no workspace folder.';
  const query = withoutMention(question);
  if (!query) return 'Type a question first: the codebase index is searched for it.';
  const r = await search(query, { limit });
  return r.hits.length ? hitsToContext(r) : `The codebase index found nothing for “${query.slice(0, 80)}”.`;
}
