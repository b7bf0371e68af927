// POST /v1/edits/next: the next edit the user is about to make, as a rewrite of the editable region
// around the cursor. The extension (extension/next-edit/) sends what the server needs to build the
// model's prompt in its trained format (Zeta, Instinct) or a generic one: the excerpt of the file
// with the region and the cursor in it, and the recent edits as unified diffs. The answer is the
// region rewritten; the extension diffs it against the region itself. The server uses the region as
// the speculative prediction, so an answer that mostly repeats it costs few decoding steps.
// This file is the extension's proposal of the shape until the server's route lands.
import * as z from 'zod/mini';
import { checkBody } from './check.js';

/** One recent edit: a unified diff of one file, hunks only (`@@ -a,b +c,d @@` and its lines). */
export interface NextEditEventBody {
  /** The file as the user sees it (workspace-relative). */
  path: string;
  diff: string;
}

export interface NextEditRequestBody {
  model?: string;
  /** The edited file, workspace-relative. */
  path: string;
  /** VS Code's language id (e.g. "python"); prompt formats may name the language. */
  language?: string;
  /** Whole lines of the file around the region (joined by \n, with their line ends). */
  excerpt: string;
  /** 0-based line in the file of the excerpt's first line (0: the excerpt starts the file). */
  excerpt_start_line: number;
  /** The editable region: character offsets into `excerpt`, [start, end), on line starts. */
  region: { start: number; end: number };
  /** The cursor: a character offset into `excerpt`, inside the region. */
  cursor: number;
  /** Recent edits, oldest first: this file's and other open files'. */
  edits: NextEditEventBody[];
  /** A newer request with the same key supersedes this one in the server (the document). */
  supersede_key?: string;
  max_tokens?: number;
}

/** Predicted outputs' counters, OpenAI's `usage.completion_tokens_details`. */
export interface PredictionTokensBody {
  accepted_prediction_tokens: number;
  rejected_prediction_tokens: number;
}

export interface NextEditResponseBody {
  id: string;
  object: 'edit.next';
  model: string;
  /** The region rewritten (equal to the region when the model proposes nothing). */
  region: string;
  /** stop: the model ended the region; length: max_tokens cut it (the extension drops it). */
  finish_reason: 'stop' | 'length';
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    completion_tokens_details?: PredictionTokensBody;
  };
}

const count = z.number();
const nextEditResponse: z.ZodMiniType<NextEditResponseBody> = z.object({
  id: z.string(),
  object: z.literal('edit.next'),
  model: z.string(),
  region: z.string(),
  finish_reason: z.enum(['stop', 'length']),
  usage: z.object({
    prompt_tokens: count, completion_tokens: count, total_tokens: count,
    completion_tokens_details: z.optional(z.object({ accepted_prediction_tokens: count, rejected_prediction_tokens: count })),
  }),
});

export function parseNextEditResponse(raw: unknown): NextEditResponseBody {
  return checkBody(nextEditResponse, raw, 'POST /v1/edits/next');
}

const nextEditRequest: z.ZodMiniType<NextEditRequestBody> = z.object({
  model: z.optional(z.string()),
  path: z.string(),
  language: z.optional(z.string()),
  excerpt: z.string(),
  excerpt_start_line: z.number(),
  region: z.object({ start: z.number(), end: z.number() }),
  cursor: z.number(),
  edits: z.array(z.object({ path: z.string(), diff: z.string() })),
  supersede_key: z.optional(z.string()),
  max_tokens: z.optional(z.number()),
});

/** The request as a server (or a scripted one in tests) reads it: the shape, then the offsets' order. */
export function parseNextEditRequest(raw: unknown): NextEditRequestBody {
  const body = checkBody(nextEditRequest, raw, 'POST /v1/edits/next request');
  const { start, end } = body.region;
  if (!(start >= 0 && start <= end && end <= body.excerpt.length)) throw new Error(`region ${start}..${end} is not inside the excerpt (${body.excerpt.length} characters)`);
  if (!(body.cursor >= start && body.cursor <= end)) throw new Error(`cursor ${body.cursor} is not inside the region ${start}..${end}`);
  return body;
}
