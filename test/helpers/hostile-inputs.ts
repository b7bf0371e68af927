// Inputs that broke the server before its input limits, shared by the unit, integration and fuzz
// tests: each is what a client can send in one request.

/** A grammar of `depth` nested groups: 60,000 levels (120 KB) crashed the engine's grammar parser. */
export function nestedGrammar(depth = 60_000): string {
  return `root ::= ${'('.repeat(depth)}"a"${')'.repeat(depth)}`;
}

/** A grammar of `count` alternatives: 200,000 (2 MB) held its request for minutes. */
export function alternativesGrammar(count = 200_000): string {
  return `root ::= ${Array.from({ length: count }, (_, i) => `"w${i}"`).join(' | ')}`;
}

/**
 * A JSON schema of objects nested `depth` levels (3,000 overflowed the schema checker's stack), as
 * JSON text: JSON.stringify itself overflows on such a value, so a client sends it as written.
 */
export function deepSchemaJson(depth = 3000): string {
  const open = '{"type":"object","properties":{"a":';
  return `${open.repeat(depth)}{"type":"string"}${'}}'.repeat(depth)}`;
}

/** deepSchemaJson parsed, as the HTTP layer parses it (JSON.parse does not recurse). */
export function deepSchema(depth = 3000): Record<string, unknown> {
  return JSON.parse(deepSchemaJson(depth)) as Record<string, unknown>;
}

/** A request body (JSON text) with `schema` (JSON text) in place of the string "$SCHEMA". */
export function bodyWithSchema(body: Record<string, unknown>, schema: string): string {
  return JSON.stringify(body).replace('"$SCHEMA"', () => schema);
}
