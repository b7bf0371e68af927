// POST /v1/embeddings request (OpenAI's shape): input as a string, strings, token ids or arrays of
// token ids; encoding_format float or base64; dimensions; model and user are informational.
import { checkArray, checkNumber, checkString, fail, field, get, optNumber, optString, requireObject, typeName } from './validate.js';

export interface EmbeddingsRequest {
  model: string | null;
  /** Texts to tokenize, or token ids as given. */
  inputs: Array<string | number[]>;
  encodingFormat: 'float' | 'base64';
  dimensions: number | null;
}

/** OpenAI's limit on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

function tokenIds(v: unknown[], path: string): number[] {
  if (v.length === 0) fail(path, 'must not be empty');
  return v.map((t, i) => checkNumber(t, field(path, i), { integer: true, min: 0 }));
}

export function parseEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  const obj = requireObject(body, '');
  const raw = get(obj, 'input');
  if (raw === undefined) fail('input', 'is required', 'missing_required_parameter');
  let inputs: Array<string | number[]>;
  if (typeof raw === 'string') {
    inputs = [raw];
  } else if (Array.isArray(raw) && raw.length > 0 && raw.every((x) => typeof x === 'number')) {
    inputs = [tokenIds(raw, 'input')];
  } else if (Array.isArray(raw)) {
    const list = checkArray(raw, 'input');
    if (list.length === 0) fail('input', 'must not be empty');
    inputs = list.map((x, i) => {
      if (typeof x === 'string') return x;
      if (Array.isArray(x)) return tokenIds(x, field('input', i));
      return fail(field('input', i), `must be a string or an array of token ids, got ${typeName(x)}`);
    });
  } else {
    fail('input', `must be a string, an array of strings, or token ids, got ${typeName(raw)}`);
  }
  if (inputs.length > MAX_EMBEDDING_INPUTS) fail('input', `at most ${MAX_EMBEDDING_INPUTS} inputs per request, got ${inputs.length}`);
  inputs.forEach((x, i) => { if (x === '') fail(inputs.length === 1 && typeof raw === 'string' ? 'input' : field('input', i), 'must not be an empty string'); });
  const format = get(obj, 'encoding_format');
  let encodingFormat: 'float' | 'base64' = 'float';
  if (format !== undefined) {
    const f = checkString(format, 'encoding_format');
    if (f !== 'float' && f !== 'base64') fail('encoding_format', `must be float or base64, got ${JSON.stringify(f)}`);
    encodingFormat = f;
  }
  return {
    model: optString(obj, 'model', '') ?? null,
    inputs,
    encodingFormat,
    dimensions: optNumber(obj, 'dimensions', '', { integer: true, min: 1 }) ?? null,
  };
}
