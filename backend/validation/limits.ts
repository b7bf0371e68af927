// The server's input limits, in one place: what a request may ask of the grammar engine and of the
// body reader. Each bound sits well above what real clients send and well below what hurts the
// server (figures measured with the pinned llama.cpp on a shared 2-core machine).

/**
 * Deepest nesting of arrays/objects accepted in free-form JSON: a JSON schema (response_format,
 * json_schema, tools[].function.parameters, tools[].input_schema), tool-call arguments, template
 * kwargs. A schema property costs two levels (`properties` -> name), so this is 32 nested objects,
 * more than any tool schema in the wild; 3,000 levels overflowed the schema checker's stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Largest JSON schema, serialised, in bytes. The biggest real tool schemas (full OpenAPI-derived
 * MCP tools) are tens of KiB; the converter's output grows with its input.
 */
export const MAX_SCHEMA_BYTES = 256 * 1024;

/**
 * Largest total of a request's tool schemas, serialised, in bytes: every tool's schema is
 * converted for each request, so the total bounds the converter's work. An agent's few dozen
 * tools are well under 100 KiB.
 */
export const MAX_TOOL_SCHEMAS_BYTES = 1024 * 1024;

/**
 * Largest GBNF grammar a client may send (`grammar`), in bytes. llama.cpp's own example grammars
 * are under 4 KiB and a JSON-schema grammar for a large tool set is tens of KiB; a 2 MiB grammar
 * of 200,000 alternatives held its request for minutes.
 */
export const MAX_GRAMMAR_BYTES = 256 * 1024;

/**
 * Deepest nesting of parenthesised groups in a grammar. llama.cpp's parser recurses twice per
 * level: 60,000 levels (a 120 KB grammar) crashed the engine. Hand-written grammars nest a few
 * levels; half the engine's own limit (256, see native/patches) leaves room for the wrapper the
 * server puts around tool-call grammars.
 */
export const MAX_GRAMMAR_NESTING = 128;

/**
 * Most choices in a grammar's alternations (`a | b | c` is 3), and most enum values plus
 * anyOf/oneOf branches in a schema (each becomes one). Every choice the grammar can start with is
 * a parse stack the sampler checks against every candidate token: measured on a 152K-token
 * vocabulary (2 shared cores), 10,000 choices made the first token 25 s slower and 200,000 took
 * 127 s to build before sampling began. An enum of a few thousand names stays inside.
 */
export const MAX_GRAMMAR_ALTERNATIVES = 4096;

/** Most rules (`name ::= ...`) in a grammar, sent or built from schemas. */
export const MAX_GRAMMAR_RULES = 5_000;

/**
 * Largest grammar the server builds from a request's schemas (response_format, tools), in
 * bytes. Schemas of MAX_SCHEMA_BYTES convert to about the same size; patterns and bounded
 * repetitions can multiply it.
 */
export const MAX_BUILT_GRAMMAR_BYTES = 1024 * 1024;

/**
 * Total bytes of request bodies being read at once, as a multiple of the per-body limit
 * (--body-limit-mib): four clients may each send a body of the largest size at the same time; a
 * fifth waits for its turn with a 503 instead of growing the heap without bound.
 */
export const BODY_BUDGET_BODIES = 4;

/**
 * How long a request's body may take to arrive, from its headers on (ms). 32 MiB at half a
 * megabyte a second; a client that sends headers and then dribbles its body is cut with a 408.
 */
export const BODY_READ_TIMEOUT_MS = 60_000;

/**
 * Most symbols a grammar's bounded repetitions (`x{m,n}`) may write out: llama.cpp copies the
 * repeated symbol up to 2,000 times per repetition, so a short grammar can expand a thousandfold.
 * Counted as the repetition's bound times its item's length (a literal's characters, 1 for a rule
 * or group).
 */
export const MAX_GRAMMAR_REPEATED_SYMBOLS = 100_000;

/**
 * Deepest nesting of repetitions (`*`, `+`, `?`, `{m,n}`) within a rule: `(("a"? "b")*)+` is 3.
 * llama.cpp's sampler keeps one parse stack per way the output so far can be read; repetitions
 * of repetitions multiply those ways, and a 3.8 KB grammar of seven nested levels held the engine
 * for 9 minutes (found by the fuzz test). Grammars converted from JSON schemas nest 2 levels
 * (an optional array of items separated by commas); 3 leaves room for hand-written ones.
 */
export const MAX_GRAMMAR_REPETITION_NESTING = 3;

/**
 * Largest image a request may send, in bytes of the file (after base64): a phone screenshot as PNG
 * is 1 to 3 MiB, a 4K one under 10. Every image is decoded in full before the projector resizes it.
 */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/**
 * Most pixels of one image (width x height, checked from its header before decoding): 4096 x 4096.
 * Decoded to RGB that is 48 MiB; a PNG of a few KiB can declare far more (a decompression bomb).
 */
export const MAX_IMAGE_PIXELS = 4096 * 4096;

/** Most images in one request (over every message): each is decoded and encoded by the projector. */
export const MAX_IMAGES_PER_REQUEST = 16;
