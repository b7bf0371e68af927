// Finds where a JSON object or array ends in text that may still be arriving, without
// re-reading what it has already seen (a long tool-call argument arrives token by token).
// Only brackets and strings are tracked; JSON.parse judges the finished slice.

export interface JsonScan {
  /** Index in the text where the value starts ('{' or '['). */
  readonly start: number;
  /** Next index to read. */
  pos: number;
  depth: number;
  inString: boolean;
  escaped: boolean;
  /** Index just past the value once found, else -1. */
  end: number;
}

export function startJsonScan(start: number): JsonScan {
  return { start, pos: start, depth: 0, inString: false, escaped: false, end: -1 };
}

/**
 * Continues `scan` over `text` (the same text, possibly grown since the last call).
 * Returns the index just past the closing bracket, -1 while the value is incomplete, or -2 when
 * `abortOn` (say a closing tag) appears outside a string first: the value can no longer be whole.
 */
export function continueJsonScan(text: string, scan: JsonScan, abortOn?: string): number {
  if (scan.end >= 0) return scan.end;
  const abortChar = abortOn ? abortOn.charCodeAt(0) : -1;
  for (let i = scan.pos; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (scan.inString) {
      if (scan.escaped) scan.escaped = false;
      else if (c === 0x5c /* \ */) scan.escaped = true;
      else if (c === 0x22 /* " */) scan.inString = false;
      continue;
    }
    if (c === abortChar && abortOn) {
      if (text.startsWith(abortOn, i)) return -2;
      if (abortOn.startsWith(text.slice(i))) {
        scan.pos = i;   // may still become abortOn: look again when more text arrives
        return -1;
      }
    }
    if (c === 0x22) {
      scan.inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      scan.depth++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      scan.depth--;
      if (scan.depth <= 0) {
        scan.pos = scan.end = i + 1;
        return scan.end;
      }
    }
  }
  scan.pos = text.length;
  return -1;
}
