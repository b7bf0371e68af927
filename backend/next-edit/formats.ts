// Next-edit prompts in the layouts models were trained on, and the rewritten region read back out
// of their answers. Zed's Zeta is a raw completion prompt (instruction, user edits as diffs, the
// excerpt with the editable region and cursor marked) whose answer repeats the excerpt; the prompt
// ends with the response's opening up to the region, so the answer is the region and its end
// marker. Continue's Instinct is a chat prompt (a system prompt, then context snippets, user edits
// newest first and the marked excerpt) whose answer is the region. The generic layout asks any chat
// model for the region in one code block. The section headers and markers are the models' own
// (from their model cards and prompt code); the prose is ours. Pure functions: unit-tested with
// golden prompts.
import type { NextEditEvent, NextEditFormat, NextEditOutcome, NextEditRequest, NextEditSnippet } from '../../contract/next-edit.js';
import type { PromptSegment } from '../../native/lib/addon.js';

export const REGION_START = '<|editable_region_start|>';
export const REGION_END = '<|editable_region_end|>';
export const CURSOR = '<|user_cursor_is_here|>';
export const START_OF_FILE = '<|start_of_file|>';
export const CONTEXT_FILE = '<|context_file|>';
export const SNIPPET = '<|snippet|>';

/** What a prompt is made of: raw segments (template text may hold control tokens, request text never) or chat messages. */
export type NextEditPrompt =
  | { kind: 'raw'; format: 'zeta'; segments: PromptSegment[]; prediction: string; stop: string[] }
  | { kind: 'chat'; format: 'instinct' | 'generic'; system: string; user: string; prediction: string; stop: string[] };

/** The request's format, or the one its model's name suggests. */
export function chooseFormat(asked: NextEditFormat | 'auto' | undefined, modelNames: string[]): NextEditFormat {
  if (asked && asked !== 'auto') return asked;
  const names = modelNames.join(' ').toLowerCase();
  if (/\bzeta\b|zed-industries/.test(names)) return 'zeta';
  if (/\binstinct\b/.test(names)) return 'instinct';
  return 'generic';
}

/** The region's text as the model sees it: the cursor marked when it is inside. */
function markedRegion(req: NextEditRequest): string {
  const c = req.cursor;
  if (c === undefined || c === null || c < 0 || c > req.region.length) return req.region;
  return `${req.region.slice(0, c)}${CURSOR}${req.region.slice(c)}`;
}

/** Text that ends with a line end (the region's end marker starts its own line). */
function lineEnded(s: string): string {
  return s === '' || s.endsWith('\n') ? s : `${s}\n`;
}

// --- Zeta --------------------------------------------------------------------------------------

const ZETA_INSTRUCTION = 'You are a code completion assistant. Read the user\'s recent edits, then rewrite the excerpt they give you with the edits they are likely to make next inside it, taking the cursor position into account.';

function zetaEvents(edits: NextEditEvent[]): string {
  return edits.map((e) => `User edited "${e.file}":\n\`\`\`diff\n${lineEnded(e.diff)}\`\`\``).join('\n\n');
}

/**
 * Zeta: `### Instruction:`, `### User Edits:`, `### User Excerpt:` (a fence named by the path,
 * <|start_of_file|> at the file's top, the region between its markers with the cursor marker),
 * `### Response:` and the response's opening up to the region.
 */
function zetaPrompt(req: NextEditRequest): NextEditPrompt {
  const before = req.before ?? '';
  const after = req.after ?? '';
  const sof = req.start_of_file ? `${START_OF_FILE}\n` : '';
  const plain = (text: string): PromptSegment => ({ text, plain: true });
  const marks = (text: string): PromptSegment => ({ text });
  // The excerpt's opening, in the prompt and again as the response's start.
  const opening = (): PromptSegment[] => [marks('```'), plain(`${req.file}\n`), marks(sof), plain(before), marks(`${REGION_START}\n`)];
  const segments: PromptSegment[] = [
    marks(`### Instruction:\n${ZETA_INSTRUCTION}\n\n### User Edits:\n\n`), plain(zetaEvents(req.edits ?? [])),
    marks('\n\n### User Excerpt:\n\n'), ...opening(), plain(lineEnded(markedRegion(req))), marks(`${REGION_END}\n`),
    plain(lineEnded(after)), marks('```\n\n### Response:\n'), ...opening(),
  ].filter((s) => s.text !== '');
  // A region that holds the end marker as text would stop the answer inside it: no stop string then.
  const stop = req.region.includes(REGION_END) ? [] : [REGION_END];
  return { kind: 'raw', format: 'zeta', segments, prediction: `${lineEnded(req.region)}${REGION_END}`, stop };
}

// --- Instinct ----------------------------------------------------------------------------------

const INSTINCT_SYSTEM = [
  'You are Instinct, a next-edit predictor for a code editor. Predict the edit the developer will make next inside the code marked by',
  `${REGION_START} and ${REGION_END}, using what you are given:`,
  '',
  `- Context: under "### Context", excerpts of other files; each is a ${CONTEXT_FILE} marker, the file path, a ${SNIPPET} marker and the excerpt. Not all of it matters.`,
  '- User Edits: under "### User Edits:", the latest changes as unified diffs, newest first.',
  `- User Excerpt: under "### User Excerpt:", the current file's path and an excerpt of it holding the editable region; rewrite only that region. ${CURSOR} marks the cursor; do not write it.`,
  '',
  'Continue what the developer is doing: finish the change they started, or leave the code as it is when nothing needs to change.',
  'Keep the indentation and style of the code.',
  '',
  '# Output Format',
  '',
  '- Only the rewritten code of the editable region, without the markers.',
  '- No code from outside the region.',
  '- Do not undo the developer\'s last change.',
].join('\n');

const INSTINCT_PREFIX = 'Use the user excerpt, the user edits and the snippets to see what the developer intends, and update the editable region of the excerpt with the changes they would make next: code added, removed or modified.';

function instinctContext(snippets: NextEditSnippet[]): string {
  return snippets.map((s) => `${CONTEXT_FILE}: ${s.file}\n${SNIPPET}\n${s.text}`).join('\n');
}

function instinctEdits(edits: NextEditEvent[]): string {
  return [...edits].reverse().map((e) => `User edited file "${e.file}"\n\n\`\`\`diff\n${lineEnded(e.diff)}\`\`\``).join('\n\n');
}

/** The excerpt with the region's markers on lines of their own. */
function markedExcerpt(req: NextEditRequest): string {
  return `${req.before ?? ''}${REGION_START}\n${lineEnded(markedRegion(req))}${REGION_END}\n${req.after ?? ''}`;
}

/** Instinct: its system prompt, then `### Context:`, `### User Edits:`, `### User Excerpt:` (path, marked excerpt), `### Response:`. */
function instinctPrompt(req: NextEditRequest): NextEditPrompt {
  const user = `${INSTINCT_PREFIX}\n\n### Context:\n${instinctContext(req.context ?? [])}\n\n### User Edits:\n\n${instinctEdits(req.edits ?? [])}\n\n`
    + `### User Excerpt:\n${req.file}\n\n${lineEnded(markedExcerpt(req))}\`\`\`\n### Response:`;
  return { kind: 'chat', format: 'instinct', system: INSTINCT_SYSTEM, user, prediction: req.region, stop: [] };
}

// --- Generic -----------------------------------------------------------------------------------

const GENERIC_SYSTEM = [
  'You predict the next edit a developer makes in a code editor.',
  `You get their recent edits as unified diffs and an excerpt of the current file in which the lines between ${REGION_START} and ${REGION_END} may be rewritten; ${CURSOR} marks the cursor.`,
  'Answer with the whole rewritten region in one fenced code block and nothing else: no markers, no cursor marker, no explanation.',
  'Keep code that needs no change exactly as it is. When nothing should change, answer with the region unchanged.',
].join('\n');

function genericPrompt(req: NextEditRequest): NextEditPrompt {
  const lang = req.language ?? '';
  const edits = (req.edits ?? []).map((e) => `${e.file}:\n\`\`\`diff\n${lineEnded(e.diff)}\`\`\``).join('\n\n') || '(none)';
  const context = (req.context ?? []).map((s) => `${s.file}:\n\`\`\`\n${lineEnded(s.text)}\`\`\``).join('\n\n');
  const user = [
    ...(context ? [`Other files:\n\n${context}`] : []),
    `Recent edits, oldest first:\n\n${edits}`,
    `Current file: ${req.file}${lang ? ` (${lang})` : ''}\n\n\`\`\`${lang}\n${lineEnded(markedExcerpt(req))}\`\`\``,
    'Rewrite the editable region.',
  ].join('\n\n');
  return { kind: 'chat', format: 'generic', system: GENERIC_SYSTEM, user, prediction: `\`\`\`${lang}\n${lineEnded(req.region)}\`\`\``, stop: [] };
}

/** The prompt for `format`; `prediction` is the answer the model gives when it changes nothing. */
export function buildNextEditPrompt(format: NextEditFormat, req: NextEditRequest): NextEditPrompt {
  switch (format) {
    case 'zeta': return zetaPrompt(req);
    case 'instinct': return instinctPrompt(req);
    case 'generic': return genericPrompt(req);
  }
}

// --- Answers -----------------------------------------------------------------------------------

export interface ParsedAnswer { outcome: NextEditOutcome; region: string }

/** The first fenced block's body, or null when the text has no complete one. */
function fencedBody(text: string): string | null {
  const open = /```[^\n`]*\n/.exec(text);
  if (!open) return null;
  const from = open.index + open[0].length;
  const close = text.indexOf('```', from);
  return close < 0 ? null : text.slice(from, close);
}

/** Instinct may fence its answer or echo a marker line; the region is what is left. */
function instinctBody(text: string): string {
  const fenced = fencedBody(text);
  let body = fenced ?? text;
  const start = body.indexOf(`${REGION_START}\n`);
  if (start >= 0) body = body.slice(start + REGION_START.length + 1);
  const end = body.lastIndexOf(REGION_END);
  if (end >= 0) body = body.slice(0, end);
  return body;
}

/**
 * The rewritten region in `text` (the answer as the model wrote it), with `stopped` when the
 * format's stop string ended it and `cut` when it ran out of tokens.
 */
export function parseNextEditAnswer(
  format: NextEditFormat, req: NextEditRequest, text: string, end: { stopped: boolean; cut: boolean },
): ParsedAnswer {
  const unparsed: ParsedAnswer = { outcome: 'unparsed', region: req.region };
  let body: string | null;
  if (format === 'zeta') {
    if (end.stopped) body = text;
    else {
      const at = text.lastIndexOf(REGION_END);
      body = at >= 0 ? text.slice(0, at) : null;
    }
  } else if (end.cut) {
    body = null;
  } else {
    body = format === 'generic' ? fencedBody(text) : instinctBody(text);
  }
  if (body === null) return unparsed;
  // The cursor marker is the prompt's, not code (unless the region itself holds that text).
  if (!req.region.includes(CURSOR)) body = body.split(CURSOR).join('');
  // The region's last line end is the layout's when the region had none.
  if (!req.region.endsWith('\n') && body.endsWith('\n')) body = body.slice(0, -1);
  return body === req.region ? { outcome: 'unchanged', region: req.region } : { outcome: 'edited', region: body };
}
