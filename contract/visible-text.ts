// Text shown to the user for a decision (a command before Run, an MCP server's command before it
// starts) must show what will run: characters that are invisible, reorder the text (bidi
// controls) or move the cursor are written as escapes (\u202e), and long runs of blank lines or
// spaces are counted instead of pushing the rest of the command out of view. Used by the
// extension and the webview alike.

// C0 and C1 controls (not the line feed or tab), DEL, and the format, bidi, invisible and
// space-like characters a reader cannot tell apart from nothing or from a plain space.
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each code point is its own entry; the joiners are what it looks for
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u00a0\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;

/** Line breaks in a row from which a run is counted rather than shown. */
const BLANK_RUN = 3;
/** Spaces in a row from which a run is counted rather than shown. */
const SPACE_RUN = 16;

const escapeChar = (c: string): string => {
  const cp = c.codePointAt(0)!;
  return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
};

/** `text` with hidden characters escaped and long blank runs counted (see above). */
export function visibleText(text: string): string {
  return text
    .replace(/\r/g, '\\r')
    .replace(HIDDEN, escapeChar)
    .replace(new RegExp(`\\n(?:[ \\t]*\\n){${BLANK_RUN - 1},}`, 'g'), (run) => `\n[${run.split('\n').length - 2} blank lines]\n`)
    .replace(new RegExp(` {${SPACE_RUN},}`, 'g'), (run) => ` [${run.length} spaces] `);
}
