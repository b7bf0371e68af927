// The window of a long infill prefix: it starts at a line chosen by its content, so consecutive
// keystrokes share it and the slot's KV of it is reused. The engine host runs the search next to
// the tokenizer (one tokenizeParts call per infill request, engine/protocol.ts), the route lays
// the prompt out with the result (infill-prompt.ts).

/** About one line in this many can start a prefix window (chosen by the line's content). */
const ANCHOR_EVERY = 8;

function lineHash(line: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < line.length; i++) h = Math.imul(h ^ line.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The char offset where a prefix window starts, between minStart and maxStart: the first line
 * start there whose line is an anchor (content hash), else the first line start, else minStart.
 * Content, not position, decides, so the start stays put while the user types at the end and
 * while an editor's line window drops lines at its top.
 */
export function prefixWindowStart(text: string, minStart: number, maxStart: number): number {
  let s = text.lastIndexOf('\n', minStart - 1) + 1; // start of minStart's line
  if (s < minStart) {
    const nl = text.indexOf('\n', minStart);
    s = nl < 0 ? text.length : nl + 1;
  }
  let firstLine = -1;
  while (s <= maxStart && s < text.length) {
    const nl = text.indexOf('\n', s);
    if (lineHash(text.slice(s, nl < 0 ? undefined : nl)) % ANCHOR_EVERY === 0) return s;
    if (firstLine < 0) firstLine = s;
    if (nl < 0) break;
    s = nl + 1;
  }
  return firstLine >= 0 ? firstLine : minStart;
}

/**
 * The prefix tokens to use when `tokens` (the whole prefix's) are over `budget`. llama-server
 * keeps the last `budget` tokens, so each keystroke moves the window's first token and the whole
 * window is read again. This window starts at a content-chosen line (prefixWindowStart) and may
 * be up to a quarter shorter: consecutive requests share it, the slot's KV of it is reused, and
 * only the cursor's line and the suffix are read again. Falls back to the last `budget` tokens.
 */
export async function windowPrefix(
  text: string, tokens: number[], budget: number, tokenize: (s: string) => number[] | Promise<number[]>,
): Promise<number[]> {
  if (tokens.length <= budget) return tokens;
  const charsPerToken = text.length / tokens.length;
  let minStart = Math.max(0, text.length - Math.floor(budget * charsPerToken));
  for (let attempt = 0; attempt < 4 && minStart < text.length; attempt++) {
    const start = prefixWindowStart(text, minStart, minStart + Math.floor((budget / 4) * charsPerToken));
    const window = await tokenize(text.slice(start));
    if (window.length <= budget) return window;
    minStart = start + Math.max(1, Math.ceil((window.length - budget) * charsPerToken));
  }
  return tokens.slice(tokens.length - budget);
}
