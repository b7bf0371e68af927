// Inline (ghost text) completions over the server's /v1/infill. The rules live in the pure
// modules next to this file; this one only connects them to VS Code.
import * as vscode from 'vscode';
import { StrataApiError } from '../client/client.js';
import type { ServerConnection } from '../server/connection.js';
import { completionSettings } from '../config/config.js';
import { CompletionCache } from './cache.js';
import { CandidateRequests } from './candidateRequests.js';
import { refusesCandidates } from './candidates.js';
import { codebaseQuery, indexChunks, pickChunks, RecentEdits, type ChunkSource, type IndexHit } from './contextChunks.js';
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

export function registerInlineCompletions(context: vscode.ExtensionContext, server: ServerConnection, stats: CompletionStats, gate: CompletionGate, onStatsChange: () => void, log: vscode.LogOutputChannel, first?: InlineItemsFirst, indexSearch?: IndexSearch): void {
  const cache = new CompletionCache();
  const candidates = new CandidateRequests(cache);
  const scheduler = new LatestOnlyScheduler();
  const edits = new RecentEdits();
  // A model without FIM tokens answers 400 to every infill: stop asking until the server changes.
  let noFim = false;
  // A server that refuses `n` on infill (older ones, other servers) gets one candidate per request.
  let singleOnly = false;

  const provider: vscode.InlineCompletionItemProvider = {
    async provideInlineCompletionItems(doc, pos, ictx, token) {
      const preempt = first?.(doc, pos);
      if (preempt) return preempt;
      const settings = completionSettings();
      const client = server.client;
      const explicit = ictx.triggerKind === vscode.InlineCompletionTriggerKind.Invoke;
      if (!settings.enabled || !client || noFim || !gate.allows(doc.languageId, explicit)) return undefined;
      const n = singleOnly ? 1 : settings.candidates;

      const from = Math.max(0, pos.line - PREFIX_LINES);
      const to = Math.min(doc.lineCount - 1, pos.line + SUFFIX_LINES);
      const lines: string[] = [];
      for (let i = from; i <= to; i++) lines.push(doc.lineAt(i).text);
      const win = buildWindow(lines, pos.line - from, pos.character, { prefixLines: PREFIX_LINES, suffixLines: SUFFIX_LINES, maxLines: settings.maxLines });
      // While the suggest widget is open, only an item extending its selected entry is shown.
      const sel = ictx.selectedCompletionInfo;
      const plan = planInfill(win, pos, sel && { start: sel.range.start, end: sel.range.end, text: sel.text });
      if (!plan) return undefined;
      const items = (completions: readonly string[]): vscode.InlineCompletionItem[] | undefined => {
        const range = new vscode.Range(pos.line, plan.replaceStart, pos.line, plan.replaceEnd);
        const out: vscode.InlineCompletionItem[] = [];
        for (const c of completions) {
          const text = plan.insertText(c);
          if (text !== undefined) out.push(new vscode.InlineCompletionItem(text, range, { title: 'Accepted', command: ACCEPTED_COMMAND }));
        }
        if (!out.length) return undefined;
        stats.shown();
        onStatsChange();
        return out;
      };

      // A request for this text still runs: join it. Cycling (Alt+] / Alt+[) asks explicitly, and
      // gets its full list; an automatic ask gets its first candidate.
      const running = n > 1 ? candidates.pending(plan.prefix, plan.suffix) : undefined;
      if (running) return items(explicit ? await running.all : [await running.first.catch(() => '')]);
      const cached = cache.getAll(plan.prefix, plan.suffix);
      if (cached !== undefined) {
        stats.cacheHit();
        return items(cached);
      }

      // Once the first of several candidates shows, VS Code's token ends with the next ask (an
      // Alt+] too), but the others still come in for it: only a newer request stops this one.
      let shown = false;
      const signal = await scheduler.wait(explicit ? 0 : settings.debounceMs, (l) => token.onCancellationRequested(() => { if (!shown) l(); }));
      if (!signal || token.isCancellationRequested) return undefined;

      const single = isMidLine(plan.cursor);
      const chunkOpts = {
        chunkLines: 32, maxChunks: 4, maxChars: 8000,
        exclude: { filename: vscode.workspace.asRelativePath(doc.uri), fromLine: from + win.fromLine, toLine: from + win.toLine },
      };
      const extra = pickChunks(contextSources(edits), chunkOpts);
      const query = settings.codebaseContext && indexSearch ? codebaseQuery(plan.prefix) : '';
      if (query) {
        const hits = await indexSearch!(query).catch((e: Error) => { log.debug(`codebase context for a completion: ${e.message}`); return []; });
        if (signal.aborted || token.isCancellationRequested) return undefined;
        extra.push(...indexChunks(hits, extra, { ...chunkOpts, maxChunks: chunkOpts.maxChunks + 2 }));
      }
      const req = {
        prefix: plan.prefix, suffix: plan.suffix, extra,
        maxTokens: single ? 64 : Math.min(512, settings.maxLines * 32), maxPredictMs: single ? 1000 : 2500,
        // A newer keystroke's request replaces this one inside the server too (not only by the abort).
        supersedeKey: doc.uri.toString(),
      };
      const trim = (raw: string): string => trimCompletion(raw, plan.cursor);
      stats.request();
      const t0 = performance.now();
      try {
        let shownText: string;
        if (n > 1) {
          const run = candidates.start(plan.prefix, plan.suffix, client.infillStream({ ...req, n }, signal), trim);
          shownText = await run.first;
          shown = true;
          void run.all.then(onStatsChange);
        } else {
          shownText = trim((await client.infill(req, signal)).content);
          // Cached even when VS Code no longer wants it: typing on will likely ask for it again.
          cache.put(plan.prefix, plan.suffix, shownText);
        }
        stats.latency(performance.now() - t0);
        onStatsChange();
        if (token.isCancellationRequested) return undefined;
        return items([shownText]);
      } catch (err) {
        if (signal.aborted || token.isCancellationRequested) stats.cancelled();
        else if (err instanceof StrataApiError && err.code === 'fim_not_supported') {
          noFim = true;
          log.warn(`inline completions paused: ${err.message}`);
          void vscode.window.showInformationMessage(`Strata: inline completions need a code model with fill-in-the-middle tokens. ${err.message}`);
        } else if (n > 1 && refusesCandidates(err)) {
          singleOnly = true;
          log.warn(`the server takes one completion candidate per request (${err.message}); asking for one from now on`);
        } else {
          stats.error();
          log.debug(`inline completion failed: ${(err as Error).message}`);
        }
        onStatsChange();
        return undefined;
      }
    },
  };

  context.subscriptions.push(
    vscode.languages.registerInlineCompletionItemProvider({ scheme: 'file' }, provider),
    vscode.commands.registerCommand(ACCEPTED_COMMAND, () => { stats.accepted(); onStatsChange(); }),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document.uri.scheme !== 'file') return;
      for (const c of e.contentChanges) edits.record(vscode.workspace.asRelativePath(e.document.uri), c.range.start.line);
    }),
    vscode.workspace.onDidCloseTextDocument((d) => edits.forget(vscode.workspace.asRelativePath(d.uri))),
    server.onDidChange((s) => {
      if (s.state !== 'ready') {
        scheduler.cancel();
        cache.clear();
        noFim = false;
        singleOnly = false;
      }
    }),
    { dispose: () => scheduler.cancel() },
  );
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
