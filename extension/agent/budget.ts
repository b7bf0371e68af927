// Tool results are bounded in tokens before they join the conversation, so one long file or
// command output cannot crowd the conversation's own prefix out of the model's context. Counted
// with the server's tokenizer (/v1/tokenize) when there is one, else estimated from characters
// (3 characters a token, on the safe side for code); the note the model reads says which.

export type TokenCounter = (text: string, signal: AbortSignal) => Promise<number>;

export const CHARS_PER_TOKEN = 3;

export const estimateTokens = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN);

export interface Bounded { text: string; tokens: number; cut: boolean; counted: 'tokenizer' | 'estimate' }

/**
 * `text` within `maxTokens`: whole when it fits, else its head (or, for command output, its
 * head and tail: errors come last) with a note saying how much was left out.
 */
export async function boundResult(text: string, maxTokens: number, opts: { count?: TokenCounter | undefined; keepTail?: boolean; signal: AbortSignal }): Promise<Bounded> {
  const how: { counted: Bounded['counted'] } = { counted: 'estimate' };
  const count = async (t: string): Promise<number> => {
    if (opts.count) {
      try {
        const n = await opts.count(t, opts.signal);
        how.counted = 'tokenizer';
        return n;
      } catch (err) {
        if (opts.signal.aborted) throw err;
      }
    }
    how.counted = 'estimate';
    return estimateTokens(t);
  };
  // A text whose estimate is far below the budget needs no count.
  if (text.length <= maxTokens) return { text, tokens: estimateTokens(text), cut: false, counted: 'estimate' };
  const total = await count(text);
  if (total <= maxTokens) return { text, tokens: total, cut: false, counted: how.counted };
  const lines = text.split('\n').length;
  const counter = how.counted === 'tokenizer' ? "by the server's tokenizer" : `estimated at ${CHARS_PER_TOKEN} characters a token`;
  const noteOf = (shownLines: number): string => `[truncated: the result has ${total} tokens (${counter}, ${lines} lines); ${opts.keepTail ? 'its first and last lines are' : `the first ${shownLines} lines are`} shown, within the budget of ${maxTokens} tokens.${opts.keepTail ? '' : ' Ask for a narrower range (read_file startLine/endLine) or a narrower search.'}]`;
  // Room for the note, then shrink by the ratio until the count agrees (at most a few tries).
  const room = Math.max(1, maxTokens - estimateTokens(noteOf(lines)) - 8);
  let chars = Math.floor(text.length * (room / total));
  let out = '';
  for (let tries = 0; tries < 4; tries++) {
    out = cutText(text, Math.max(0, chars), opts.keepTail === true);
    const n = await count(out);
    if (n <= room) break;
    chars = Math.floor(chars * (room / n) * 0.95);
  }
  const final = `${out}\n${noteOf(out.split('\n').length)}`;
  return { text: final, tokens: await count(final), cut: true, counted: how.counted };
}

/** The first `chars` characters on whole lines, or the first and last halves with a gap marker. */
function cutText(text: string, chars: number, keepTail: boolean): string {
  if (!keepTail) {
    const head = text.slice(0, chars);
    const nl = head.lastIndexOf('\n');
    return nl > chars / 2 ? head.slice(0, nl) : head;
  }
  const half = Math.floor(chars / 2);
  const head = text.slice(0, half);
  const tail = text.slice(text.length - half);
  return `${head}\n[… ${text.length - 2 * half} characters left out …]\n${tail}`;
}
