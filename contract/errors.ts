// The JSON of every HTTP error the server answers with, the way OpenAI clients parse it, plus the
// fields an error carries as data so a client never reads numbers out of its message.
/** What a context_length_exceeded error carries (llama-server's exceed_context_size_error names). */
export interface ContextOverflow {
  /** Tokens the request needed: the prompt (with max_tokens where the route reserves it). */
  n_prompt_tokens: number;
  /** Tokens it may have: the context per slot (or, for one step's input, the context and the batch). */
  n_ctx: number;
}

export interface ApiErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null } & Partial<ContextOverflow>;
}

/** The overflow fields of an error object, when it has both as non-negative integers. */
export function contextOverflowOf(error: unknown): ContextOverflow | null {
  const e = error as Partial<Record<keyof ContextOverflow, unknown>> | null;
  const ok = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
  return e && ok(e.n_prompt_tokens) && ok(e.n_ctx) ? { n_prompt_tokens: e.n_prompt_tokens, n_ctx: e.n_ctx } : null;
}
