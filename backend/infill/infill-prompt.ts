// Fill-in-the-middle prompts from the model's FIM token ids, in one of two orders:
//   PSM (llama-server's): [BOS] extra-context [FIM_PRE] prefix prompt [FIM_SUF] suffix [FIM_MID]
//   SPM:                  [BOS] extra-context [FIM_PRE] [FIM_SUF] suffix [FIM_MID] prefix prompt
// (`prompt` is the text before the cursor on its line, so it belongs with the prefix). SPM is
// the suffix-first variant StarCoder and CodeLlama were trained with (beside PSM): typing at
// the cursor changes only the prompt's end, so a keystroke keeps the KV of the suffix and of
// the prefix and reads only what was typed; in PSM every keystroke reads the suffix again.
// The prefix keeps its end and the suffix its start, in llama-server's 3:1 split of a batch,
// but a long prefix starts at a content-chosen line so keystrokes reuse it (prefix-window.ts);
// extra context fills what the context leaves. And a stopper that ends the completion when
// the model starts writing the code that already follows the cursor.
import type { ModelInfo } from '../../native/lib/addon.js';

export type Fim = NonNullable<ModelInfo['fim']>;

export interface InfillParts {
  /** Tokens of each extra file's header ("filename\n", or a snippet separator) and text, in order. */
  extra: Array<{ header: number[]; text: number[] }>;
  /** Repo header tokens ("myproject\n") when the vocab has a repo token. */
  repoHeader: number[];
  prefix: number[];
  /** The prefix is already a window of a longer one (windowPrefix): report the prompt as truncated. */
  prefixCut?: boolean;
  suffix: number[];
  prompt: number[];
}

export interface InfillPrompt { tokens: number[]; truncated: boolean }

export type FimOrder = 'psm' | 'spm';

/**
 * The order to lay out infill prompts in: the setting, or for 'auto' SPM where the model family
 * was trained with it (StarCoder/StarCoder2 and their tokenizer, CodeLlama's SentencePiece FIM
 * vocabulary, CodeGemma) and PSM otherwise (Qwen2.5-Coder, DeepSeek-Coder, Refact, ...).
 */
export function fimOrderFor(metadata: Readonly<Record<string, string>>, setting: 'auto' | FimOrder): FimOrder {
  if (setting !== 'auto') return setting;
  const arch = metadata['general.architecture'] ?? '';
  const pre = metadata['tokenizer.ggml.pre'] ?? '';
  const tokenizer = metadata['tokenizer.ggml.model'] ?? '';
  if (pre === 'starcoder' || arch === 'starcoder' || arch === 'starcoder2') return 'spm';
  if (arch === 'gemma') return 'spm';
  if (arch === 'llama' && tokenizer === 'llama') return 'spm';
  return 'psm';
}

const has = (id: number) => id >= 0;

/** Prefix tokens in a prompt for this batch size: llama-server's 3/4 of the batch. */
export const prefixBudget = (batch: number): number => Math.floor((3 * batch) / 4);

export function buildInfillPrompt(
  fim: Fim, bosPrefix: number[], parts: InfillParts, budget: { batch: number; ctx: number; maxTokens: number },
  order: FimOrder = 'psm',
): InfillPrompt {
  const nPrefix = Math.min(parts.prefix.length, prefixBudget(budget.batch));
  // llama-server's suffix budget shrinks as the cursor's line (prompt) grows; in SPM the suffix
  // comes first, so its length must not follow the line being typed, or no keystroke keeps its KV.
  const suffixBudget = Math.floor(budget.batch / 4) - 2 - (order === 'spm' ? 0 : parts.prompt.length);
  const nSuffix = Math.min(parts.suffix.length, Math.max(0, suffixBudget));
  const extra: number[] = [];
  if (parts.extra.length > 0 || has(fim.rep)) {
    if (has(fim.rep)) extra.push(fim.rep, ...parts.repoHeader);
    for (const e of parts.extra) {
      if (has(fim.sep)) extra.push(fim.sep);
      extra.push(...e.header, ...e.text);
    }
  }
  const room = Math.max(0, budget.ctx - budget.batch - 2 * budget.maxTokens);
  const nExtra = Math.min(room, extra.length);
  const prefix = [...parts.prefix.slice(parts.prefix.length - nPrefix), ...parts.prompt];
  const suffix = parts.suffix.slice(0, nSuffix);
  const tokens = [
    ...bosPrefix,
    ...extra.slice(extra.length - nExtra),
    ...(order === 'spm'
      ? [fim.prefix, fim.suffix, ...suffix, fim.middle, ...prefix]
      : [fim.prefix, ...prefix, fim.suffix, ...suffix, fim.middle]),
  ];
  const truncated = parts.prefixCut === true || nPrefix < parts.prefix.length || nSuffix < parts.suffix.length || nExtra < extra.length;
  return { tokens, truncated };
}

/**
 * Holds back the line being written and stops once a complete line (after the first, which
 * continues the cursor's line) equals the suffix's first full line: the model has started to
 * repeat the code after the cursor. Lines of fewer than `minChars` visible characters (a lone
 * "}") must be followed by the suffix's next line too, so a closing brace alone does not stop it.
 */
export class SuffixRepeatStop {
  private pending = '';
  private lineIndex = 0;
  private readonly targets: string[];
  /** A short first line matched: the line text held until the next line decides. */
  private held: string | null = null;
  stopped = false;

  constructor(suffix: string, private readonly minChars = 6) {
    // The suffix's first line is the rest of the cursor's line; the next non-blank lines follow.
    this.targets = suffix.split('\n').slice(1).map((l) => l.trim()).filter((l) => l.length > 0).slice(0, 2);
  }

  /** Feeds generated text; returns what may be emitted now. */
  push(text: string): string {
    if (this.stopped) return '';
    this.pending += text;
    let out = '';
    let nl: number;
    while (!this.stopped && (nl = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, nl + 1);
      this.pending = this.pending.slice(nl + 1);
      out += this.line(line);
    }
    return out;
  }

  /** The rest at the end of generation. */
  end(): string {
    if (this.stopped) return '';
    const rest = (this.held ?? '') + this.pending;
    this.held = null;
    this.pending = '';
    return rest;
  }

  private line(line: string): string {
    const index = this.lineIndex++;
    const t = line.trim();
    if (this.held !== null) {
      if (this.targets[1] !== undefined && t === this.targets[1]) { this.stop(); return ''; }
      const out = this.held;
      this.held = null;
      return out + this.line2(line, index);
    }
    return this.line2(line, index);
  }

  private line2(line: string, index: number): string {
    const t = line.trim();
    const first = this.targets[0];
    if (index === 0 || first === undefined || t !== first) return line;
    if (first.replace(/\s/g, '').length >= this.minChars || this.targets[1] === undefined) { this.stop(); return ''; }
    this.held = line;
    return '';
  }

  private stop(): void {
    this.stopped = true;
    this.pending = '';
    this.held = null;
  }
}
