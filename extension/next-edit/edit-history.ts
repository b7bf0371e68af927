// The recent edits of one document as small unified diffs, the way next-edit models are trained to
// read them (Zeta's "User edited …" events). A copy of the text is kept so each change's old text
// is known (VS Code's change events carry only the new text). Consecutive changes in one place are
// one edit while they last: typing a word, or a line and the next, is one diff, not one per key.
// A change elsewhere closes the edit, which is then kept as a fixed diff. Pure: no vscode.
import { structuredPatch } from 'diff';

/** One change as VS Code reports it: a range of the text before it (0-based lines) and the new text. */
export interface TextChange {
  startLine: number;
  startCharacter: number;
  endLine: number;
  endCharacter: number;
  text: string;
}

/** An edit as the request carries it: hunks only (`@@ -a,b +c,d @@`), line numbers as in the file then. */
export interface EditEvent {
  path: string;
  diff: string;
  /** Order across documents (higher = later). */
  seq: number;
}

/** The edit being made now: where it is in the current text and what those lines were before it. */
interface LiveEdit {
  startLine: number;
  /** Lines the edit covers now. */
  lineCount: number;
  /** What those lines were before the edit began. */
  oldLines: string[];
  seq: number;
}

export interface HistoryOptions {
  /** Changes at most this many lines from the edit being made join it. */
  mergeLines: number;
  /** Unchanged lines shown around each hunk. */
  contextLines: number;
  /** Closed edits kept per document (the newest). */
  maxEdits: number;
}

export const DEFAULT_HISTORY: HistoryOptions = { mergeLines: 1, contextLines: 2, maxEdits: 8 };

const LINE_BREAK = /\r\n|\r|\n/;

export function splitLines(text: string): string[] {
  return text.split(LINE_BREAK);
}

export class DocumentHistory {
  private lines: string[];
  private live: LiveEdit | undefined;
  /** Closed edits, oldest first. */
  private closed: EditEvent[] = [];

  constructor(readonly path: string, text: string, private readonly nextSeq: () => number, private readonly opts: HistoryOptions = DEFAULT_HISTORY) {
    this.lines = splitLines(text);
  }

  /** The text as this history knows it (the document's, when every change was applied). */
  text(): string {
    return this.lines.join('\n');
  }

  get lineCount(): number {
    return this.lines.length;
  }

  line(i: number): string {
    return this.lines[i] ?? '';
  }

  /** Lines [from, to) of the current text. */
  slice(from: number, to: number): string[] {
    return this.lines.slice(from, to);
  }

  /** Where the edit being made is now (current lines), or undefined before any edit. */
  liveRange(): { startLine: number; endLine: number } | undefined {
    const l = this.live;
    return l && { startLine: l.startLine, endLine: l.startLine + l.lineCount - 1 };
  }

  /** Applies one change (in the order VS Code lists them) and merges it into the edit being made. */
  apply(c: TextChange): void {
    const a = Math.max(0, Math.min(c.startLine, this.lines.length - 1));
    const b = Math.max(a, Math.min(c.endLine, this.lines.length - 1));
    const replaced = this.lines.slice(a, b + 1);
    const inserted = splitLines(this.lines[a]!.slice(0, c.startCharacter) + c.text + this.lines[b]!.slice(c.endCharacter));
    const delta = inserted.length - replaced.length;
    const live = this.live;
    const liveEnd = live ? live.startLine + live.lineCount - 1 : -1;
    const near = live && a <= liveEnd + this.opts.mergeLines + 1 && b >= live.startLine - this.opts.mergeLines - 1;
    if (live && near) {
      const start = Math.min(live.startLine, a);
      const endBefore = Math.max(liveEnd, b);
      // The lines the edit now reaches beyond its own were unchanged until this change (they
      // were outside it): their old text is the text before this change.
      live.oldLines = [...this.lines.slice(start, live.startLine), ...live.oldLines, ...this.lines.slice(liveEnd + 1, endBefore + 1)];
      live.startLine = start;
      live.lineCount = endBefore - start + 1 + delta;
      live.seq = this.nextSeq();
      this.lines.splice(a, b - a + 1, ...inserted);
      return;
    }
    this.close(); // before the splice: its diff is numbered as the text is until this change
    this.lines.splice(a, b - a + 1, ...inserted);
    this.live = { startLine: a, lineCount: inserted.length, oldLines: replaced, seq: this.nextSeq() };
  }

  /** Replaces the whole text (a reload from disk): the edits so far no longer line up with it. */
  reset(text: string): void {
    this.lines = splitLines(text);
    this.live = undefined;
    this.closed = [];
  }

  /** This document's edits, oldest first: the closed ones, then the one being made. */
  events(): EditEvent[] {
    const live = this.liveEvent();
    return live ? [...this.closed, live] : [...this.closed];
  }

  private liveEvent(): EditEvent | undefined {
    const l = this.live;
    if (!l) return undefined;
    const diff = this.diff(l);
    return diff ? { path: this.path, diff, seq: l.seq } : undefined;
  }

  private close(): void {
    const event = this.liveEvent();
    this.live = undefined;
    if (!event) return; // changed and changed back: nothing to tell
    this.closed.push(event);
    if (this.closed.length > this.opts.maxEdits) this.closed.splice(0, this.closed.length - this.opts.maxEdits);
  }

  /** The unified diff of an edit, its hunks numbered as lines of the current text. */
  private diff(l: LiveEdit): string {
    const ctx = this.opts.contextLines;
    // A text that ends with a line end splits into a last '' that is no line of its own.
    const lineCount = this.lines[this.lines.length - 1] === '' ? this.lines.length - 1 : this.lines.length;
    const from = Math.max(0, l.startLine - ctx);
    const to = Math.max(l.startLine + l.lineCount, Math.min(lineCount, l.startLine + l.lineCount + ctx));
    const before = this.lines.slice(from, l.startLine);
    const after = this.lines.slice(l.startLine + l.lineCount, to);
    let now = this.lines.slice(l.startLine, l.startLine + l.lineCount);
    let old = l.oldLines;
    // The edit reaches the end of a text that ends with a line end: that last '' is no line.
    if (l.startLine + l.lineCount === this.lines.length && now[now.length - 1] === '' && old[old.length - 1] === '') {
      now = now.slice(0, -1);
      old = old.slice(0, -1);
    }
    // A line end after every line, so no hunk says "\ No newline at end of file" about a cut.
    const text = (ls: string[]): string => ls.map((s) => `${s}\n`).join('');
    const patch = structuredPatch('a', 'b', text([...before, ...old, ...after]), text([...before, ...now, ...after]), undefined, undefined, { context: ctx });
    return patch.hunks.map((h) => {
      const oldStart = h.oldStart + from;
      const newStart = h.newStart + from;
      return [`@@ -${h.oldLines === 0 ? oldStart - 1 : oldStart},${h.oldLines} +${h.newLines === 0 ? newStart - 1 : newStart},${h.newLines} @@`, ...h.lines].join('\n');
    }).join('\n');
  }
}

/** Rough tokens of a text (about 3 characters each for code), for budgets only. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 3);

export interface EventBudget {
  /** Edits sent at most (all documents). */
  maxEvents: number;
  /** Their diffs' tokens at most (estimateTokens); the newest edit is cut to fit. */
  maxTokens: number;
}

/** Every open document's history: the recent edits across files, newest kept first within a budget. */
export class EditHistory {
  private readonly docs = new Map<string, DocumentHistory>();
  private seq = 0;

  constructor(private readonly opts: HistoryOptions = DEFAULT_HISTORY) {}

  /** The document's history, made from its text when it is new. */
  open(key: string, path: string, text: string): DocumentHistory {
    let d = this.docs.get(key);
    if (!d) {
      d = new DocumentHistory(path, text, () => ++this.seq, this.opts);
      this.docs.set(key, d);
    }
    return d;
  }

  get(key: string): DocumentHistory | undefined {
    return this.docs.get(key);
  }

  forget(key: string): void {
    this.docs.delete(key);
  }

  /** Recent edits across documents, oldest first, within the budget (the newest win). */
  recent(budget: EventBudget): EditEvent[] {
    const all = [...this.docs.values()].flatMap((d) => d.events()).sort((x, y) => y.seq - x.seq);
    const out: EditEvent[] = [];
    let tokens = 0;
    for (const e of all) {
      if (out.length >= budget.maxEvents) break;
      const cost = estimateTokens(e.diff) + estimateTokens(e.path);
      if (tokens + cost > budget.maxTokens) {
        if (out.length === 0) out.push({ ...e, diff: cutDiff(e.diff, budget.maxTokens - estimateTokens(e.path)) });
        break;
      }
      tokens += cost;
      out.push(e);
    }
    return out.reverse();
  }
}

/** The first lines of a diff that fit `tokens` (a huge paste still tells where it was). */
function cutDiff(diff: string, tokens: number): string {
  const lines = diff.split('\n');
  const out: string[] = [];
  let used = 0;
  for (const l of lines) {
    used += estimateTokens(`${l}\n`);
    if (used > tokens) break;
    out.push(l);
  }
  return out.join('\n');
}
