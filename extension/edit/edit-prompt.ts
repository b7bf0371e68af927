// The chat request of an inline edit and how its answer becomes code. Pure, unit-tested.
import type { ChatMessage } from '../../contract/chat.js';
import { contextBlock } from '../context/compose.js';

export interface EditRequest {
  instruction: string;
  path: string;
  language: string | null;
  /** The selected code to rewrite. */
  code: string;
  /** A few lines around the selection, for context (not to be rewritten). */
  before: string;
  after: string;
  startLine: number;
}

export const EDIT_SYSTEM_PROMPT = 'You edit code. Rewrite the selected code as the instruction says. '
  + 'Answer with the complete rewritten selection in one fenced code block and nothing else: no explanation, '
  + 'no code from before or after the selection.';

export function editMessages(r: EditRequest): ChatMessage[] {
  const lines = r.code.split('\n').length;
  const parts = [
    r.before ? `Code before the selection (do not repeat it):\n${contextBlock({ kind: 'file', path: r.path, range: null, language: r.language, text: r.before })}` : null,
    contextBlock({ kind: 'selection', path: r.path, range: { startLine: r.startLine, endLine: r.startLine + lines - 1 }, language: r.language, text: r.code }),
    r.after ? `Code after the selection (do not repeat it):\n${contextBlock({ kind: 'file', path: r.path, range: null, language: r.language, text: r.after })}` : null,
    `Instruction: ${r.instruction}`,
  ].filter((p): p is string => p !== null);
  return [{ role: 'system', content: EDIT_SYSTEM_PROMPT }, { role: 'user', content: parts.join('\n\n') }];
}

/**
 * The code in a model's answer: the first fenced block (also one the answer never closed), else
 * the whole answer. null when there is nothing. The original's trailing newline is kept.
 */
export function extractCode(answer: string, original: string): string | null {
  const open = /^(`{3,}|~{3,})[^\n]*\n/m.exec(answer);
  let code: string;
  if (open) {
    const fence = open[1]!;
    const body = answer.slice(open.index + open[0].length);
    const close = new RegExp(`^${fence[0]}{${fence.length},}\\s*$`, 'm').exec(body);
    code = close ? body.slice(0, close.index) : body;
    code = code.replace(/\n$/, '');
  } else {
    code = answer.trim();
  }
  if (!code.trim()) return null;
  if (original.endsWith('\n') && !code.endsWith('\n')) code += '\n';
  return code;
}
