import { describe, expect, it } from 'vitest';
import { ApiError } from '../../backend/validation/errors.js';
import { parseJsonBody } from '../../backend/validation/schemas.js';

function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

describe('parseJsonBody', () => {
  const body = (s: string) => Buffer.from(s, 'utf8');

  it('parses JSON with a JSON content type, a charset, a +json type, a BOM, or no content type', () => {
    expect(parseJsonBody(body('{"a": [1, "é"]}'), 'application/json', 1000)).toEqual({ a: [1, 'é'] });
    expect(parseJsonBody(body('{"a":1}'), 'Application/JSON; charset=UTF-8', 1000)).toEqual({ a: 1 });
    expect(parseJsonBody(body('[1]'), 'application/vnd.api+json', 1000)).toEqual([1]);
    expect(parseJsonBody(body('\uFEFF{"a":1}'), 'application/json', 1000)).toEqual({ a: 1 });
    expect(parseJsonBody(body('{"a":1}'), undefined, 1000)).toEqual({ a: 1 });
  });

  it('answers 415 for a content type that is not JSON', () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', 'application/json; charset=latin1']) {
      const e = failure(() => parseJsonBody(body('{}'), type, 1000));
      expect(e.status).toBe(415);
      expect(e.message).toMatch(/^Content-Type (charset )?must be/);
    }
  });

  it('answers 413 over the limit, naming both sizes', () => {
    const e = failure(() => parseJsonBody(body('{"a":"0123456789"}'), 'application/json', 10));
    expect([e.status, e.message]).toEqual([413, 'request body is 18 bytes; the limit is 10 bytes']);
    expect(parseJsonBody(body('{"a":"0123456789"}'), 'application/json', 18)).toEqual({ a: '0123456789' });
  });

  it("answers 400 'malformed JSON: <detail>' for bad JSON, an empty body or bad UTF-8", () => {
    const bad = failure(() => parseJsonBody(body('{"a": }'), 'application/json', 1000));
    expect(bad.status).toBe(400);
    expect(bad.message).toMatch(/^malformed JSON: .+/);
    expect(bad.toJSON().error.type).toBe('invalid_request_error');
    expect(failure(() => parseJsonBody(body('  '), 'application/json', 1000)).message).toBe('malformed JSON: the body is empty');
    expect(failure(() => parseJsonBody(Buffer.from([0x7b, 0xff, 0x7d]), 'application/json', 1000)).message)
      .toBe('malformed JSON: the body is not valid UTF-8');
  });
});
