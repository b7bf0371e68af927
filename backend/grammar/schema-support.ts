// Which JSON Schema keywords llama.cpp's json-schema-to-grammar turns into grammar rules. A schema
// keyword it would skip is not enforced: the output could then break the schema, so such a schema
// is refused (400 naming the keyword and where it is) instead of being half-applied.
import { apiError } from '../validation/errors.js';

type Json = Record<string, unknown>;

/** Enforced by the converter (see common/json-schema-to-grammar.cpp in the pinned llama.cpp). */
const STRUCTURAL = new Set([
  'type', 'const', 'enum', 'properties', 'required', 'additionalProperties', 'items', 'prefixItems',
  'minItems', 'maxItems', 'anyOf', 'oneOf', 'allOf', 'pattern', 'format', 'minLength', 'maxLength',
  '$ref', '$defs', 'definitions',
  // integers only (checked below)
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
]);
/** Annotations: they say nothing about which values are valid. */
const ANNOTATIONS = new Set([
  'title', 'description', 'default', 'examples', 'example', '$schema', '$id', '$comment', 'readOnly', 'writeOnly',
  'deprecated', 'nullable', 'discriminator',
]);
/** String formats the converter has rules for. */
const FORMATS = /^(date|time|date-time|uuid[1-5]?)$/;
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];

export class UnsupportedSchemaError extends Error {}

/**
 * Throws UnsupportedSchemaError naming the first keyword (with its JSON path, e.g.
 * `properties.age.multipleOf`) that the grammar converter would not enforce.
 */
export function checkSchemaSupport(schema: unknown, path = ''): void {
  if (typeof schema === 'boolean') return;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new UnsupportedSchemaError(`${path || 'the schema'} must be a JSON schema object`);
  }
  const s = schema as Json;
  const at = (k: string) => (path ? `${path}.${k}` : k);
  for (const key of Object.keys(s)) {
    if (ANNOTATIONS.has(key)) continue;
    if (!STRUCTURAL.has(key)) throw new UnsupportedSchemaError(`${at(key)}: the keyword '${key}' cannot be enforced by the grammar`);
  }
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
  for (const b of BOUNDS) {
    if (s[b] !== undefined && !(types.length === 1 && types[0] === 'integer')) {
      throw new UnsupportedSchemaError(`${at(b)}: '${b}' is enforced only on {"type": "integer"} (the grammar cannot bound other numbers)`);
    }
  }
  if (s.format !== undefined && !(typeof s.format === 'string' && FORMATS.test(s.format))) {
    throw new UnsupportedSchemaError(`${at('format')}: the format ${JSON.stringify(s.format)} cannot be enforced (date, time, date-time and uuid can)`);
  }
  if (typeof s.$ref === 'string' && !s.$ref.startsWith('#')) {
    throw new UnsupportedSchemaError(`${at('$ref')}: only local references (#/...) are resolved, not ${JSON.stringify(s.$ref)}`);
  }
  for (const key of ['properties', '$defs', 'definitions']) {
    const map = s[key];
    if (map === undefined) continue;
    if (typeof map !== 'object' || map === null || Array.isArray(map)) throw new UnsupportedSchemaError(`${at(key)} must be an object of schemas`);
    for (const [name, sub] of Object.entries(map)) checkSchemaSupport(sub, `${at(key)}.${name}`);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    const list = s[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new UnsupportedSchemaError(`${at(key)} must be an array of schemas`);
    list.forEach((sub, i) => checkSchemaSupport(sub, `${at(key)}[${i}]`));
  }
  if (Array.isArray(s.items)) s.items.forEach((sub, i) => checkSchemaSupport(sub, `${at('items')}[${i}]`));
  else if (s.items !== undefined) checkSchemaSupport(s.items, at('items'));
  if (s.additionalProperties !== undefined && typeof s.additionalProperties !== 'boolean') {
    checkSchemaSupport(s.additionalProperties, at('additionalProperties'));
  }
}

/** checkSchemaSupport as a 400 on `param` (the request field holding the schema). */
export function requireSupportedSchema(schema: unknown, param: string): void {
  try {
    checkSchemaSupport(schema);
  } catch (e) {
    if (e instanceof UnsupportedSchemaError) {
      throw apiError('unsupported_schema', `${param}: ${e.message}`, { param });
    }
    throw e;
  }
}
