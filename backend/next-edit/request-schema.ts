// POST /v1/edits/next's body (contract/next-edit.ts NextEditRequest) checked field by field: a bad
// one is a 400 that names it, and nothing else happens. Unknown fields are ignored, as elsewhere.
import { NEXT_EDIT_FORMATS, type NextEditEvent, type NextEditRequest, type NextEditSnippet } from '../../contract/next-edit.js';
import {
  checkArray, checkEnum, checkNumber, checkString, fail, field, get, optBool, optNumber, optString, requireObject, reqString,
} from '../validation/validate.js';

const MAX_EDITS = 64;
const MAX_CONTEXT = 32;

function list<T>(obj: Record<string, unknown>, key: string, max: number, item: (o: Record<string, unknown>, path: string) => T): T[] | undefined {
  const v = get(obj, key);
  if (v === undefined) return undefined;
  const a = checkArray(v, key);
  if (a.length > max) fail(key, `at most ${max} entries, got ${a.length}`);
  return a.map((x, i) => item(requireObject(x, field(key, i)), field(key, i)));
}

export function parseNextEditRequest(body: unknown): NextEditRequest {
  const obj = requireObject(body, '');
  const region = reqString(obj, 'region', '');
  const cursorRaw = get(obj, 'cursor');
  const cursor = cursorRaw === undefined ? null : checkNumber(cursorRaw, 'cursor', { integer: true, min: 0, max: region.length });
  const format = get(obj, 'format');
  const edits = list<NextEditEvent>(obj, 'edits', MAX_EDITS, (o, p) => ({ file: reqString(o, 'file', p), diff: reqString(o, 'diff', p) }));
  const context = list<NextEditSnippet>(obj, 'context', MAX_CONTEXT, (o, p) => ({ file: reqString(o, 'file', p), text: reqString(o, 'text', p) }));
  const model = optString(obj, 'model', '');
  const language = optString(obj, 'language', '');
  const before = optString(obj, 'before', '');
  const after = optString(obj, 'after', '');
  const startOfFile = optBool(obj, 'start_of_file', '');
  const maxTokens = optNumber(obj, 'max_tokens', '', { integer: true, min: 1 });
  const temperature = optNumber(obj, 'temperature', '', { min: 0, max: 2 });
  const key = get(obj, 'supersede_key');
  return {
    file: reqString(obj, 'file', '', { nonEmpty: true }),
    region,
    cursor,
    ...(model !== undefined ? { model } : {}),
    ...(language !== undefined ? { language } : {}),
    ...(before !== undefined ? { before } : {}),
    ...(after !== undefined ? { after } : {}),
    ...(startOfFile !== undefined ? { start_of_file: startOfFile } : {}),
    ...(edits ? { edits } : {}),
    ...(context ? { context } : {}),
    format: format === undefined ? 'auto' : checkEnum(format, 'format', [...NEXT_EDIT_FORMATS, 'auto'] as const),
    ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(key !== undefined ? { supersede_key: checkString(key, 'supersede_key', { nonEmpty: true, maxLength: 2048 }) } : {}),
  };
}
