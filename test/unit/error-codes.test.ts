// The table of error codes (contract/error-codes.ts) is the one source of the server's errors:
// every code in it is thrown somewhere, every error is made from it, and what it says of each
// code (status, type, data fields) is what leaves on the wire.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, errorStatus, errorType, isErrorCode, type ErrorCode, type ErrorSpec } from '../../contract/error-codes.js';
import { apiError, type ApiError } from '../../backend/validation/errors.js';

const root = resolve(import.meta.dirname, '../..');
const ERRORS = 'backend/validation/errors.ts';

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (statSync(join(root, rel)).isDirectory()) return sources(rel);
    return rel.endsWith('.ts') && !rel.endsWith('.d.ts') ? [rel] : [];
  });
}
const serverFiles = sources('backend').map((f) => ({ file: f, text: readFileSync(join(root, f), 'utf8') }));
const codes = Object.keys(ERROR_CODES) as ErrorCode[];

describe('the table of error codes', () => {
  it('holds snake_case codes with an HTTP error status and a line for the docs each', () => {
    for (const code of codes) {
      const spec: ErrorSpec = ERROR_CODES[code];
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(Number.isInteger(spec.status) && spec.status >= 400 && spec.status <= 599, code).toBe(true);
      expect(spec.when.length, code).toBeGreaterThan(10);
      if (spec.type === 'server_error' || errorType(code) === 'server_error') expect(spec.status, code).toBeGreaterThanOrEqual(500);
    }
    expect(isErrorCode('context_length_exceeded')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
  });

  it('has every code thrown by the server (a code no source names is dead)', () => {
    const unused = codes.filter((code) => !serverFiles.some(({ text }) => text.includes(`'${code}'`)));
    expect(unused).toEqual([]);
  });

  it('is where every error comes from: no ApiError is made outside apiError()', () => {
    const made = serverFiles.filter(({ file, text }) => file !== ERRORS && /new ApiError\s*\(/.test(text)).map(({ file }) => file);
    expect(made).toEqual([]);
    // No route answers an error body by hand either: every {"error": …} leaves through ApiError.toJSON.
    const byHand = serverFiles.filter(({ text }) => /\berror:\s*\{\s*message:/.test(text)).map(({ file }) => relative(root, join(root, file)));
    expect(byHand).toEqual([ERRORS]);
  });

  it("answers each code with its row's status, type and data fields", () => {
    // Untyped on purpose: the loop gives every code the data fields its row names.
    const make = apiError as (code: ErrorCode, message: string, opts: object) => ApiError;
    for (const code of codes) {
      const fields = Object.fromEntries(((ERROR_CODES[code] as ErrorSpec).fields ?? []).map((f, i) => [f, i + 1]));
      const e = make(code, 'x', { param: 'p', ...fields });
      expect(e.status, code).toBe(errorStatus(code));
      expect(e.toJSON().error, code).toEqual({ message: 'x', type: errorType(code), code, param: 'p', ...fields });
    }
  });

  it('names the same data fields as the wire type of a context overflow (llama-server\'s names)', () => {
    expect(ERROR_CODES.context_length_exceeded.fields).toEqual(['n_prompt_tokens', 'n_ctx']);
    expect(codes.filter((c) => (ERROR_CODES[c] as ErrorSpec).fields !== undefined)).toEqual(['context_length_exceeded']);
  });
});
