// POST /v1/edits/next: the next edit the user is about to make, as a rewrite of an editable region
// around their last edit. The request (the wire JSON the extension sends), the answer the server
// builds (backend/http/routes/next-edit.ts), and the answer's runtime check at the extension's
// edge (parseNextEditBody). The server lays the prompt out in the model family's trained format
// (backend/next-edit/formats.ts) and drafts the answer from the region itself (a prediction).
import * as z from 'zod/mini';
import { checkBody } from './check.js';

/** How the prompt is laid out: Zed's Zeta, Continue's Instinct, or a generic instruction (any chat model). */
export type NextEditFormat = 'zeta' | 'instinct' | 'generic';
export const NEXT_EDIT_FORMATS: readonly NextEditFormat[] = ['zeta', 'instinct', 'generic'];

/** One recent edit: a small unified diff of one file (hunks: `@@` headers, ' ', '-', '+' lines; no ---/+++ header). */
export interface NextEditEvent {
  file: string;
  diff: string;
}

/** Other code the model may use (an open file's excerpt). */
export interface NextEditSnippet {
  file: string;
  text: string;
}

export interface NextEditRequest {
  /** Served model (several served: routes by it); absent: the completion role's model. */
  model?: string;
  /** The document's path as the model should see it (relative to the workspace). */
  file: string;
  /** VS Code's language id (the generic format names it). */
  language?: string;
  /** The editable region's current text, whole lines, with the user's last edits in it. */
  region: string;
  /** The cursor as a UTF-16 offset into `region`; absent or null when it is outside the region. */
  cursor?: number | null;
  /** Lines of the document above and below the region (the excerpt around it, shown but not rewritten). */
  before?: string;
  after?: string;
  /** `before` starts at the document's first line (Zeta marks it). */
  start_of_file?: boolean;
  /** Recent edits, oldest first. */
  edits?: NextEditEvent[];
  /** Excerpts of other files. */
  context?: NextEditSnippet[];
  /** Prompt layout; default 'auto': by the model's name (zeta, instinct), else 'generic'. */
  format?: NextEditFormat | 'auto';
  /** Default: the region's size and some room to grow, within the context. */
  max_tokens?: number;
  /** Default 0 (greedy): an edit proposal should be the model's best guess. */
  temperature?: number;
  /** Latest wins: a newer next-edit request with the same key (the document's URI) ends this one (409 superseded). */
  supersede_key?: string;
}

/** Why the answer is what it is. */
export type NextEditOutcome =
  /** The model rewrote the region: `region` is the proposal. */
  | 'edited'
  /** The model gave the region back as it was: nothing to propose. */
  | 'unchanged'
  /** The answer had no region in the format's markers (or was cut off before its end): nothing to propose. */
  | 'unparsed';

export interface NextEditBody {
  id: string;
  object: 'next_edit';
  created: number;
  model: string;
  format: NextEditFormat;
  outcome: NextEditOutcome;
  /** The rewritten region (outcome 'edited'); the request's region otherwise. */
  region: string;
  /** The model's answer as it wrote it. */
  text: string;
  finish_reason: 'stop' | 'length';
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
    /** The region was the draft: answer tokens that followed it, and its tokens verified and thrown away. */
    completion_tokens_details: { accepted_prediction_tokens: number; rejected_prediction_tokens: number };
  };
  /** llama-server's timings (prompt and decode ms, tokens per second, draft_n). */
  timings: Record<string, number | null>;
}

const num = z.number();
export const nextEditBodySchema: z.ZodMiniType<NextEditBody> = z.object({
  id: z.string(),
  object: z.literal('next_edit'),
  created: num,
  model: z.string(),
  format: z.enum(['zeta', 'instinct', 'generic']),
  outcome: z.enum(['edited', 'unchanged', 'unparsed']),
  region: z.string(),
  text: z.string(),
  finish_reason: z.enum(['stop', 'length']),
  usage: z.object({
    prompt_tokens: num, completion_tokens: num, total_tokens: num,
    prompt_tokens_details: z.object({ cached_tokens: num }),
    completion_tokens_details: z.object({ accepted_prediction_tokens: num, rejected_prediction_tokens: num }),
  }),
  timings: z.record(z.string(), z.nullable(num)),
});

/** The server's answer as the contract's type, or a ContractError naming the first wrong field. */
export function parseNextEditBody(raw: unknown): NextEditBody {
  return checkBody(nextEditBodySchema, raw, 'POST /v1/edits/next');
}
