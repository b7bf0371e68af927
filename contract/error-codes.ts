// Every error code the server answers with, stated once: its HTTP status, its OpenAI error type,
// the fields it carries besides message/type/code/param, and when it happens. The server throws
// only from this table (backend/validation/errors.ts apiError), docs/server.md's error table is
// generated from it (scripts/docs-tables.ts), and clients compare codes typed against it.
import type { ContextOverflow } from './errors.js';

export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'server_error';

export interface ErrorSpec {
  status: number;
  /** Defaults to invalid_request_error for a 4xx, server_error for a 5xx. */
  type?: ErrorType;
  /** The fields the error object carries as data, besides message, type, code and param. */
  fields?: readonly string[];
  /** The message when the thrower gives none. */
  message?: string;
  /** When it happens, for the docs. */
  when: string;
}

const OVERFLOW_FIELDS = ['n_prompt_tokens', 'n_ctx'] as const satisfies readonly (keyof ContextOverflow)[];

export const ERROR_CODES = {
  invalid_json: { status: 400, when: 'the body is not JSON' },
  invalid_body: { status: 400, when: 'the body cannot be read (the connection broke or sent something else than the route reads)' },
  invalid_url: { status: 400, when: 'the request URL cannot be parsed' },
  invalid_value: { status: 400, when: 'a field has a wrong type or value (`param` names it)' },
  missing_required_parameter: { status: 400, when: 'a required field is missing (`param` names it)' },
  unsupported_value: {
    status: 400,
    when: "a field's value is valid OpenAI but not served here (several prompts, `dimensions` other than the model's, `reasoning_format: deepseek-legacy`, a tool_choice naming a hosted tool)",
  },
  too_deep: { status: 400, when: 'JSON nested more than 64 levels' },
  invalid_image: { status: 400, when: 'an image part that is no well-formed base64 data URL or source, not a PNG, JPEG, GIF or BMP, or that the chat template renders no place for' },
  image_too_large: { status: 400, when: 'an image over the bytes or pixels limit ([security](security.md#server-input-limits))' },
  too_many_images: { status: 400, when: 'more images in one request than the limit ([security](security.md#server-input-limits))' },
  remote_image_not_supported: { status: 400, when: 'an image given by a URL that is not a data URL (http, https, file): the server fetches nothing a request points at' },
  images_not_supported: { status: 400, when: 'an image sent to a model loaded without a projector (`--mmproj`)' },
  unsupported_schema: { status: 400, when: 'a JSON-schema keyword the grammar cannot enforce (`response_format`, `json_schema`, a forced tool call)' },
  schema_too_large: { status: 400, when: 'a JSON schema (or the tools\' schemas together) over the size or alternatives limit ([security](security.md#server-input-limits))' },
  grammar_too_large: { status: 400, when: 'a grammar over the rules, alternatives or repeated-symbols limit, or a schema that converts to one over the size limit' },
  grammar_too_deep: { status: 400, when: 'a grammar that nests groups deeper than the limit' },
  grammar_too_complex: { status: 400, when: 'a grammar that nests repetitions deeper than the limit' },
  template_rejected: { status: 400, when: "the model's chat template raised an error for these messages (`param`: `messages`)" },
  context_length_exceeded: {
    status: 400, fields: OVERFLOW_FIELDS,
    when: 'the prompt (with room to answer) is longer than one request may hold (the context per slot, or the one the slots share); the message names the `--ctx` that would hold it; chat, completions, infill, embeddings, rerank. `n_prompt_tokens`: the tokens it needed, `n_ctx`: the tokens it may have (as llama-server\'s `exceed_context_size_error`)',
  },
  empty_prompt: { status: 400, when: 'a prompt or a conversation with no tokens' },
  empty_input: { status: 400, when: 'an embedding input with no tokens' },
  fim_not_supported: { status: 400, when: 'infill on a model without fill-in-the-middle tokens' },
  model_not_text: { status: 400, when: 'a text request on an embedding or reranker model' },
  model_not_embedding: { status: 400, when: 'embeddings from a text model or a reranker' },
  model_not_reranker: { status: 400, when: 'rerank on a model that is not a reranker' },
  invalid_api_key: { status: 401, type: 'authentication_error', when: 'no key, or a wrong one, where the server has one' },
  host_not_allowed: { status: 403, type: 'permission_error', when: 'without a key: a `Host` that is not loopback ([security](security.md#server-input-limits))' },
  origin_not_allowed: { status: 403, type: 'permission_error', when: 'without a key: a cross-site `Origin` ([security](security.md#server-input-limits))' },
  not_found: { status: 404, when: 'no such route' },
  model_not_found: { status: 404, when: 'the `model` is not served (the message lists the served ones)' },
  session_not_found: { status: 404, when: 'no session of that name' },
  trace_not_found: { status: 404, when: 'no trace for that request id (only recent requests are kept)' },
  conversation_not_found: { status: 404, when: 'a session save whose tokens no slot or parked conversation holds' },
  response_not_found: { status: 404, when: 'no stored response of that id (never stored, deleted, or expired)' },
  previous_response_not_found: { status: 404, when: '`previous_response_id` names no stored response' },
  method_not_allowed: { status: 405, when: 'the route exists with another method (`Allow` lists them)' },
  body_timeout: { status: 408, when: 'the body did not arrive within `--body-timeout-ms`' },
  superseded: { status: 409, when: 'an infill or next edit ended by a newer request with the same `supersede_key`' },
  model_busy: { status: 409, when: 'an unload of a model with requests in flight, or while it loads' },
  session_model_mismatch: { status: 409, when: 'a session restored on another model than it was saved with (names both)' },
  request_too_large: { status: 413, when: 'a body over `--body-limit-mib`' },
  unsupported_media_type: { status: 415, when: 'a body that is not `application/json`' },
  session_unreadable: { status: 422, when: 'a session file or description that is damaged (listed with its `error`, so it can be deleted)' },
  engine_error: { status: 500, when: 'an engine call failed for another reason (the message says which call)' },
  session_error: { status: 500, when: 'a session save or restore failed in the engine for another reason' },
  template_error: { status: 500, when: 'the chat template failed to render' },
  internal_error: { status: 500, when: 'a fault in the server itself (logged with its stack)' },
  context_full: {
    status: 503,
    when: 'the context the slots share (no `--ctx`) filled up while the request ran beside others: the one admitted last ends so the others go on (retry it, or give each slot its own context with `--ctx`)',
  },
  engine_unavailable: { status: 503, message: 'no engine is ready', when: 'the engine is loading, restarting or died (also a stream\'s error event)' },
  model_loading: { status: 503, message: 'the model is still loading', when: 'the model is still loading' },
  model_load_failed: { status: 503, when: "the model's load failed (the message says why)" },
  models_busy: { status: 503, when: 'a load needs room that only busy or pinned models hold (names them)' },
  server_busy: { status: 503, when: '`--max-queued` requests already wait' },
  body_budget_spent: { status: 503, when: 'other bodies being read hold the whole body budget' },
  shutting_down: { status: 503, message: 'the server is shutting down', when: 'the server is stopping (queued requests; streams get it as their error event)' },
  insufficient_storage: { status: 507, when: 'a session save on a full disk' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The data fields each code carries (its `fields` in the table, typed). */
export interface ErrorFields {
  context_length_exceeded: ContextOverflow;
}

// The table's `fields` and ErrorFields name the same keys (the compiler checks both ways).
type TableFields<C extends ErrorCode> = (typeof ERROR_CODES)[C] extends { fields: readonly (infer F)[] } ? F : never;
type FieldKeys<C extends ErrorCode> = C extends keyof ErrorFields ? keyof ErrorFields[C] : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const fieldsAgree: { [C in ErrorCode]: Same<TableFields<C>, FieldKeys<C>> } = Object.fromEntries(
  Object.keys(ERROR_CODES).map((c) => [c, true]),
) as { [C in ErrorCode]: true };
void fieldsAgree;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

export function errorStatus(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

export function errorType(code: ErrorCode): ErrorType {
  const spec: ErrorSpec = ERROR_CODES[code];
  return spec.type ?? (spec.status >= 500 ? 'server_error' : 'invalid_request_error');
}
