// Validation of what shapes a generation's output beyond sampling: response_format (JSON object,
// JSON schema), llama-server's grammar / json_schema fields, log-probabilities, n choices and the
// speculative draft length. Parsed JSON in, typed options out, or ApiError 400 naming the field.
import {
  checkNumber, checkString, fail, get, isRecord, optBool, optNumber, requireObject, typeName, type Json,
} from './validate.js';
import { checkGrammarLimits, checkSchemaLimits } from './grammar-limits.js';

/** What constrains the output (each leaves as a grammar for the engine). */
export type OutputConstraint =
  | { kind: 'json_schema'; schema: Record<string, unknown>; name: string | null; strict: boolean; param: string }
  | { kind: 'gbnf'; grammar: string; param: string };

/** The largest top_logprobs OpenAI allows on chat (and what the engine is asked for at most). */
export const MAX_TOP_LOGPROBS = 20;

/** Chat's response_format, or llama-server's json_schema / grammar fields; null when the output is free. */
export function parseOutputConstraint(obj: Json, allowResponseFormat: boolean): OutputConstraint | null {
  const found: OutputConstraint[] = [];
  const format = get(obj, 'response_format');
  if (format !== undefined) {
    if (!allowResponseFormat) fail('response_format', 'is a chat completions field; use json_schema or grammar here', 'unsupported_value');
    const f = requireObject(format, 'response_format');
    const type = get(f, 'type');
    if (type === 'json_object') {
      // OpenAI's JSON mode: an object; a schema given beside it (llama-server) narrows it.
      const schema = get(f, 'schema');
      found.push({ kind: 'json_schema', schema: schema === undefined ? { type: 'object' } : requireObject(schema, 'response_format.schema'), name: null, strict: true, param: schema === undefined ? 'response_format' : 'response_format.schema' });
    } else if (type === 'json_schema') {
      const js = requireObject(get(f, 'json_schema'), 'response_format.json_schema');
      const name = get(js, 'name');
      if (name !== undefined) {
        const n = checkString(name, 'response_format.json_schema.name', { nonEmpty: true, maxLength: 64 });
        if (!/^[A-Za-z0-9_-]+$/.test(n)) fail('response_format.json_schema.name', 'may contain only a-z, A-Z, 0-9, _ and -');
      }
      const schema = get(js, 'schema');
      if (schema === undefined) fail('response_format.json_schema.schema', 'is required', 'missing_required_parameter');
      found.push({
        kind: 'json_schema', schema: requireObject(schema, 'response_format.json_schema.schema'),
        name: typeof name === 'string' ? name : null, strict: optBool(js, 'strict', 'response_format.json_schema') ?? false,
        param: 'response_format.json_schema.schema',
      });
    } else if (type !== 'text') {
      const got = typeof type === 'string' ? JSON.stringify(type) : typeName(type);
      fail('response_format.type', `must be one of text, json_object, json_schema, got ${got}`);
    }
  }
  const jsonSchema = get(obj, 'json_schema');
  if (jsonSchema !== undefined) {
    found.push({ kind: 'json_schema', schema: requireObject(jsonSchema, 'json_schema'), name: null, strict: true, param: 'json_schema' });
  }
  const grammar = get(obj, 'grammar');
  if (grammar !== undefined) {
    const g = checkString(grammar, 'grammar');
    if (g.trim() !== '') found.push({ kind: 'gbnf', grammar: g, param: 'grammar' });
  }
  if (found.length > 1) fail(found[1]!.param.split('.')[0]!, `give only one of response_format, json_schema and grammar`);
  const constraint = found[0] ?? null;
  if (constraint?.kind === 'json_schema') checkSchemaLimits(constraint.schema, constraint.param);
  if (constraint?.kind === 'gbnf') checkGrammarLimits(constraint.grammar, constraint.param);
  return constraint;
}

/** Chat: logprobs (boolean) and top_logprobs (0..20, needs logprobs) -> the engine's count, or null. */
export function parseChatLogprobs(obj: Json): number | null {
  const on = optBool(obj, 'logprobs', '') ?? false;
  const top = optNumber(obj, 'top_logprobs', '', { integer: true, min: 0, max: MAX_TOP_LOGPROBS });
  if (top !== undefined && top > 0 && !on) fail('top_logprobs', 'needs logprobs: true');
  return on ? top ?? 0 : null;
}

/** Completions: logprobs N (0..20): the chosen tokens' and the N most likely at each position. */
export function parseCompletionLogprobs(obj: Json): number | null {
  const v = get(obj, 'logprobs');
  if (v === undefined || v === false) return null;
  if (v === true) return 0;
  return checkNumber(v, 'logprobs', { integer: true, min: 0, max: MAX_TOP_LOGPROBS });
}

/** n (choices): at least 1; the route checks it against the slots. */
export function parseChoices(obj: Json): number {
  return optNumber(obj, 'n', '', { integer: true, min: 1, max: 256 }) ?? 1;
}

/** speculative: {n_max} (llama-server's speculative.n_max): draft tokens per step, 0 = off; null = the server's. */
export function parseDraftMax(obj: Json): number | null {
  const flat = get(obj, 'speculative.n_max');
  if (flat !== undefined) return checkNumber(flat, 'speculative.n_max', { integer: true, min: 0, max: 256 });
  const spec = get(obj, 'speculative');
  if (spec === undefined) return null;
  if (!isRecord(spec)) fail('speculative', `must be an object such as {"n_max": 8}, got ${typeName(spec)}`);
  return optNumber(spec, 'n_max', 'speculative', { integer: true, min: 0, max: 256 }) ?? null;
}

