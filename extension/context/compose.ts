// Editor context (a selection, a file) as the text the model reads: each piece a fenced block
// under a header naming where it comes from, before the question. Pure, shared by the panel chat
// and @strata. The text stays ordinary message content: the server's chat template renders it
// as text, so nothing a file holds is ever read as a control token.
import type { ContextItem } from '../../contract/panel.js';

/** Lines 3-7 of src/a.ts -> "src/a.ts (lines 3-7)". */
export function contextLabel(path: string, range: ContextItem['range']): string {
  if (!range) return path;
  return range.startLine === range.endLine ? `${path} (line ${range.startLine})` : `${path} (lines ${range.startLine}-${range.endLine})`;
}

/** A fence longer than any backtick run inside the text, so the block cannot be closed early. */
function fenceFor(text: string): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  return '`'.repeat(longest + 1);
}

type Composable = Pick<ContextItem, 'path' | 'range' | 'language' | 'text' | 'kind' | 'cutFrom'>;

export function contextBlock(item: Composable): string {
  const fence = fenceFor(item.text);
  const what = item.kind === 'selection' ? 'Selected code from' : item.kind === 'codebase' ? 'From the codebase' : 'File';
  const cut = item.cutFrom ? ` (of ${item.cutFrom} lines; cut to fit the context)` : '';
  return `${what} ${contextLabel(item.path, item.range)}${cut}:\n${fence}${item.language ?? ''}\n${item.text}\n${fence}`;
}

/** The user message: the attached context first (models read the question last), then the question. */
export function composeUserMessage(question: string, context: readonly Composable[]): string {
  if (!context.length) return question;
  return `${context.map(contextBlock).join('\n\n')}\n\n${question}`;
}
