// The part of JSON Schema tool parameters use (type, properties, required, items, enum,
// minimum/maximum, additionalProperties: false), checked before a tool runs so that a malformed
// call goes back to the model as an error naming the field. Unknown keywords are ignored.

export interface JsonSchema {
  type?: 'object' | 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'null' | Array<string>;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minItems?: number;
  additionalProperties?: boolean | JsonSchema;
  [key: string]: unknown;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(want: string, got: string): boolean {
  return want === got || (want === 'number' && got === 'integer');
}

/** The first problem of `value` against `schema` ("path: must be a string"), or null. */
export function schemaProblem(schema: JsonSchema, value: unknown, at = 'arguments'): string | null {
  const got = typeOf(value);
  if (schema.type !== undefined) {
    const wants = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!wants.some((w) => typeMatches(w, got))) return `${at}: must be ${wants.join(' or ')}, got ${got}`;
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    return `${at}: must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `${at}: must be at least ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${at}: must be at most ${schema.maximum}`;
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) return `${at}: needs at least ${schema.minItems} item(s)`;
    if (schema.items) {
      for (let i = 0; i < value.length; i++) {
        const p = schemaProblem(schema.items, value[i], `${at}[${i}]`);
        if (p) return p;
      }
    }
  }
  if (got === 'object') {
    const o = value as Record<string, unknown>;
    for (const r of schema.required ?? []) if (o[r] === undefined) return `${at}.${r}: is required`;
    for (const [k, v] of Object.entries(o)) {
      const sub = schema.properties?.[k];
      if (sub) {
        const p = schemaProblem(sub, v, `${at}.${k}`);
        if (p) return p;
      } else if (schema.additionalProperties === false) {
        return `${at}.${k}: is not a parameter of this tool`;
      } else if (typeof schema.additionalProperties === 'object') {
        const p = schemaProblem(schema.additionalProperties, v, `${at}.${k}`);
        if (p) return p;
      }
    }
  }
  return null;
}
