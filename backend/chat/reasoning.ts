// Reasoning models (Qwen3, DeepSeek-R1 distills, QwQ) write their thinking as `<think> ... </think>`
// before the answer. This splits generated text, as it streams, into reasoning and content pieces
// the way llama-server's `--reasoning-format deepseek` does:
//   - only a `<think>` at the start of the output (after optional whitespace) opens thinking; a later
//     one is plain content;
//   - a prompt that already ends with an open `<think>` (templates that force thinking on) starts
//     inside the thinking, with no opening tag in the output;
//   - whitespace right after `<think>` and `</think>`, and right before `</think>`, is dropped (the
//     newlines the models write there);
//   - thinking cut off before `</think>` (max_tokens, stop) stays reasoning.
// Tags may arrive split across pieces ("<th" + "ink>"); only what could still be a tag (or
// whitespace that may turn out to be trimmed) is held back, so plain answers stream undelayed.

export type ReasoningFormat = 'auto' | 'deepseek' | 'none';
export const REASONING_FORMATS: readonly ReasoningFormat[] = ['auto', 'deepseek', 'none'];

export type SplitDelta = { type: 'reasoning'; text: string } | { type: 'content'; text: string };

const OPEN = '<think>';
const CLOSE = '</think>';
const LEADING_SPACE = /^[ \t\r\n]+/;
const TRAILING_SPACE = /[ \t\r\n]*$/;

/** True when a rendered chat prompt ends inside thinking: `<think>` followed only by whitespace. */
export function promptOpensThinking(prompt: string): boolean {
  return /<think>[ \t\r\n]*$/.test(prompt);
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag` (a tag that may be cut). */
function partialTagAtEnd(text: string, tag: string): number {
  for (let n = Math.min(text.length, tag.length - 1); n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

export interface ReasoningSplitterOptions {
  /** The prompt ended with an open `<think>`: the output starts inside the thinking. */
  startInThinking?: boolean;
}

export class ReasoningSplitter {
  /** lead: deciding whether the output opens with `<think>`; think / content: inside each part. */
  private state: 'lead' | 'think' | 'content' | 'ended' = 'lead';
  /** lead: the text so far (whitespace, maybe part of `<think>`); think: a possible cut `</think>`. */
  private held = '';
  /** Whitespace at the end of the reasoning so far: emitted only when more reasoning follows. */
  private pendingSpace = '';
  /** Drop whitespace before the first character of the current part. */
  private atPartStart = false;
  private readonly forced: boolean;

  constructor(opts: ReasoningSplitterOptions = {}) {
    this.forced = opts.startInThinking ?? false;
  }

  /** Feeds a piece of generated text; returns the pieces it completed (adjacent ones merged). */
  push(piece: string): SplitDelta[] {
    const out: SplitDelta[] = [];
    if (this.state === 'ended') throw new Error('ReasoningSplitter: push after end');
    this.feed(piece, out);
    return merge(out);
  }

  /** The generation ended: whatever is held back leaves, as the part it belongs to. */
  end(): SplitDelta[] {
    const out: SplitDelta[] = [];
    if (this.state === 'lead') {
      // Only whitespace or a cut "<think" came: no thinking block was opened.
      if (this.forced) {
        this.atPartStart = true;
        this.reasoning(this.held, true, out);
      } else if (this.held) {
        out.push({ type: 'content', text: this.held });
      }
    } else if (this.state === 'think') {
      // Unterminated thinking (cut by max_tokens or a stop string): it is still reasoning.
      this.reasoning(this.held, true, out);
    }
    this.held = '';
    this.state = 'ended';
    return merge(out);
  }

  private feed(text: string, out: SplitDelta[]): void {
    if (this.state === 'lead') this.lead(text, out);
    else if (this.state === 'think') this.think(text, out);
    else this.content(text, out);
  }

  private lead(text: string, out: SplitDelta[]): void {
    const buf = this.held + text;
    const rest = buf.replace(LEADING_SPACE, '');
    if (rest === '' || (rest.length < OPEN.length && OPEN.startsWith(rest))) {
      this.held = buf;
      return;
    }
    this.held = '';
    if (rest.startsWith(OPEN)) {
      this.enterThinking();
      this.think(rest.slice(OPEN.length), out);
    } else if (this.forced) {
      this.enterThinking();
      this.think(buf, out);
    } else {
      // No thinking block: everything is content, exactly as written.
      this.state = 'content';
      this.atPartStart = false;
      this.content(buf, out);
    }
  }

  private enterThinking(): void {
    this.state = 'think';
    this.atPartStart = true;
  }

  private think(text: string, out: SplitDelta[]): void {
    const buf = this.held + text;
    const close = buf.indexOf(CLOSE);
    if (close >= 0) {
      this.held = '';
      this.reasoning(buf.slice(0, close), true, out);
      this.state = 'content';
      this.atPartStart = true;
      this.content(buf.slice(close + CLOSE.length), out);
      return;
    }
    const cut = partialTagAtEnd(buf, CLOSE);
    this.held = buf.slice(buf.length - cut);
    this.reasoning(buf.slice(0, buf.length - cut), false, out);
  }

  /** Emits reasoning text; `last`: nothing more follows, so trailing whitespace is dropped. */
  private reasoning(text: string, last: boolean, out: SplitDelta[]): void {
    let t = text;
    if (this.atPartStart) {
      t = t.replace(LEADING_SPACE, '');
      if (t === '') return;
      this.atPartStart = false;
    }
    t = this.pendingSpace + t;
    const space = TRAILING_SPACE.exec(t)![0];
    this.pendingSpace = last ? '' : space;
    t = t.slice(0, t.length - space.length);
    if (t) out.push({ type: 'reasoning', text: t });
  }

  private content(text: string, out: SplitDelta[]): void {
    let t = text;
    if (this.atPartStart) {
      t = t.replace(LEADING_SPACE, '');
      if (t === '') return;
      this.atPartStart = false;
    }
    if (t) out.push({ type: 'content', text: t });
  }
}

function merge(deltas: SplitDelta[]): SplitDelta[] {
  const out: SplitDelta[] = [];
  for (const d of deltas) {
    const last = out.at(-1);
    if (last && last.type === d.type) last.text += d.text;
    else out.push({ ...d });
  }
  return out;
}

/**
 * The thinking block as the splitter for this request sees it (for a lazy tool-call grammar, which
 * must not open inside it): its tags, and whether the prompt already opened it; null for 'none'.
 */
export function thinkingTags(format: ReasoningFormat, prompt: string): { open: string; close: string; inside: boolean } | null {
  return format === 'none' ? null : { open: OPEN, close: CLOSE, inside: promptOpensThinking(prompt) };
}

/** The splitter a request needs, or null for reasoning_format 'none' (everything stays content). */
export function reasoningSplitterFor(format: ReasoningFormat, prompt: string): ReasoningSplitter | null {
  if (format === 'none') return null;
  return new ReasoningSplitter({ startInThinking: promptOpensThinking(prompt) });
}
