// The references a user attaches in VS Code's chat (#file, #selection, dragged files) as context
// items, the same kind the panel chat sends.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { ContextItem } from '../../contract/panel.js';
import { fileContext, MAX_CONTEXT_CHARS } from './editor-context.js';

async function one(ref: vscode.ChatPromptReference): Promise<{ item: ContextItem; uri: vscode.Uri | null } | null> {
  const v = ref.value;
  if (v instanceof vscode.Location) {
    const doc = await vscode.workspace.openTextDocument(v.uri);
    const text = doc.getText(v.range).slice(0, MAX_CONTEXT_CHARS);
    return {
      item: {
        id: randomUUID(), kind: 'selection', path: vscode.workspace.asRelativePath(v.uri),
        range: { startLine: v.range.start.line + 1, endLine: v.range.end.line + 1 }, language: doc.languageId || null, text, tokens: null,
      },
      uri: v.uri,
    };
  }
  if (v instanceof vscode.Uri) {
    if (v.scheme !== 'file' && v.scheme !== 'untitled') return null;
    const got = fileContext(await vscode.workspace.openTextDocument(v));
    return typeof got === 'string' ? null : { item: got, uri: v };
  }
  if (typeof v === 'string' && v.trim()) {
    return { item: { id: randomUUID(), kind: 'file', path: ref.id, range: null, language: null, text: v.slice(0, MAX_CONTEXT_CHARS), tokens: null }, uri: null };
  }
  return null;
}

/** Context items for a chat request's references (unreadable ones are skipped and named). */
export async function referenceItems(refs: readonly vscode.ChatPromptReference[]): Promise<{ items: ContextItem[]; uris: vscode.Uri[]; skipped: string[] }> {
  const items: ContextItem[] = [];
  const uris: vscode.Uri[] = [];
  const skipped: string[] = [];
  for (const ref of refs) {
    try {
      const got = await one(ref);
      if (!got) { skipped.push(ref.id); continue; }
      items.push(got.item);
      if (got.uri) uris.push(got.uri);
    } catch {
      skipped.push(ref.id);
    }
  }
  return { items, uris, skipped };
}
