// The runtime check at the extension's edge: a Strata server's JSON is read only through the
// contract's schemas (zod/mini: the small, tree-shaken build of zod), so a field the server
// renamed or dropped is an error that names it ("GET /metrics: live.admitting: expected number,
// got undefined"), never a figure that silently shows 0. Each schema is annotated with the
// contract's own interface (z.ZodMiniType<Interface>), so a schema that forgets or mistypes a
// field does not compile either.
import type * as z from 'zod/mini';

export class ContractError extends Error {
  override readonly name = 'ContractError';
}

type Issue = z.core.$ZodIssue;

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : v === undefined ? 'undefined' : `${typeof v} ${JSON.stringify(v)?.slice(0, 40)}`;
}

// zod/mini carries no message texts (its locales are left out to stay small): say it here.
function describe(issue: Issue, raw: unknown): string {
  const got = kindOf(valueAt(raw, issue.path));
  switch (issue.code) {
    case 'invalid_type': return `expected ${issue.expected === 'nonoptional' ? 'a value' : issue.expected}, got ${got}`;
    case 'invalid_value': return `expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}, got ${got}`;
    case 'invalid_union': return `matches none of its allowed shapes (got ${got})`;
    default: return `${issue.code.replace(/_/g, ' ')} (got ${got})`;
  }
}

/** `raw` as the contract's type, or a ContractError naming `what` (the route) and the first wrong fields. */
export function checkBody<T>(schema: z.ZodMiniType<T>, raw: unknown, what: string): T {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const all = r.error.issues;
  const issues = all.slice(0, 3).map((i) => `${i.path.length ? i.path.join('.') : '(body)'}: ${describe(i, raw)}`);
  const more = all.length > 3 ? ` (and ${all.length - 3} more)` : '';
  throw new ContractError(`${what}: the server's answer does not match this extension's contract: ${issues.join('; ')}${more}`);
}
