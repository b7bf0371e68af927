// Benchmark prompts of approximate token counts: deterministic prose and code from a seeded
// generator (the same run index gives both servers the same text), a nonce at the very start
// where a prompt must miss every cache, and sizes fitted with the server's tokenizer.

/** Counts the tokens of a text (the server's /tokenize, or an estimate). */
export type TokenCounter = (text: string) => Promise<number>;

/** mulberry32: small, fast, deterministic; enough for word choice. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed from a string (FNV-1a), so prompts are keyed by readable tags. */
export function seedOf(tag: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < tag.length; i++) h = Math.imul(h ^ tag.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const WORDS = (
  'the a of and to in is that for on with as by at from this which it be are was were an or not have has ' +
  'system server request model token cache memory thread slot queue batch prompt answer reply client engine ' +
  'process file buffer stream event error value result state context layer device kernel vector matrix weight ' +
  'read write open close start stop send receive parse check build test run measure count split merge sort ' +
  'quickly slowly often never always later early small large long short new old fast slow quiet busy ' +
  'river mountain garden window market harbor village winter summer morning evening station library kitchen ' +
  'because while although after before until unless since whether every several many few most some each'
).split(' ');

/** `n` words of prose-like text in sentences of 6 to 15 words. */
export function proseWords(seed: number, n: number): string {
  const rnd = seededRandom(seed);
  const out: string[] = [];
  let inSentence = 0;
  let sentenceLen = 6 + Math.floor(rnd() * 10);
  for (let i = 0; i < n; i++) {
    let w = WORDS[Math.floor(rnd() * WORDS.length)]!;
    if (inSentence === 0) w = w[0]!.toUpperCase() + w.slice(1);
    inSentence++;
    if (inSentence >= sentenceLen || i === n - 1) {
      w += '.';
      inSentence = 0;
      sentenceLen = 6 + Math.floor(rnd() * 10);
    }
    out.push(w);
  }
  return out.join(' ');
}

const IDENTS = ['total', 'count', 'items', 'index', 'buffer', 'offset', 'result', 'value', 'limit', 'cursor', 'entry', 'score'];
const CALLS = ['compute', 'update', 'resolve', 'parse', 'render', 'collect', 'merge', 'flush', 'measure', 'lookup'];

/** `n` lines of TypeScript-like code (indented statements, a function header every 12 lines). */
export function codeLines(seed: number, n: number): string[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 12 === 0) { lines.push(`function ${pick(CALLS)}${pick(IDENTS)[0]!.toUpperCase()}${i}(${pick(IDENTS)}: number[], ${pick(IDENTS)}: number): number {`); continue; }
    if (i % 12 === 11) { lines.push('}'); continue; }
    const a = pick(IDENTS); const b = pick(IDENTS); const k = Math.floor(rnd() * 100);
    switch (Math.floor(rnd() * 4)) {
      case 0: lines.push(`  const ${a}${k} = ${pick(CALLS)}(${b}, ${k}) + ${a}.length;`); break;
      case 1: lines.push(`  if (${a} > ${k}) ${b} = ${pick(CALLS)}(${a}, ${b} * ${k});`); break;
      case 2: lines.push(`  for (let i = 0; i < ${a}.length; i++) ${b} += ${a}[i] % ${k + 1};`); break;
      default: lines.push(`  // ${pick(CALLS)} the ${a} before the ${b} reaches ${k}`);
    }
  }
  return lines;
}

/** A short random tag for the start of a prompt; no two runs share a prefix. */
export function makeNonce(rnd: () => number = Math.random): string {
  let s = '';
  for (let i = 0; i < 12; i++) s += Math.floor(rnd() * 36).toString(36);
  return `[run ${s}]`;
}

export interface SizedText {
  text: string;
  /** Tokens as counted by the server's tokenizer (body + nonce), or estimated from the calibration. */
  tokens: number;
  exact: boolean;
}

/**
 * Builds texts of a target token count. With an exact counter (the server's /tokenize) each
 * body is counted and corrected once; without one, the calibration ratio alone sizes it.
 * Bodies are memoised by (seed, size), so a prompt repeated with a new nonce (every run, and
 * the second server of a compare) costs no tokenizer call while a server is being measured.
 */
export class PromptSizer {
  private readonly bodies = new Map<string, Promise<SizedText>>();

  constructor(
    /** Tokens per prose word and per code line, measured on a sample. */
    readonly tokensPerWord: number,
    readonly tokensPerLine: number,
    /** Tokens a nonce and its separating space add. */
    readonly nonceTokens: number,
    private readonly counter: TokenCounter | null,
  ) {
    if (!(tokensPerWord > 0) || !(tokensPerLine > 0)) throw new RangeError('token ratios must be positive');
  }

  get exact(): boolean { return this.counter !== null; }

  /** Measures the ratios on a sample (three calls to the counter). */
  static async calibrate(counter: TokenCounter, exact: boolean): Promise<PromptSizer> {
    const words = 400;
    const lines = 40;
    const prose = proseWords(seedOf('calibrate'), words);
    const perWordTokens = await counter(prose);
    const perLine = (await counter(codeLines(seedOf('calibrate'), lines).join('\n'))) / lines;
    const withNonce = await counter(`${makeNonce(seededRandom(1))} ${prose}`);
    return new PromptSizer(perWordTokens / words, perLine, Math.max(0, withNonce - perWordTokens), exact ? counter : null);
  }

  /** Prose of about `target` tokens in all, starting with `prefix` (a nonce) when given. */
  async prose(target: number, seed: number, prefix = ''): Promise<SizedText> {
    const extra = prefix ? this.nonceTokens : 0;
    const body = await this.body(Math.max(1, target - extra), seed);
    return prefix
      ? { text: `${prefix} ${body.text}`, tokens: body.tokens + extra, exact: body.exact }
      : body;
  }

  /** Lines of code of about `target` tokens in total. */
  linesFor(target: number): number {
    return Math.max(1, Math.round(target / this.tokensPerLine));
  }

  private body(target: number, seed: number): Promise<SizedText> {
    const key = `${seed}/${target}`;
    let p = this.bodies.get(key);
    if (!p) {
      p = this.fit(target, seed);
      p.catch(() => this.bodies.delete(key));
      this.bodies.set(key, p);
    }
    return p;
  }

  private async fit(target: number, seed: number): Promise<SizedText> {
    let words = Math.max(1, Math.round(target / this.tokensPerWord));
    if (!this.counter) return { text: proseWords(seed, words), tokens: Math.round(words * this.tokensPerWord), exact: false };
    let tokens = await this.counter(proseWords(seed, words));
    if (tokens !== target) {
      words = Math.max(1, words + Math.round((target - tokens) / this.tokensPerWord));
      tokens = await this.counter(proseWords(seed, words));
    }
    return { text: proseWords(seed, words), tokens, exact: true };
  }
}
