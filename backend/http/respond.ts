// JSON answers and errors. Every error leaves as {"error": {message, type, code, param}}.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../validation/errors.js';
import { parseJsonBody } from '../validation/schemas.js';
import { BodyTooLarge, readBody } from './body.js';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) { res.end(); return; }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, text: string, contentType: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError, headers: Record<string, string> = {}): void {
  if (err.status === 503 && !headers['Retry-After']) headers = { ...headers, 'Retry-After': '1' };
  sendJson(res, err.status, err.toJSON(), headers);
}

/** Bodies read before their route ran (model routing reads `model` first): the route reads the same value. */
const readAlready = new WeakMap<IncomingMessage, Promise<unknown>>();

/** Reads and parses a JSON body: 413 over the limit, 415 not JSON, 400 malformed. Read once per request. */
export function readJson(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  let body = readAlready.get(req);
  if (!body) {
    body = readJsonOnce(req, limitBytes);
    readAlready.set(req, body);
  }
  return body;
}

async function readJsonOnce(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  let raw: Buffer;
  try {
    raw = await readBody(req, limitBytes);
  } catch (e) {
    if (e instanceof BodyTooLarge) {
      throw new ApiError(413, `request body is larger than the limit of ${limitBytes} bytes (--body-limit-mib)`, { code: 'request_too_large' });
    }
    throw new ApiError(400, (e as Error).message, { code: 'invalid_body' });
  }
  return parseJsonBody(raw, req.headers['content-type'], limitBytes);
}
