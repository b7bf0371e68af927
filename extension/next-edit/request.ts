// What one next-edit request sends: the region around the cursor and the edit being made, the
// excerpt around it, and the recent edits of this and other files. Pure: the document is a view.
import type { NextEditRequest } from '../../contract/next-edit.js';
import { chooseRegion, type Region } from './region.js';
import type { EditHistory } from './edit-history.js';

/** The document as a request needs it (a VS Code TextDocument in the extension, text in tests). */
export interface DocumentView {
  /** The history's key (the URI). */
  key: string;
  /** Workspace-relative path. */
  path: string;
  languageId: string;
  version: number;
  lineCount: number;
  line(i: number): string;
}

export interface RequestLimits {
  regionLines: number;
  /** Lines of excerpt on each side of the region. */
  contextLines: number;
  maxExcerptChars: number;
  maxEvents: number;
  maxEventTokens: number;
}

export const DEFAULT_LIMITS: Omit<RequestLimits, 'regionLines'> = { contextLines: 24, maxExcerptChars: 12_000, maxEvents: 8, maxEventTokens: 1500 };

export interface NextEditPlan {
  body: Omit<NextEditRequest, 'model'>;
  region: Region;
  /** The document's version the request was made from (an answer for another is stale). */
  version: number;
  cursor: { line: number; character: number };
  /** The region ends with a line end (it does not hold the file's last line). */
  regionEndsLine: boolean;
}

/** The request for `doc` with the cursor at `cursor`, or undefined when there is nothing to follow (no edit) or it is too big. */
export function planRequest(doc: DocumentView, cursor: { line: number; character: number }, history: EditHistory, limits: RequestLimits, supersedeKey: string): NextEditPlan | undefined {
  const own = history.get(doc.key);
  const edit = own?.liveRange();
  if (!edit) return undefined;
  const region = chooseRegion({
    lineCount: doc.lineCount, line: (i) => doc.line(i), cursor, edit,
    regionLines: limits.regionLines, contextLines: limits.contextLines, maxExcerptChars: limits.maxExcerptChars,
  });
  if (!region) return undefined;
  const edits = history.recent({ maxEvents: limits.maxEvents, maxTokens: limits.maxEventTokens }).map((e) => ({ file: e.path, diff: e.diff }));
  if (!edits.length) return undefined;
  const x = region.excerpt;
  return {
    // No max_tokens: the server sizes it from the region (its prediction) and room to grow.
    body: {
      file: doc.path, language: doc.languageId,
      before: x.slice(0, region.start), region: x.slice(region.start, region.end), after: x.slice(region.end),
      cursor: region.cursor - region.start, start_of_file: region.excerptStartLine === 0,
      edits, supersede_key: supersedeKey,
    },
    region, version: doc.version, cursor, regionEndsLine: region.endLine < doc.lineCount,
  };
}
