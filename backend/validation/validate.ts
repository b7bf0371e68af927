// Small readers for parsed JSON that throw ApiError 400 naming the field (`messages[2].role: ...`).
// A null value counts as absent: OpenAI clients send `"stop": null` for "not set".
import { apiError, type ErrorCode } from './errors.js';
import { MAX_JSON_DEPTH } from './limits.js';

export type Json = Record<string, unknown>;

export function fail(path: string, message: string, code: ErrorCode = 'invalid_value'): never {
  throw apiError(code, path ? `${path}: ${message}` : message, { param: path || undefined });
}

export function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function field(prefix: string, key: string | number): string {
  if (typeof key === 'number') return `${prefix}[${key}]`;
  return prefix ? `${prefix}.${key}` : key;
}

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

function requirePresent(v: unknown, path: string): void {
  if (v === undefined && path) fail(path, 'is required', 'missing_required_parameter');
}

export function requireObject(v: unknown, path: string): Json {
  requirePresent(v, path);
  if (!isRecord(v)) {
    if (!path) throw apiError('invalid_value', `request body: must be a JSON object, got ${typeName(v)}`);
    fail(path, `must be a JSON object, got ${typeName(v)}`);
  }
  return v;
}

/** The value at key, undefined when missing or null. */
export function get(obj: Json, key: string): unknown {
  const v = obj[key];
  return v === null ? undefined : v;
}

export interface NumberRange {
  min?: number;
  max?: number;
  /** min itself is not allowed. */
  minExclusive?: boolean;
  integer?: boolean;
}

function rangeText(r: NumberRange): string {
  const lo = r.min === undefined ? '' : r.minExclusive ? `greater than ${r.min}` : `at least ${r.min}`;
  if (r.min !== undefined && r.max !== undefined && !r.minExclusive) return `between ${r.min} and ${r.max}`;
  if (r.max === undefined) return lo;
  return lo ? `${lo} and at most ${r.max}` : `at most ${r.max}`;
}

export function checkNumber(v: unknown, path: string, r: NumberRange = {}): number {
  requirePresent(v, path);
  if (typeof v !== 'number') fail(path, `must be a number, got ${typeName(v)}`);
  const want = rangeText(r) || 'a finite number';
  // JSON numbers past double range (1e400) parse as ±Infinity: say so instead of "got a number".
  if (!Number.isFinite(v)) fail(path, `must be ${want}, got a number too ${v > 0 ? 'large' : 'small'} to represent`);
  if (r.integer && !Number.isInteger(v)) fail(path, `must be an integer, got ${v}`);
  if (r.integer && !Number.isSafeInteger(v)) {
    // Past 2^53 integers are no longer exact; the value is really "too large".
    fail(path, `must be an integer ${v > 0 ? 'of at most ' : 'of at least -'}${Number.MAX_SAFE_INTEGER}, got ${v}`);
  }
  const low = r.min !== undefined && (r.minExclusive ? v <= r.min : v < r.min);
  const high = r.max !== undefined && v > r.max;
  if (low || high) fail(path, `must be ${rangeText(r)}, got ${v}`);
  return v;
}

export function optNumber(obj: Json, key: string, prefix: string, r: NumberRange = {}): number | undefined {
  const v = get(obj, key);
  return v === undefined ? undefined : checkNumber(v, field(prefix, key), r);
}

export function checkString(v: unknown, path: string, opts: { nonEmpty?: boolean; maxLength?: number } = {}): string {
  requirePresent(v, path);
  if (typeof v !== 'string') fail(path, `must be a string, got ${typeName(v)}`);
  if (opts.nonEmpty && v === '') fail(path, 'must not be empty');
  if (opts.maxLength !== undefined && v.length > opts.maxLength) fail(path, `must be at most ${opts.maxLength} characters`);
  return v;
}

export function optString(obj: Json, key: string, prefix: string, opts: { nonEmpty?: boolean } = {}): string | undefined {
  const v = get(obj, key);
  return v === undefined ? undefined : checkString(v, field(prefix, key), opts);
}

export function reqString(obj: Json, key: string, prefix: string, opts: { nonEmpty?: boolean } = {}): string {
  const v = get(obj, key);
  if (v === undefined) fail(field(prefix, key), 'is required', 'missing_required_parameter');
  return checkString(v, field(prefix, key), opts);
}

export function optBool(obj: Json, key: string, prefix: string): boolean | undefined {
  const v = get(obj, key);
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') fail(field(prefix, key), `must be true or false, got ${typeName(v)}`);
  return v;
}

export function checkArray(v: unknown, path: string): unknown[] {
  requirePresent(v, path);
  if (!Array.isArray(v)) fail(path, `must be an array, got ${typeName(v)}`);
  return v;
}

export function checkEnum<T extends string>(v: unknown, path: string, allowed: readonly T[]): T {
  requirePresent(v, path);
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    fail(path, `must be one of ${allowed.join(', ')}`);
  }
  return v as T;
}

/**
 * Refuses JSON nested deeper than `max` levels. Iterative, so a 10,000-deep value is a 400 here
 * rather than a stack overflow later (JSON.stringify, the template engine and our own printers recurse).
 */
export function checkDepth(v: unknown, path: string, max = MAX_JSON_DEPTH): void {
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > max) fail(path, `is nested more than ${max} levels deep`, 'too_deep');
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
}
