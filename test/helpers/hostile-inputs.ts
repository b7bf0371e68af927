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
 * A JSON schema of objects nested `depth` levels (3,000 overflowed the schema checker's stack).
 * Built by JSON.parse, which does not recurse, as the HTTP layer builds it.
 */
export function deepSchema(depth = 3000): Record<string, unknown> {
  const open = '{"type":"object","properties":{"a":';
  return JSON.parse(`${open.repeat(depth)}{"type":"string"}${'}}'.repeat(depth)}`) as Record<string, unknown>;
}
