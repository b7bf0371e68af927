// Inline (ghost text) completions over the server's /v1/infill. The rules live in the pure
// modules next to this file; this one only connects them to VS Code.
import * as vscode from 'vscode';
import { StrataApiError } from '../client/client.js';
import type { ServerConnection } from '../server/connection.js';
import { completionSettings } from '../config/config.js';
import { CompletionCache } from './cache.js';
import { CandidateRequests } from './candidate-requests.js';
import { refusesCandidates } from './candidates.js';
import { codebaseQuery, indexChunks, pickChunks, RecentEdits, type ChunkSource, type IndexHit } from './context-chunks.js';
import { LatestOnlyScheduler } from './debounce.js';
import type { CompletionGate } from './pause.js';
import type { CompletionStats } from './stats.js';
import { planInfill } from './selection.js';
import { isMidLine, trimCompletion } from './trim.js';
import { buildWindow } from './window.js';

const PREFIX_LINES = 64;
const SUFFIX_LINES = 16;
const ACCEPTED_COMMAND = 'strata.completionAccepted';
/** Files larger than this are not read whole for extra context chunks. */
const MAX_CONTEXT_FILE_LINES = 20_000;

/**
 * Items another feature shows at the cursor in place of a completion (a next edit that inserts
 * there), or undefined. Asked first, so one provider decides what the ghost text is.
 */
export type InlineItemsFirst = (doc: vscode.TextDocument, pos: vscode.Position) => vscode.InlineCompletionItem[] | undefined;

/** The codebase index's best chunks for a query (undefined: no index). */
export type IndexSearch = (query: string) => Promise<IndexHit[]>;

interface InlineCompletionDeps {
  server: ServerConnection;
  stats: CompletionStats;
  gate: CompletionGate;
  onStatsChange: () => void;
  log: vscode.LogOutputChannel;
  first?: InlineItemsFirst | undefined;
  indexSearch?: IndexSearch | undefined;
}

export function registerInlineCompletions(context: vscode.ExtensionContext, server: ServerConnection, stats: CompletionStats, gate: CompletionGate, onStatsChange: () => void, log: vscode.LogOutputChannel, first?: InlineItemsFirst, indexSearch?: IndexSearch): void {
  const provider = new InlineCompletions({ server, stats, gate, onStatsChange, log, first, indexSearch });
  context.subscriptions.push(
    vscode.languages.registerInlineCompletionItemProvider({ scheme: 'file' }, provider),
    vscode.commands.registerCommand(ACCEPTED_COMMAND, () => { stats.accepted(); onStatsChange(); }),
    vscode.workspace.onDidChangeTextDocument((e) => provider.recordEdit(e)),
    vscode.workspace.onDidCloseTextDocument((d) => provider.forgetFile(d)),
    server.onDidChange((s) => { if (s.state !== 'ready') provider.reset(); }),
    provider,
  );
}

/** Where the completion goes and what it sends: the plan for the text at the cursor and its window's place. */
interface Ask { doc: vscode.TextDocument; pos: vscode.Position; plan: NonNullable<ReturnType<typeof planInfill>>; window: { from: number; fromLine: number; toLine: number } }

class InlineCompletions implements vscode.InlineCompletionItemProvider, vscode.Disposable {
  private readonly cache = new CompletionCache();
  private readonly candidates = new CandidateRequests(this.cache);
  private readonly scheduler = new LatestOnlyScheduler();
  private readonly edits = new RecentEdits();
  /** A model without FIM tokens answers 400 to every infill: stop asking until the server changes. */
  private noFim = false;
  /** A server that refuses `n` on infill (older ones, other servers) gets one candidate per request. */
  private singleOnly = false;

  constructor(private readonly deps: InlineCompletionDeps) {}

  async provideInlineCompletionItems(doc: vscode.TextDocument, pos: vscode.Position, ictx: vscode.InlineCompletionContext, token: vscode.CancellationToken): Promise<vscode.InlineCompletionItem[] | undefined> {
    const preempt = this.deps.first?.(doc, pos);
    if (preempt) return preempt;
    const settings = completionSettings();
    const client = this.deps.server.client;
    const explicit = ictx.triggerKind === vscode.InlineCompletionTriggerKind.Invoke;
    if (!settings.enabled || !client || this.noFim || !this.deps.gate.allows(doc.languageId, explicit)) return undefined;
    const n = this.singleOnly ? 1 : settings.candidates;
    const ask = this.plan(doc, pos, ictx, settings.maxLines);
    if (!ask) return undefined;

    // A request for this text still runs: join it. Cycling (Alt+] / Alt+[) asks explicitly, and
    // gets its full list; an automatic ask gets its first candidate.
    const running = n > 1 ? this.candidates.pending(ask.plan.prefix, ask.plan.suffix) : undefined;
    if (running) return this.items(ask, explicit ? await running.all : [await running.first.catch(() => '')]);
    const cached = this.cache.getAll(ask.plan.prefix, ask.plan.suffix);
    if (cached !== undefined) {
      this.deps.stats.cacheHit();
      return this.items(ask, cached);
    }

    // Once the first of several candidates shows, VS Code's token ends with the next ask (an
    // Alt+] too), but the others still come in for it: only a newer request stops this one.
    let shown = false;
    const signal = await this.scheduler.wait(explicit ? 0 : settings.debounceMs, (l) => token.onCancellationRequested(() => { if (!shown) l(); }));
    if (!signal || token.isCancellationRequested) return undefined;
    const extra = await this.contextChunks(ask, settings.codebaseContext);
    if (signal.aborted || token.isCancellationRequested) return undefined;

    const single = isMidLine(ask.plan.cursor);
    const req = {
      prefix: ask.plan.prefix, suffix: ask.plan.suffix, extra,
      maxTokens: single ? 64 : Math.min(512, settings.maxLines * 32), maxPredictMs: single ? 1000 : 2500,
      // A newer keystroke's request replaces this one inside the server too (not only by the abort).
      supersedeKey: doc.uri.toString(),
    };
    const trim = (raw: string): string => trimCompletion(raw, ask.plan.cursor);
    const { stats, onStatsChange } = this.deps;
    stats.request();
    const t0 = performance.now();
    try {
      let shownText: string;
      if (n > 1) {
        const run = this.candidates.start(ask.plan.prefix, ask.plan.suffix, client.infillStream({ ...req, n }, signal), trim);
        shownText = await run.first;
        shown = true;
        void run.all.then(onStatsChange);
      } else {
        shownText = trim((await client.infill(req, signal)).content);
        // Cached even when VS Code no longer wants it: typing on will likely ask for it again.
        this.cache.put(ask.plan.prefix, ask.plan.suffix, shownText);
      }
      stats.latency(performance.now() - t0);
      onStatsChange();
      if (token.isCancellationRequested) return undefined;
      return this.items(ask, [shownText]);
    } catch (err) {
      if (signal.aborted || token.isCancellationRequested) stats.cancelled();
      else this.failed(err, n);
      onStatsChange();
      return undefined;
    }
  }

  recordEdit(e: vscode.TextDocumentChangeEvent): void {
    if (e.document.uri.scheme !== 'file') return;
    for (const c of e.contentChanges) this.edits.record(vscode.workspace.asRelativePath(e.document.uri), c.range.start.line);
  }

  forgetFile(d: vscode.TextDocument): void {
    this.edits.forget(vscode.workspace.asRelativePath(d.uri));
  }

  /** The server went away or changed: nothing cached or learned about it holds. */
  reset(): void {
    this.scheduler.cancel();
    this.cache.clear();
    this.noFim = false;
    this.singleOnly = false;
  }

  dispose(): void {
    this.scheduler.cancel();
  }

  /** The window around the cursor and what to ask for there (undefined: nothing to complete). */
  private plan(doc: vscode.TextDocument, pos: vscode.Position, ictx: vscode.InlineCompletionContext, maxLines: number): Ask | undefined {
    const from = Math.max(0, pos.line - PREFIX_LINES);
    const to = Math.min(doc.lineCount - 1, pos.line + SUFFIX_LINES);
    const lines: string[] = [];
    for (let i = from; i <= to; i++) lines.push(doc.lineAt(i).text);
    const win = buildWindow(lines, pos.line - from, pos.character, { prefixLines: PREFIX_LINES, suffixLines: SUFFIX_LINES, maxLines });
    // While the suggest widget is open, only an item extending its selected entry is shown.
    const sel = ictx.selectedCompletionInfo;
    const plan = planInfill(win, pos, sel && { start: sel.range.start, end: sel.range.end, text: sel.text });
    return plan ? { doc, pos, plan, window: { from, fromLine: win.fromLine, toLine: win.toLine } } : undefined;
  }

  /** The items VS Code shows for these completions (undefined: none applies). */
  private items(ask: Ask, completions: readonly string[]): vscode.InlineCompletionItem[] | undefined {
    const range = new vscode.Range(ask.pos.line, ask.plan.replaceStart, ask.pos.line, ask.plan.replaceEnd);
    const out: vscode.InlineCompletionItem[] = [];
    for (const c of completions) {
      const text = ask.plan.insertText(c);
      if (text !== undefined) out.push(new vscode.InlineCompletionItem(text, range, { title: 'Accepted', command: ACCEPTED_COMMAND }));
    }
    if (!out.length) return undefined;
    this.deps.stats.shown();
    this.deps.onStatsChange();
    return out;
  }

  /** Chunks of the recently edited and visible files, and of the codebase index when asked for. */
  private async contextChunks(ask: Ask, codebase: boolean) {
    const chunkOpts = {
      chunkLines: 32, maxChunks: 4, maxChars: 8000,
      exclude: { filename: vscode.workspace.asRelativePath(ask.doc.uri), fromLine: ask.window.from + ask.window.fromLine, toLine: ask.window.from + ask.window.toLine },
    };
    const extra = pickChunks(contextSources(this.edits), chunkOpts);
    const query = codebase && this.deps.indexSearch ? codebaseQuery(ask.plan.prefix) : '';
    if (query) {
      const hits = await this.deps.indexSearch!(query).catch((e: Error) => { this.deps.log.debug(`codebase context for a completion: ${e.message}`); return []; });
      extra.push(...indexChunks(hits, extra, { ...chunkOpts, maxChunks: chunkOpts.maxChunks + 2 }));
    }
    return extra;
  }

  /** A request that failed on its own (not cancelled): what it says about the server. */
  private failed(err: unknown, n: number): void {
    const { log, stats } = this.deps;
    if (err instanceof StrataApiError && err.is('fim_not_supported')) {
      this.noFim = true;
      log.warn(`inline completions paused: ${err.message}`);
      void vscode.window.showInformationMessage(`Strata: inline completions need a code model with fill-in-the-middle tokens. ${err.message}`);
    } else if (n > 1 && refusesCandidates(err)) {
      this.singleOnly = true;
      log.warn(`the server takes one completion candidate per request (${err.message}); asking for one from now on`);
    } else {
      stats.error();
      log.debug(`inline completion failed: ${(err as Error).message}`);
    }
  }
}

/** Recently edited files (at their edit lines) and visible editors (at their visible middle). */
function contextSources(edits: RecentEdits): ChunkSource[] {
  const byName = new Map<string, vscode.TextDocument>();
  for (const d of vscode.workspace.textDocuments) {
    if (d.uri.scheme === 'file' && d.lineCount <= MAX_CONTEXT_FILE_LINES) byName.set(vscode.workspace.asRelativePath(d.uri), d);
  }
  const sources = new Map<string, ChunkSource>();
  const n = edits.list().length;
  edits.list().forEach((f, i) => {
    const d = byName.get(f.filename);
    if (d) sources.set(f.filename, { filename: f.filename, text: d.getText(), focusLines: [...f.lines], lastUsed: 1000 + n - i });
  });
  for (const ed of vscode.window.visibleTextEditors) {
    const name = vscode.workspace.asRelativePath(ed.document.uri);
    const r = ed.visibleRanges[0];
    if (!r || !byName.has(name)) continue;
    const mid = Math.floor((r.start.line + r.end.line) / 2);
    const src = sources.get(name);
    if (src) src.focusLines.push(mid);
    else sources.set(name, { filename: name, text: ed.document.getText(), focusLines: [mid], lastUsed: 0 });
  }
  return [...sources.values()];
}
